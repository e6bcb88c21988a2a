using System;
using System.Threading;
using System.Threading.Tasks;
using StackExchange.Redis;

namespace NetServer.Redis;

/// <summary>A message a node published to this node or to all (<see cref="RedisBackplane.NodeFrameReceived"/>); valid only during the call.</summary>
internal delegate void NodeFrameHandler(Guid node, ReadOnlySpan<byte> payload);

// Messages between nodes rather than to sessions, for RedisRelayBackplane: frames of kind Node on
// their own channel, {prefix}:nodes, subscribed only when a handler is set. Like every channel of
// the backplane it is read through one ordered queue: a relay's registry and the envelopes of one
// peer must arrive in the order its node published them. The publish path (one frame per send, the in-flight bound, the failure
// counters and PublishFailed) is the backplane's own.
public sealed partial class RedisBackplane
{
    private RedisChannel NodeChannel => RedisChannel.Literal(_options.Prefix + ":nodes");

    /// <summary>Set before <see cref="StartAsync"/>: receives the Node frames other nodes address to this node or to all, in their publish order.</summary>
    internal NodeFrameHandler? NodeFrameReceived { get; set; }

    /// <summary>Frames on the node channel that were not for this node, or malformed (skipped).</summary>
    internal long NodeFramesSkipped => Interlocked.Read(ref _nodeFramesSkipped);

    private long _nodeFramesSkipped;

    /// <summary>Publishes <paramref name="payload"/> to node <paramref name="node"/>, or to every other node when it is <see cref="Guid.Empty"/>; copied before this returns.</summary>
    internal Task<bool> PublishToNodeAsync(Guid node, ReadOnlySpan<byte> payload) =>
        PublishAsync(NodeChannel, FrameKind.Node, node, null, payload);

    /// <summary>For tests: the connection drops without a goodbye, as when the node dies or loses Redis.</summary>
    internal void DropConnectionForTest()
    {
        _presenceTimer?.Dispose();
        var redis = _redis;
        _redis = null;
        redis?.Dispose();
    }

    private void OnNodeFrame(RedisValue value)
    {
        ReadOnlyMemory<byte> bytes = value;
        if (!BackplaneFrame.TryRead(bytes.Span, out var kind, out var node, out var target, out _, out var payload) || kind != FrameKind.Node)
        {
            Interlocked.Increment(ref _nodeFramesSkipped);
            return;
        }

        if (node == NodeId)
            return; // this node's own publish
        if (target != Guid.Empty && target != NodeId)
        {
            Interlocked.Increment(ref _nodeFramesSkipped);
            return;
        }

        Interlocked.Increment(ref _received);
        NodeFrameReceived?.Invoke(node, payload);
    }
}
