using System;
using System.Threading;
using System.Threading.Tasks;
using StackExchange.Redis;

namespace NetServer.Redis;

/// <summary>A message a node published to this node or to all (<see cref="RedisBackplane.NodeFrameReceived"/>); valid only during the call.</summary>
internal delegate void NodeFrameHandler(Guid node, ReadOnlySpan<byte> payload);

// Messages between nodes rather than to sessions, for RedisRelayBackplane: frames of kind Node (or
// NodeControl, the cluster's upkeep) on their own channel, {prefix}:nodes, subscribed only when a handler is set. Like every channel of
// the backplane it is read through one ordered queue: a relay's registry and the envelopes of one
// peer must arrive in the order its node published them. The publish path (one frame per send, the in-flight bound, the failure
// counters and PublishFailed) is the backplane's own.
public sealed partial class RedisBackplane
{
    private RedisChannel NodeChannel => RedisChannel.Literal(_options.Prefix + ":nodes");

    /// <summary>Set before <see cref="StartAsync"/>: receives the Node frames other nodes address to this node or to all, in their publish order.</summary>
    internal NodeFrameHandler? NodeFrameReceived { get; set; }

    /// <summary>
    /// Shown the Node frames (peer traffic, not control) addressed to this node or to all that were
    /// dropped over <see cref="BackplaneOptions.MaxReceiveBacklog"/>; called as they are dropped, on
    /// another thread than <see cref="NodeFrameReceived"/>, and it must be quick.
    /// </summary>
    internal NodeFrameHandler? NodeFrameDropped { get; set; }

    /// <summary>Frames on the node channel that were not for this node, or malformed (skipped).</summary>
    internal long NodeFramesSkipped => Interlocked.Read(ref _nodeFramesSkipped);

    private long _nodeFramesSkipped;

    /// <summary>
    /// Publishes <paramref name="payload"/> to node <paramref name="node"/>, or to every other node when it is <see cref="Guid.Empty"/>; copied before this returns.
    /// A <paramref name="control"/> frame may use <see cref="ControlPublishReserve"/> publishes beyond <see cref="BackplaneOptions.MaxPendingPublishes"/>, and waits on the receiving node within <see cref="ControlReceiveReserve"/> beyond <see cref="BackplaneOptions.MaxReceiveBacklog"/>.
    /// </summary>
    internal Task<bool> PublishToNodeAsync(Guid node, ReadOnlySpan<byte> payload, bool control) =>
        PublishAsync(NodeChannel, control ? FrameKind.NodeControl : FrameKind.Node, node, null, payload);

    /// <summary>For tests: the connection drops without a goodbye, as when the node dies or loses Redis.</summary>
    internal void DropConnectionForTest()
    {
        _presenceTimer?.Dispose();
        var redis = _redis;
        _redis = null;
        redis?.Dispose();
    }

    /// <summary>
    /// Whether a frame on the node channel is for this node (from another node, to it or to all);
    /// the others are skipped before they take a place in the receive backlog.
    /// </summary>
    private bool IsForThisNode(RedisValue value)
    {
        ReadOnlyMemory<byte> bytes = value;
        if (!BackplaneFrame.TryRead(bytes.Span, out var kind, out var node, out var target, out _, out _) || kind is not (FrameKind.Node or FrameKind.NodeControl))
        {
            Interlocked.Increment(ref _nodeFramesSkipped);
            return false;
        }

        if (node == NodeId)
            return false; // this node's own publish
        if (target != Guid.Empty && target != NodeId)
        {
            Interlocked.Increment(ref _nodeFramesSkipped);
            return false;
        }

        return true;
    }

    private void OnNodeFrame(RedisValue value)
    {
        ReadOnlyMemory<byte> bytes = value;
        if (!BackplaneFrame.TryRead(bytes.Span, out _, out var node, out _, out _, out var payload))
            return; // IsForThisNode took only frames that parse
        Interlocked.Increment(ref _received);
        NodeFrameReceived?.Invoke(node, payload);
    }

    private void OnNodeFrameDropped(RedisValue value)
    {
        ReadOnlyMemory<byte> bytes = value;
        if (BackplaneFrame.TryRead(bytes.Span, out var kind, out var node, out _, out _, out var payload) && kind == FrameKind.Node)
            NodeFrameDropped?.Invoke(node, payload);
    }
}
