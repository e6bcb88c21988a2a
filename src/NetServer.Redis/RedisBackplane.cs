using System;
using System.Collections.Generic;
using System.Threading;
using System.Threading.Tasks;
using System.Collections.Concurrent;
using NetServer.Redis.Diagnostics;
using StackExchange.Redis;

namespace NetServer.Redis;

/// <summary>
/// Groups of sessions that span NetServer processes through Redis pub/sub: join/leave, send to a group, to a session
/// on any node, to everyone. A send delivers to this node's sessions at once and is published once on Redis, whatever
/// the number of remote sessions; each other node delivers it to its own sessions through its <see cref="ILocalDelivery"/>.
/// At most once across nodes, in order per sender (docs/scale-out.md).
/// </summary>
public sealed partial class RedisBackplane : IAsyncDisposable
{
    private readonly ILocalDelivery _local;
    private readonly BackplaneOptions _options;
    private readonly ConcurrentDictionary<string, ConcurrentDictionary<Guid, byte>> _groups = new(StringComparer.Ordinal);
    private readonly RedisChannel _allChannel, _groupChannel, _sessionChannel;
    private ConnectionMultiplexer? _redis;
    private Timer? _presenceTimer;
    private readonly KeyValuePair<string, object?>[] _localTags, _remoteTags;
    private long _published, _received, _publishFailures, _framePublishFailures, _dropped, _pending;

    /// <summary>Creates a backplane for one node; call <see cref="StartAsync"/> to connect.</summary>
    public RedisBackplane(ILocalDelivery local, BackplaneOptions? options = null)
    {
        _local = local ?? throw new ArgumentNullException(nameof(local));
        _options = options ?? new BackplaneOptions();
        if (_options.MaxReceiveBacklog < 1)
            throw new ArgumentOutOfRangeException(nameof(options), _options.MaxReceiveBacklog, "BackplaneOptions.MaxReceiveBacklog must be at least 1.");
        if (_options.MaxReceiveBacklogBytes < 1)
            throw new ArgumentOutOfRangeException(nameof(options), _options.MaxReceiveBacklogBytes, "BackplaneOptions.MaxReceiveBacklogBytes must be at least 1.");
        _allChannel = RedisChannel.Literal(_options.Prefix + ":all");
        _groupChannel = RedisChannel.Literal(_options.Prefix + ":group");
        _sessionChannel = RedisChannel.Literal(_options.Prefix + ":session");
        _localTags = BackplaneTelemetry.Tags(NodeId, BackplaneTelemetry.Local);
        _remoteTags = BackplaneTelemetry.Tags(NodeId, BackplaneTelemetry.Remote);
    }

    /// <summary>This node's id, written into every frame it publishes and into its presence key.</summary>
    public Guid NodeId { get; } = Guid.NewGuid();

    /// <summary>True while the Redis connection is up.</summary>
    public bool IsConnected => _redis?.IsConnected ?? false;

    /// <summary>Frames published to Redis (one per send, whatever the number of nodes).</summary>
    public long Published => Interlocked.Read(ref _published);

    /// <summary>Frames from other nodes delivered here.</summary>
    public long Received => Interlocked.Read(ref _received);

    /// <summary>Publishes that failed (Redis down or unreachable); each is also reported by <see cref="PublishFailed"/>.</summary>
    public long PublishFailures => Interlocked.Read(ref _publishFailures);

    /// <summary>Sends dropped because <see cref="BackplaneOptions.MaxPendingPublishes"/> publishes were already in flight.</summary>
    public long Dropped => Interlocked.Read(ref _dropped);

    /// <summary>Raised when a remote send fails; the local part of that send was delivered already. A handler that throws is counted in <see cref="CallbackFailures"/> (the send still returns false).</summary>
    public event Action<Exception>? PublishFailed;

    /// <summary>Frame publishes Redis did not take (the part of <see cref="PublishFailures"/> that is not group or presence updates).</summary>
    internal long FramePublishFailures => Interlocked.Read(ref _framePublishFailures);

    /// <summary>Publishes in flight now.</summary>
    internal long PendingPublishes => Interlocked.Read(ref _pending);

    /// <summary>
    /// Connects to Redis (a StackExchange.Redis configuration string such as "127.0.0.1:6379"), subscribes and starts
    /// the presence key. The connection fails fast while Redis is down (no backlog) and reconnects by itself.
    /// </summary>
    public async Task StartAsync(string configuration)
    {
        var config = ConfigurationOptions.Parse(configuration);
        config.AbortOnConnectFail = false;
        config.BacklogPolicy = BacklogPolicy.FailFast;
        config.ConnectRetry = 1;
        config.ReconnectRetryPolicy = new LinearRetry(500);
        _redis = await ConnectionMultiplexer.ConnectAsync(config).ConfigureAwait(false);
        await WaitForConnectionAsync(_redis, TimeSpan.FromMilliseconds(Math.Max(config.ConnectTimeout, 5000))).ConfigureAwait(false);
        var subscriber = _redis.GetSubscriber();
        await SubscribeInOrderAsync(subscriber, _allChannel, OnFrame).ConfigureAwait(false);
        await SubscribeInOrderAsync(subscriber, _groupChannel, OnFrame).ConfigureAwait(false);
        await SubscribeInOrderAsync(subscriber, _sessionChannel, OnFrame).ConfigureAwait(false);
        if (NodeFrameReceived is not null)
            await SubscribeInOrderAsync(subscriber, NodeChannel, OnNodeFrame, IsForThisNode, OnNodeFrameDropped).ConfigureAwait(false);
        await RefreshPresenceAsync().ConfigureAwait(false);
        _presenceTimer = new Timer(_ => _ = RefreshPresenceAsync(), null, _options.PresenceRefresh, _options.PresenceRefresh);
        BackplaneTelemetry.Add(this);
    }

    /// <summary>
    /// Without AbortOnConnectFail, ConnectAsync may return before the connections are up (a slow
    /// first attempt, retried in the background), and a fail-fast SUBSCRIBE would then fail at once
    /// ("No connection is active"). The subscription connection is a second one that can come up
    /// after the first, so both are waited for, at most <paramref name="timeout"/> (looked at every
    /// 50 ms: a start-up wait, not a hot path); the SUBSCRIBE after it reports a Redis that is really down.
    /// </summary>
    private async Task WaitForConnectionAsync(ConnectionMultiplexer redis, TimeSpan timeout)
    {
        var subscriber = redis.GetSubscriber();
        var started = System.Diagnostics.Stopwatch.GetTimestamp();
        while (!(redis.IsConnected && subscriber.IsConnected(_allChannel)) && System.Diagnostics.Stopwatch.GetElapsedTime(started) < timeout)
            await Task.Delay(50).ConfigureAwait(false);
    }

    /// <summary>Sends to every session of every node.</summary>
    /// <returns>False when the remote part failed (reported by <see cref="PublishFailed"/>); local sessions got it either way.</returns>
    public Task<bool> SendToAllAsync(ReadOnlyMemory<byte> message)
    {
        DeliverToAll(message.Span, _localTags);
        return PublishAsync(_allChannel, FrameKind.All, Guid.Empty, null, message.Span);
    }

    /// <summary>Sends to a session on whichever node holds it: delivered here when it is local, else published once.</summary>
    public Task<bool> SendToSessionAsync(Guid sessionId, ReadOnlyMemory<byte> message)
    {
        if (DeliverToSession(sessionId, message.Span, _localTags))
            return Task.FromResult(true);
        return PublishAsync(_sessionChannel, FrameKind.Session, sessionId, null, message.Span);
    }

    /// <summary>Sends to every member of <paramref name="group"/> on every node.</summary>
    public Task<bool> SendToGroupAsync(string group, ReadOnlyMemory<byte> message)
    {
        ArgumentNullException.ThrowIfNull(group);
        BackplaneFrame.ValidateGroup(group);
        DeliverToGroup(group, message.Span, _localTags);
        return PublishAsync(_groupChannel, FrameKind.Group, Guid.Empty, group, message.Span);
    }

    private Task<bool> PublishAsync(RedisChannel channel, FrameKind kind, Guid session, string? group, ReadOnlySpan<byte> message)
    {
        var redis = _redis ?? throw new InvalidOperationException("The backplane is not started.");
        var frame = BackplaneFrame.Write(kind, NodeId, session, group, message); // before the count: a refused frame must not hold a slot

        // One count, two ceilings: sends stop at MaxPendingPublishes, so the reserve above it is
        // always free for a relay's upkeep, whatever its peers send.
        var limit = kind == FrameKind.NodeControl ? (long)_options.MaxPendingPublishes + ControlPublishReserve : _options.MaxPendingPublishes;
        if (Interlocked.Increment(ref _pending) > limit)
        {
            Interlocked.Decrement(ref _pending);
            Interlocked.Increment(ref _dropped);
            Report(new BackplaneUnavailableException($"Dropped: {limit} publishes already in flight."));
            return Task.FromResult(false);
        }
        return PublishFrameAsync(redis, channel, frame);
    }

    private async Task<bool> PublishFrameAsync(ConnectionMultiplexer redis, RedisChannel channel, byte[] frame)
    {
        try
        {
            await redis.GetSubscriber().PublishAsync(channel, frame).ConfigureAwait(false);
            Interlocked.Increment(ref _published);
            return true;
        }
        catch (Exception e) when (e is RedisException or TimeoutException)
        {
            Interlocked.Increment(ref _publishFailures);
            Interlocked.Increment(ref _framePublishFailures);
            Report(new BackplaneUnavailableException("Redis did not take the message: remote nodes will not get it.", e));
            return false;
        }
        finally
        {
            Interlocked.Decrement(ref _pending);
        }
    }

    private void OnFrame(RedisValue value)
    {
        ReadOnlyMemory<byte> bytes = value;
        if (!BackplaneFrame.TryRead(bytes.Span, out var kind, out var node, out var session, out var group, out var payload) || node == NodeId)
            return;
        Interlocked.Increment(ref _received);
        switch (kind)
        {
            case FrameKind.All: DeliverToAll(payload, _remoteTags); break;
            case FrameKind.Session: DeliverToSession(session, payload, _remoteTags); break;
            case FrameKind.Group: DeliverToGroup(group!, payload, _remoteTags); break;
            default: break; // node frames come on their own channel (RedisBackplane.Nodes.cs)
        }
    }

    private void DeliverToGroup(string group, ReadOnlySpan<byte> message, KeyValuePair<string, object?>[] origin)
    {
        if (!_groups.TryGetValue(group, out var members))
            return;
        foreach (var member in members)
            DeliverToSession(member.Key, message, origin);
    }

    // The two places local sessions are handed a message: counted there (an Enabled check when nobody listens).
    // A delivery that throws is isolated: a group's other members, the publish and the channel go on.
    private bool DeliverToSession(Guid sessionId, ReadOnlySpan<byte> message, KeyValuePair<string, object?>[] origin)
    {
        bool delivered;
        try
        {
            delivered = _local.SendToSession(sessionId, message);
        }
        catch (Exception e)
        {
            Isolate("a local delivery (ILocalDelivery.SendToSession)", e);
            return false;
        }

        if (delivered)
            CountDelivery(origin);
        return delivered;
    }

    private void DeliverToAll(ReadOnlySpan<byte> message, KeyValuePair<string, object?>[] origin)
    {
        bool delivered;
        try
        {
            delivered = _local.SendToAll(message);
        }
        catch (Exception e)
        {
            Isolate("a local delivery (ILocalDelivery.SendToAll)", e);
            return;
        }

        if (delivered)
            CountDelivery(origin);
    }

    private void CountDelivery(KeyValuePair<string, object?>[] origin)
    {
        if (!BackplaneTelemetry.Deliveries.Enabled)
            return;
        try
        {
            BackplaneTelemetry.Deliveries.Add(1, origin);
        }
        catch (Exception e)
        {
            Isolate("a meter listener (netserver.backplane.deliveries)", e);
        }
    }

    /// <summary>Tells each <see cref="PublishFailed"/> handler, one at a time: one that throws keeps neither the others nor the failed send's false from coming.</summary>
    private void Report(Exception e)
    {
        if (PublishFailed is not { } handlers)
            return;
        foreach (var handler in handlers.GetInvocationList())
        {
            try
            {
                ((Action<Exception>)handler)(e);
            }
            catch (Exception thrown)
            {
                Isolate("a PublishFailed handler", thrown);
            }
        }
    }

    /// <summary>Stops the presence key, takes this node's sessions out of the Redis group sets and closes the connection.</summary>
    public async ValueTask DisposeAsync()
    {
        BackplaneTelemetry.Remove(this);
        if (_presenceTimer is not null)
            await _presenceTimer.DisposeAsync().ConfigureAwait(false);
        if (_redis is null)
            return;
        try
        {
            var db = _redis.GetDatabase();
            foreach (var group in _groups)
                foreach (var member in group.Value)
                    await db.SetRemoveAsync(GroupKey(group.Key), MemberValue(member.Key)).ConfigureAwait(false);
            await db.KeyDeleteAsync(NodeKey(NodeId)).ConfigureAwait(false);
        }
        catch (RedisException)
        {
            // Redis is down: the presence key expires on its own and readers drop these members then.
        }
        await _redis.CloseAsync().ConfigureAwait(false);
        _redis.Dispose();
    }
}
