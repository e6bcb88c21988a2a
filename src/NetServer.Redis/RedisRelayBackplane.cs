using System;
using System.Threading;
using System.Threading.Tasks;
using NetServer.P2P;

namespace NetServer.Redis;

/// <summary>
/// Joins relays into one cluster through Redis (<see cref="RelayServerOptions.Backplane"/>): the
/// relays' messages to each other travel as frames of a <see cref="RedisBackplane"/> of their own
/// (its connection, fail-fast publishes, in-flight bound, reconnection and presence key), on one
/// channel read in order. One per relay node; start it before the relay.
/// </summary>
/// <example>
/// <code>
/// await using var nodes = new RedisRelayBackplane();
/// await nodes.StartAsync("redis.internal:6379,password=...");
/// using var relay = new RelayServer(context, IPAddress.Any, 7000, new RelayServerOptions { Backplane = nodes });
/// relay.Start();
/// </code>
/// </example>
public sealed class RedisRelayBackplane : IRelayBackplane, IAsyncDisposable
{
    private IRelayNodeReceiver? _receiver;

    /// <summary>A backplane for one relay node; <paramref name="options"/> as for <see cref="RedisBackplane"/> (its prefix names the cluster).</summary>
    public RedisRelayBackplane(BackplaneOptions? options = null)
    {
        Backplane = new RedisBackplane(NoSessions.Instance, options) { NodeFrameReceived = OnFrame, NodeFrameDropped = OnDropped };
    }

    /// <summary>The backplane under it: its counters (<see cref="RedisBackplane.Published"/>, <see cref="RedisBackplane.PublishFailures"/>, <see cref="RedisBackplane.Dropped"/>) and <see cref="RedisBackplane.PublishFailed"/>.</summary>
    public RedisBackplane Backplane { get; }

    /// <inheritdoc />
    public Guid NodeId => Backplane.NodeId;

    /// <inheritdoc />
    public bool IsConnected => Backplane.IsConnected;

    /// <summary>Connects to Redis (a StackExchange.Redis configuration string), as <see cref="RedisBackplane.StartAsync"/>.</summary>
    public Task StartAsync(string configuration) => Backplane.StartAsync(configuration);

    /// <inheritdoc />
    public void Attach(IRelayNodeReceiver receiver)
    {
        ArgumentNullException.ThrowIfNull(receiver);
        if (Interlocked.CompareExchange(ref _receiver, receiver, null) is not null)
            throw new InvalidOperationException("A relay is attached to this backplane already: one backplane per relay node.");
    }

    /// <inheritdoc />
    public void Detach(IRelayNodeReceiver receiver) => Interlocked.CompareExchange(ref _receiver, null, receiver);

    /// <inheritdoc />
    public Task<bool> PublishAsync(Guid node, ReadOnlyMemory<byte> message, RelayNodeTraffic traffic) =>
        Backplane.PublishToNodeAsync(node, message.Span, traffic == RelayNodeTraffic.Control);

    /// <summary>Closes the Redis connection (the relay's Stop, before it, tells the other nodes it leaves).</summary>
    public ValueTask DisposeAsync() => Backplane.DisposeAsync();

    private void OnFrame(Guid node, ReadOnlySpan<byte> payload) => Volatile.Read(ref _receiver)?.OnNodeMessage(node, payload);

    private void OnDropped(Guid node, ReadOnlySpan<byte> payload) => Volatile.Read(ref _receiver)?.OnNodeMessageDropped(node, payload);

    /// <summary>A relay node's backplane carries no session or group sends.</summary>
    private sealed class NoSessions : ILocalDelivery
    {
        public static readonly NoSessions Instance = new();

        public bool SendToSession(Guid sessionId, ReadOnlySpan<byte> message) => false;

        public bool SendToAll(ReadOnlySpan<byte> message) => false;
    }
}
