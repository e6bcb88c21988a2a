using System;
using System.Collections.Concurrent;
using System.Linq;
using System.Threading;
using System.Threading.Tasks;
using NetServer.P2P;
using NetServer.P2P.Tests.Infrastructure;
using NetServer.P2P.Wire;
using NetServer.Protobuf;
using NetServer.Tests.Infrastructure;
using Xunit;

namespace NetServer.Redis.Tests.Relay;

/// <summary>
/// Relay nodes at their bounds: what a node takes from the others is held to its own limits, and
/// the cluster's upkeep is told apart from what peers send.
/// </summary>
public sealed class RelayNodesBoundsTests
{
    [RedisFact]
    public async Task An_envelope_over_the_receiving_nodes_MaxMessageSize_is_dropped_there_and_its_sender_told()
    {
        // Node 0 takes envelopes of 1 MiB, node 1 of 1 KiB: what node 0 lets through must not reach node 1's peers.
        await using var nodes = await RelayNodes.StartAsync(1);
        var small = await nodes.AddNodeAsync(configure: o => o.MaxMessageSize = 1024);
        var alice = await nodes.ConnectAsync(0, "alice");
        var bob = await nodes.ConnectAsync(small, "bob");
        await RelayNodes.AllSeeAsync([alice, bob], alice, bob);
        var room = await alice.JoinRoomAsync("lobby");
        await bob.JoinRoomAsync("lobby");
        var big = new Sample { A = 1, Text = new string('x', 4096) };

        Assert.True(alice.Send(bob.PeerId, new MessageEnvelope("big"), big));
        Assert.True(alice.Broadcast(new MessageEnvelope("big-all"), big));
        Assert.True(alice.SendToRoom(room, new MessageEnvelope("big-room"), big));
        await Wait.UntilAsync(() => !alice.Failures.IsEmpty, () => "the oversize message's refusal from node 1");
        var refusal = alice.Failures.Single();
        Assert.Equal((RelayStatus.MessageTooLarge, bob.PeerId), (refusal.Status, refusal.To));

        // Node messages come in order: once this one is there, the three before it were handled.
        Assert.True(alice.Send(bob.PeerId, new MessageEnvelope("small"), new Sample { A = 2 }));
        await Wait.UntilAsync(() => bob.Messages.Any(m => m.Header == "small"), () => "the small message after them");
        Assert.Equal(1, bob.Received);
        Assert.Equal(3, nodes.Relays[small].Cluster!.Oversized);
        Assert.True(bob.IsConnected);
    }

    [RedisFact]
    public async Task The_clusters_upkeep_is_published_as_control_traffic_and_what_peers_send_as_peer_traffic()
    {
        // Node 0's publishes are recorded: it takes envelopes of 1 KiB, so a bigger one from node 1 is refused with a Status.
        await using var nodes = await RelayNodes.StartAsync(0);
        TrafficRecording? recorded = null;
        var first = await nodes.AddNodeAsync(wrap: b => recorded = new TrafficRecording(b), configure: o => o.MaxMessageSize = 1024);
        var alice = await nodes.ConnectAsync(first, "alice");
        var carol = await nodes.ConnectAsync(first, "carol");
        var later = await nodes.AddNodeAsync(); // asks node 0 for its list (State), and node 0 asks it (SyncRequest)
        var bob = await nodes.ConnectAsync(later, "bob");
        await RelayNodes.AllSeeAsync([alice, carol, bob], alice, carol, bob);
        var room = await alice.JoinRoomAsync("lobby");
        await bob.JoinRoomAsync("lobby");

        Assert.True(alice.Send(bob.PeerId, new MessageEnvelope("hello")));
        Assert.True(alice.SendToRoom(room, new MessageEnvelope("room")));
        Assert.True(bob.Send(alice.PeerId, new MessageEnvelope("big"), new Sample { Text = new string('x', 4096) }));
        await Wait.UntilAsync(() => bob.Received == 2 && !bob.Failures.IsEmpty, () => $"bob's two messages ({bob.Received}) and his refusal");
        await carol.DisposeAsync();
        await RelayNodes.AllSeeAsync([alice, bob], alice, bob);
        Assert.True(nodes.Relays[first].Stop());

        var control = new[] { ClusterKind.Heartbeat, ClusterKind.Joined, ClusterKind.Left, ClusterKind.SyncRequest, ClusterKind.State, ClusterKind.Bye };
        var peer = new[] { ClusterKind.Envelope, ClusterKind.RoomEnvelope, ClusterKind.Status };
        Assert.Equal(control.Concat(peer).Order(), recorded!.Seen.Keys.Order());
        Assert.All(control, kind => Assert.Equal(new[] { RelayNodeTraffic.Control }, recorded.Seen[kind].Keys));
        Assert.All(peer, kind => Assert.Equal(new[] { RelayNodeTraffic.Peer }, recorded.Seen[kind].Keys));
    }

    [RedisFact]
    public async Task Requests_to_a_peer_on_a_node_that_is_behind_fail_at_once_with_NodeUnavailable_past_its_receive_bound()
    {
        // Node 1 keeps 5 frames waiting at most; a long node timeout, since its relay will hang for a while.
        await using var nodes = await RelayNodes.StartAsync(1, nodeTimeout: TimeSpan.FromSeconds(20));
        GatedRelay? gated = null;
        var slow = await nodes.AddNodeAsync(wrap: b => gated = new GatedRelay(b), bounds: o => o.MaxReceiveBacklog = 5);
        var alice = await nodes.ConnectAsync(0, "alice");
        var bob = await nodes.ConnectAsync(slow, "bob");
        bob.Handler = (TestPeer peer, in ProtoMessage m) => peer.Reply(in m, new Sample { A = m.Unpack<Sample>().A * 2 });
        await RelayNodes.AllSeeAsync([alice, bob], alice, bob);

        // Node 1's relay stops handling what the other nodes send (busy elsewhere); 20 requests come.
        gated!.Gate.Reset();
        try
        {
            var requests = Enumerable.Range(0, 20).Select(i => alice.RequestAsync<Sample, Sample>(bob.PeerId, new MessageEnvelope("double"), new Sample { A = i }, TimeSpan.FromSeconds(60))).ToArray();
            var refused = await Assert.ThrowsAsync<RelayException>(() => requests[^1].WaitAsync(Wait.Default));
            Assert.Equal(RelayStatus.NodeUnavailable, refused.Status);
            await Wait.UntilAsync(() => requests.Count(r => r.IsFaulted) >= 15, () => $"the requests past node 1's bound to fail, {requests.Count(r => r.IsFaulted)} did");
            Assert.True(nodes.Backplanes[1].Backplane.ReceiveDropped >= 15);

            // Once it catches up, the ones it kept are answered.
            gated.Gate.Set();
            var kept = requests.Where(r => !r.IsFaulted).ToArray();
            var answers = await Task.WhenAll(kept).WaitAsync(Wait.Default);
            Assert.All(answers, a => Assert.Equal(0, a.A % 2));
            Assert.All(requests.Where(r => r.IsFaulted), r => Assert.Equal(RelayStatus.NodeUnavailable, Assert.IsType<RelayException>(r.Exception!.InnerException).Status));
        }
        finally
        {
            gated.Gate.Set();
        }
    }

    [RedisFact]
    public async Task Drops_that_get_no_answer_spend_nothing_of_the_answers_a_node_that_is_behind_may_send()
    {
        // Node 1 keeps 5 frames waiting at most and answers at most 100 drops a second.
        await using var nodes = await RelayNodes.StartAsync(1, nodeTimeout: TimeSpan.FromSeconds(20));
        GatedRelay? gated = null;
        var slow = await nodes.AddNodeAsync(wrap: b => gated = new GatedRelay(b), bounds: o => o.MaxReceiveBacklog = 5);
        var alice = await nodes.ConnectAsync(0, "alice");
        var bob = await nodes.ConnectAsync(slow, "bob");
        await RelayNodes.AllSeeAsync([alice, bob], alice, bob);

        gated!.Gate.Reset();
        try
        {
            // 300 messages to everyone, dropped there past the first 5: lost without an answer (at
            // most once), and so none of the 100 answers a second goes to them...
            for (var i = 0; i < 300; i++)
                Assert.True(alice.Broadcast(new MessageEnvelope("all"), new Sample { A = i }));

            // ...and every request behind them, dropped too, fails at once.
            var requests = Enumerable.Range(0, 20).Select(i => alice.RequestAsync<Sample, Sample>(bob.PeerId, new MessageEnvelope("double"), new Sample { A = i }, TimeSpan.FromSeconds(60))).ToArray();
            foreach (var request in requests)
                Assert.Equal(RelayStatus.NodeUnavailable, (await Assert.ThrowsAsync<RelayException>(() => request.WaitAsync(Wait.Default))).Status);
            Assert.InRange(nodes.Backplanes[slow].Backplane.ReceiveDropped, 315, 320); // 5 places at most, fewer when heartbeats wait in some
            Assert.Equal(0, nodes.Relays[slow].Cluster!.DropsUnanswered);
        }
        finally
        {
            gated.Gate.Set();
        }
    }

    [RedisFact]
    public async Task A_node_that_is_behind_answers_at_most_100_dropped_envelopes_a_second()
    {
        await using var nodes = await RelayNodes.StartAsync(1, nodeTimeout: TimeSpan.FromSeconds(20));
        GatedRelay? gated = null;
        var slow = await nodes.AddNodeAsync(wrap: b => gated = new GatedRelay(b), bounds: o => o.MaxReceiveBacklog = 5);
        var alice = await nodes.ConnectAsync(0, "alice");
        var bob = await nodes.ConnectAsync(slow, "bob");
        await RelayNodes.AllSeeAsync([alice, bob], alice, bob);
        var backplane = nodes.Backplanes[slow].Backplane;
        var cluster = nodes.Relays[slow].Cluster!;
        long Answered() => nodes.Relays[slow].GetStatistics().RefusalsOf(RelayStatus.NodeUnavailable);

        gated!.Gate.Reset();
        try
        {
            var clock = System.Diagnostics.Stopwatch.StartNew();
            for (var i = 0; i < 1000; i++)
                Assert.True(alice.Send(bob.PeerId, new MessageEnvelope("one"), new Sample { A = i }));
            await Wait.UntilAsync(
                () => backplane.ReceiveDropped >= 995 && Answered() + cluster.DropsUnanswered == backplane.ReceiveDropped,
                () => $"1,000 messages to bob dropped past 5 places and each answered or not: {backplane.ReceiveDropped} dropped, {Answered()} answered, {cluster.DropsUnanswered} not");
            var elapsed = clock.Elapsed.TotalSeconds;

            // A token bucket: 100 at once, 100 more a second.
            Assert.InRange(Answered(), 100, 100 + (long)Math.Ceiling(100 * elapsed));
            Assert.True(cluster.DropsUnanswered > 0 || elapsed > 9, $"{Answered()} answered in {elapsed:0.00} s");
        }
        finally
        {
            gated.Gate.Set();
        }
    }

    [RedisFact]
    public async Task A_room_message_from_another_node_is_charged_once_per_member_on_the_node_of_the_members()
    {
        // Node 1 lets a sender have 10 messages a second relayed: a room message to its 3 members costs 3.
        await using var nodes = await RelayNodes.StartAsync(1);
        var members = await nodes.AddNodeAsync(configure: o => o.PeerMessageRate = 10);
        var alice = await nodes.ConnectAsync(0, "alice");
        TestPeer[] here = [await nodes.ConnectAsync(members, "bob"), await nodes.ConnectAsync(members, "bert"), await nodes.ConnectAsync(members, "bea")];
        await RelayNodes.AllSeeAsync([alice, .. here], [alice, .. here]);
        var room = await alice.JoinRoomAsync("lobby");
        foreach (var member in here)
            await member.JoinRoomAsync("lobby");

        for (var i = 0; i < 10; i++)
            Assert.True(alice.SendToRoom(room, new MessageEnvelope("to-room"), new Sample { A = i }));

        // Node messages come in order: once alice's direct message is there, her room messages were handled.
        Assert.True(alice.Send(here[0].PeerId, new MessageEnvelope("marker")));
        await Wait.UntilAsync(() => here[0].Messages.Any(m => m.Header == "marker"), () => "alice's marker");
        var got = here.Select(m => m.Messages.Count(x => x.Header == "to-room")).ToArray();
        Assert.InRange(got[0], 3, 4); // 10 tokens, 3 a message (and a little refill meanwhile)
        Assert.All(got, n => Assert.Equal(got[0], n));
        Assert.Equal(10 - got[0], nodes.Relays[members].Cluster!.RoomRateLimited);
    }

    /// <summary>A backplane whose relay handles nothing from the other nodes while <see cref="Gate"/> is closed (a node that is behind).</summary>
    private sealed class GatedRelay(IRelayBackplane inner) : IRelayBackplane
    {
        private Gated? _gated;

        public ManualResetEventSlim Gate { get; } = new(initialState: true);

        public Guid NodeId => inner.NodeId;

        public bool IsConnected => inner.IsConnected;

        public void Attach(IRelayNodeReceiver receiver) => inner.Attach(_gated = new Gated(receiver, Gate));

        public void Detach(IRelayNodeReceiver receiver)
        {
            if (_gated is { } gated)
                inner.Detach(gated);
        }

        public Task<bool> PublishAsync(Guid node, ReadOnlyMemory<byte> message, RelayNodeTraffic traffic) => inner.PublishAsync(node, message, traffic);

        private sealed class Gated(IRelayNodeReceiver relay, ManualResetEventSlim gate) : IRelayNodeReceiver
        {
            public void OnNodeMessage(Guid node, ReadOnlySpan<byte> message)
            {
                if (!gate.Wait(TimeSpan.FromSeconds(30)))
                    throw new TimeoutException("the test did not open the gate");
                relay.OnNodeMessage(node, message);
            }

            public void OnNodeMessageDropped(Guid node, ReadOnlySpan<byte> message) => relay.OnNodeMessageDropped(node, message);
        }
    }

    /// <summary>A backplane that notes the traffic class of each kind of message the relay publishes, and passes them on.</summary>
    private sealed class TrafficRecording(IRelayBackplane inner) : IRelayBackplane
    {
        public ConcurrentDictionary<ClusterKind, ConcurrentDictionary<RelayNodeTraffic, byte>> Seen { get; } = new();

        public Guid NodeId => inner.NodeId;

        public bool IsConnected => inner.IsConnected;

        public void Attach(IRelayNodeReceiver receiver) => inner.Attach(receiver);

        public void Detach(IRelayNodeReceiver receiver) => inner.Detach(receiver);

        public Task<bool> PublishAsync(Guid node, ReadOnlyMemory<byte> message, RelayNodeTraffic traffic)
        {
            if (ClusterMessage.TryReadKind(message.Span, out var kind))
                Seen.GetOrAdd(kind, _ => new())[traffic] = 0;
            return inner.PublishAsync(node, message, traffic);
        }
    }
}
