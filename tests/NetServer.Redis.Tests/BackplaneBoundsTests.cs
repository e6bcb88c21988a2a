using System;
using System.Collections.Concurrent;
using System.Linq;
using System.Text;
using System.Threading;
using System.Threading.Tasks;
using NetServer.P2P;
using NetServer.Tests.Infrastructure;
using StackExchange.Redis;
using Xunit;

namespace NetServer.Redis.Tests;

/// <summary>
/// The backplane's bounds on both sides: publishes in flight (with a relay's control frames kept
/// apart from its peers' traffic) and frames waiting on a node slower than the others publish.
/// </summary>
public sealed class BackplaneBoundsTests
{
    private static readonly TimeSpan s_wait = TimeSpan.FromSeconds(15);

    private static byte[] Text(string text) => Encoding.UTF8.GetBytes(text);

    [RedisFact]
    public async Task A_relay_nodes_control_frames_are_published_while_peer_traffic_holds_every_publish_slot()
    {
        await using var redis = await RedisProcess.StartAsync();
        await using var node = new RedisRelayBackplane(new BackplaneOptions { Prefix = "bounds", MaxPendingPublishes = 4 });
        await node.StartAsync(redis.Configuration);
        await using var admin = await ConnectionMultiplexer.ConnectAsync(redis.Configuration + ",allowAdmin=true");

        // Redis holds every client's commands for 2 s: the publishes stay in flight, as behind a busy Redis.
        await admin.GetDatabase().ExecuteAsync("CLIENT", "PAUSE", "2000");
        var peers = Enumerable.Range(0, 4).Select(i => node.PublishAsync(Guid.Empty, new byte[] { 1, (byte)i }, RelayNodeTraffic.Peer)).ToArray();
        Assert.False(await node.PublishAsync(Guid.Empty, new byte[] { 1, 4 }, RelayNodeTraffic.Peer).WaitAsync(s_wait)); // the fifth: refused at once
        Assert.Equal(1, node.Backplane.Dropped);

        // A heartbeat now must still go out: peer traffic cannot make this node look dead to the others.
        var heartbeat = node.PublishAsync(Guid.Empty, new byte[] { 1, 1 }, RelayNodeTraffic.Control);
        Assert.True(await heartbeat.WaitAsync(s_wait));
        Assert.All(await Task.WhenAll(peers).WaitAsync(s_wait), Assert.True);
        Assert.Equal(1, node.Backplane.Dropped);
    }

    [RedisFact]
    public async Task A_node_slower_than_the_others_publish_drops_what_is_past_its_receive_backlog_and_goes_on_in_order()
    {
        await using var redis = await RedisProcess.StartAsync();
        var session = Guid.NewGuid();
        var slow = new GatedDelivery(session);
        await using var sender = new RedisBackplane(new RecordingDelivery());
        await sender.StartAsync(redis.Configuration);
        await using var receiver = new RedisBackplane(slow, new BackplaneOptions { MaxReceiveBacklog = 50 });
        await receiver.StartAsync(redis.Configuration);
        try
        {
            // The receiver's delivery hangs on the first frame; 2,000 more come meanwhile.
            const int count = 2000;
            var sends = Enumerable.Range(0, count).Select(i => sender.SendToSessionAsync(session, Text("m" + i))).ToArray();
            Assert.All(await Task.WhenAll(sends).WaitAsync(s_wait), Assert.True);
            await Wait.UntilAsync(() => receiver.ReceiveDropped == count - 50, () => $"the receiver to drop {count - 50} frames, dropped {receiver.ReceiveDropped}");
            Assert.Equal(50, receiver.ReceiveBacklog);

            // Released: the 50 it kept arrive in order, and frames after the overflow come again.
            slow.Gate.Set();
            await Wait.UntilAsync(() => slow.Got.Count == 50, () => $"the 50 kept frames, got {slow.Got.Count}");
            Assert.Equal(Enumerable.Range(0, 50).Select(i => "m" + i), slow.Got);
            Assert.True(await sender.SendToSessionAsync(session, Text("after")).WaitAsync(s_wait));
            await Wait.UntilAsync(() => slow.Got.Contains("after"), () => "a frame after the overflow");
            Assert.Equal(count - 50, receiver.ReceiveDropped);
            Assert.Equal(0, receiver.ReceiveBacklog);
        }
        finally
        {
            slow.Gate.Set();
        }
    }

    [RedisFact]
    public async Task A_slow_relay_node_drops_peer_frames_past_its_backlog_but_keeps_the_control_frames()
    {
        await using var redis = await RedisProcess.StartAsync();
        await using var sender = new RedisRelayBackplane(new BackplaneOptions { Prefix = "bounds" });
        await sender.StartAsync(redis.Configuration);
        await using var node = new RedisRelayBackplane(new BackplaneOptions { Prefix = "bounds", MaxReceiveBacklog = 50 });
        await node.StartAsync(redis.Configuration);
        var slow = new GatedReceiver();
        node.Attach(slow);
        try
        {
            // 200 envelopes, then 20 heartbeats, while the node hangs on the first envelope.
            var sends = Enumerable.Range(0, 200).Select(i => sender.PublishAsync(node.NodeId, Message(RelayNodeTraffic.Peer, i), RelayNodeTraffic.Peer))
                .Concat(Enumerable.Range(0, 20).Select(i => sender.PublishAsync(Guid.Empty, Message(RelayNodeTraffic.Control, i), RelayNodeTraffic.Control))).ToArray();
            Assert.All(await Task.WhenAll(sends).WaitAsync(s_wait), Assert.True);
            await Wait.UntilAsync(() => node.Backplane.ReceiveBacklog == 70, () => $"50 envelopes and 20 heartbeats waiting, {node.Backplane.ReceiveBacklog} are ({node.Backplane.ReceiveDropped} dropped)");
            Assert.Equal(150, node.Backplane.ReceiveDropped);
            // Every one shown to the relay (which decides what to answer, and how many a second).
            Assert.Equal(150, slow.Dropped);

            slow.Gate.Set();
            await Wait.UntilAsync(() => slow.Got.Count == 70, () => $"the 70 kept, got {slow.Got.Count}");
            Assert.Equal(
                Enumerable.Range(0, 50).Select(i => (RelayNodeTraffic.Peer, i)).Concat(Enumerable.Range(0, 20).Select(i => (RelayNodeTraffic.Control, i))),
                slow.Got.Select(m => ((RelayNodeTraffic)m[0], (m[1] << 8) | m[2])));
        }
        finally
        {
            slow.Gate.Set();
            node.Detach(slow);
        }
    }

    [RedisFact]
    public async Task A_frame_larger_than_MaxReceiveBacklogBytes_is_dropped_at_once_counted_traced_and_shown_to_the_relay()
    {
        await using var redis = await RedisProcess.StartAsync();
        await using var sender = new RedisRelayBackplane(new BackplaneOptions { Prefix = "bounds" });
        await sender.StartAsync(redis.Configuration);
        await using var node = new RedisRelayBackplane(new BackplaneOptions { Prefix = "bounds", MaxReceiveBacklogBytes = 1024 });
        await node.StartAsync(redis.Configuration);
        var receiver = new GatedReceiver();
        receiver.Gate.Set();
        node.Attach(receiver);
        using var traces = new TestTraceListener(m => m.Contains(node.NodeId.ToString(), StringComparison.Ordinal));
        try
        {
            // Alone, with nothing waiting, it could still never be taken: dropped, not held or retried.
            var big = new byte[4096];
            big[0] = (byte)RelayNodeTraffic.Peer;
            Assert.True(await sender.PublishAsync(node.NodeId, big, RelayNodeTraffic.Peer).WaitAsync(s_wait));
            Assert.True(await sender.PublishAsync(node.NodeId, Message(RelayNodeTraffic.Peer, 1), RelayNodeTraffic.Peer).WaitAsync(s_wait));
            await Wait.UntilAsync(() => receiver.Got.Count == 1, () => "the small frame after the big one");
            Assert.Equal((1, 1), (node.Backplane.ReceiveDropped, receiver.Dropped));
            Assert.Equal(0, node.Backplane.ReceiveBacklog);
            var trace = Assert.Single(traces.Messages);
            Assert.Matches(@"a frame of 41\d\d bytes", trace); // 4,096 and the frame's header
            Assert.Contains("larger than BackplaneOptions.MaxReceiveBacklogBytes (1024)", trace, StringComparison.Ordinal);

            // The next one is counted and shown as well, and not traced again.
            Assert.True(await sender.PublishAsync(node.NodeId, big, RelayNodeTraffic.Peer).WaitAsync(s_wait));
            Assert.True(await sender.PublishAsync(node.NodeId, Message(RelayNodeTraffic.Peer, 2), RelayNodeTraffic.Peer).WaitAsync(s_wait));
            await Wait.UntilAsync(() => receiver.Got.Count == 2, () => "the second small frame");
            Assert.Equal((2, 2), (node.Backplane.ReceiveDropped, receiver.Dropped));
            Assert.Single(traces.Messages);
        }
        finally
        {
            node.Detach(receiver);
        }
    }

    private static byte[] Message(RelayNodeTraffic traffic, int i) => [(byte)traffic, (byte)(i >> 8), (byte)i];

    /// <summary>A node's sessions that take nothing until the test opens the gate (a node busy elsewhere).</summary>
    private sealed class GatedDelivery(Guid session) : ILocalDelivery
    {
        public ManualResetEventSlim Gate { get; } = new();

        public ConcurrentQueue<string> Got { get; } = new();

        public bool SendToSession(Guid sessionId, ReadOnlySpan<byte> message)
        {
            if (!Gate.Wait(s_wait))
                throw new TimeoutException("the test did not open the gate");
            Got.Enqueue(Encoding.UTF8.GetString(message));
            return sessionId == session;
        }

        public bool SendToAll(ReadOnlySpan<byte> message) => SendToSession(session, message);
    }

    /// <summary>A relay that takes nothing until the test opens the gate.</summary>
    private sealed class GatedReceiver : IRelayNodeReceiver
    {
        private int _dropped;

        public ManualResetEventSlim Gate { get; } = new();

        public int Dropped => Volatile.Read(ref _dropped);

        public ConcurrentQueue<byte[]> Got { get; } = new();

        public void OnNodeMessage(Guid node, ReadOnlySpan<byte> message)
        {
            if (!Gate.Wait(s_wait))
                throw new TimeoutException("the test did not open the gate");
            Got.Enqueue(message.ToArray());
        }

        public void OnNodeMessageDropped(Guid node, ReadOnlySpan<byte> message) => Interlocked.Increment(ref _dropped);
    }
}
