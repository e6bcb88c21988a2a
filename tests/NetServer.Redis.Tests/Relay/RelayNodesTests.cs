using System;
using System.Collections.Concurrent;
using System.Diagnostics;
using System.Linq;
using System.Threading.Tasks;
using NetServer.P2P;
using NetServer.P2P.Tests.Infrastructure;
using NetServer.P2P.Wire;
using NetServer.Protobuf;
using NetServer.Tests.Infrastructure;
using Xunit;
using Xunit.Abstractions;

namespace NetServer.Redis.Tests.Relay;

/// <summary>
/// Relays joined into one cluster through a real redis-server: peers of every node in every list,
/// messages and requests across nodes with the true sender, departures and dead nodes, Redis down.
/// </summary>
public sealed class RelayNodesTests(ITestOutputHelper output)
{
    private static readonly TimeSpan s_long = TimeSpan.FromSeconds(30);

    private static void Answer(TestPeer peer, in ProtoMessage message)
    {
        if (message.IsRequest && message.HeaderEquals("double"))
            peer.Reply(in message, new Sample { A = message.Unpack<Sample>().A * 2, Text = peer.Name });
    }

    [RedisFact]
    public async Task Peers_of_every_node_are_in_every_list_and_leave_it_with_their_connection()
    {
        await using var nodes = await RelayNodes.StartAsync(3);
        var alice = await nodes.ConnectAsync(0, "alice");
        var bob = await nodes.ConnectAsync(1, "bob");
        var carol = await nodes.ConnectAsync(2, "carol");
        var dave = await nodes.ConnectAsync(0, "dave");
        TestPeer[] all = [alice, bob, carol, dave];
        await RelayNodes.AllSeeAsync(all, all);
        Assert.Equal("bob", alice.GetPeers().Single(p => p.Id == bob.PeerId).Name);
        Assert.Equal((2, 2), (nodes.Relays[0].PeerCount, nodes.Relays[0].RemotePeerCount));
        Assert.Contains(bob.PeerId, alice.JoinedIds);

        // The relay's list versions moved by deltas: no peer was sent a whole list for these changes.
        Assert.All(all, p => Assert.Equal(0, p.SnapshotsReceived));

        var carolId = carol.PeerId; // a disposed client has no id any more
        await carol.DisposeAsync();
        await RelayNodes.AllSeeAsync([alice, bob, dave], alice, bob, dave);
        Assert.Contains(carolId, alice.LeftIds);
        Assert.Contains(carolId, bob.LeftIds);
        Assert.Equal(2, nodes.Relays[1].RemotePeerCount); // alice and dave
    }

    [RedisFact]
    public async Task A_node_that_starts_later_gets_the_others_lists_and_they_get_its_peers()
    {
        await using var nodes = await RelayNodes.StartAsync(2);
        var alice = await nodes.ConnectAsync(0, "alice");
        var bob = await nodes.ConnectAsync(1, "bob");
        await RelayNodes.AllSeeAsync([alice, bob], alice, bob);

        // The newcomer missed every Joined: the heartbeats tell it what it lacks and it asks for the lists.
        var late = await nodes.AddNodeAsync();
        var carol = await nodes.ConnectAsync(late, "carol");
        await RelayNodes.AllSeeAsync([alice, bob, carol], alice, bob, carol);
        Assert.Equal(2, nodes.Relays[late].RemotePeerCount);
        Assert.True(carol.Send(alice.PeerId, new MessageEnvelope("hello")));
        await Wait.UntilAsync(() => alice.Received == 1, () => "carol's message");
        Assert.Equal(carol.PeerId, alice.Messages.Single().From);
    }

    [RedisFact]
    public async Task Messages_cross_nodes_with_From_stamped_by_the_senders_node()
    {
        await using var nodes = await RelayNodes.StartAsync(3);
        var alice = await nodes.ConnectAsync(0, "alice");
        var bob = await nodes.ConnectAsync(1, "bob");
        var carol = await nodes.ConnectAsync(2, "carol");
        await RelayNodes.AllSeeAsync([alice, bob, carol], alice, bob, carol);

        for (var i = 0; i < 100; i++)
            Assert.True(alice.Send(bob.PeerId, new MessageEnvelope("chat"), new Sample { A = i }));
        Assert.True(carol.Broadcast(new MessageEnvelope("all"), new Sample { A = -1 }));

        await Wait.UntilAsync(() => bob.Received == 101 && alice.Received == 1, () => $"bob 101 messages ({bob.Received}), alice 1 ({alice.Received})");
        var chat = bob.Messages.Where(m => m.Header == "chat").ToArray();
        Assert.All(chat, m => Assert.Equal(alice.PeerId, m.From));
        Assert.Equal(Enumerable.Range(0, 100), chat.Select(m => m.Unpack<Sample>().A)); // in order, one sender
        Assert.Equal(carol.PeerId, bob.Messages.Single(m => m.Header == "all").From);
        Assert.Equal(carol.PeerId, alice.Messages.Single().From);
        Assert.Equal(0, carol.Received);
    }

    [RedisFact]
    public async Task A_spoofed_From_is_overwritten_and_a_node_cannot_speak_for_a_peer_it_does_not_hold()
    {
        await using var nodes = await RelayNodes.StartAsync(3);
        var mallory = await nodes.ConnectAsync(0, "mallory");
        var bob = await nodes.ConnectAsync(1, "bob");
        var carol = await nodes.ConnectAsync(2, "carol");
        await RelayNodes.AllSeeAsync([mallory, bob, carol], mallory, bob, carol);

        // A client claims to be a peer of another node, or the relay.
        Assert.True(mallory.Send(bob.PeerId, new MessageEnvelope("as-carol") { From = carol.PeerId }, new Sample { A = 1 }));
        Assert.True(mallory.Send(bob.PeerId, new MessageEnvelope("as-relay") { From = RelayAddresses.Relay }, new Sample { A = 2 }));
        await Wait.UntilAsync(() => bob.Received == 2, () => $"bob to receive 2 messages, got {bob.Received}");
        Assert.All(bob.Messages, m => Assert.Equal(mallory.PeerId, m.From));

        // A node publishes an envelope "from" carol, whom node 2 holds: node 1 drops it, whatever the envelope says.
        await using var rogue = new RedisRelayBackplane(new BackplaneOptions { Prefix = "relays" });
        await rogue.StartAsync(nodes.Redis.Configuration);
        var forged = new MessageEnvelope("forged") { To = bob.PeerId, From = carol.PeerId }.ToArray();
        var message = new byte[ClusterMessage.EnvelopeHeaderSize + forged.Length];
        ClusterMessage.WriteEnvelopeHeader(message, carol.PeerId, bob.PeerId);
        forged.CopyTo(message.AsSpan(ClusterMessage.EnvelopeHeaderSize));
        Assert.True(await rogue.PublishAsync(nodes.Backplanes[1].NodeId, message, RelayNodeTraffic.Peer));
        await Wait.UntilAsync(() => nodes.Relays[1].Cluster!.Ignored >= 1, () => "node 1 to drop the forged envelope");

        // The real carol still reaches bob afterwards, stamped as herself.
        Assert.True(carol.Send(bob.PeerId, new MessageEnvelope("real"), new Sample { A = 3 }));
        await Wait.UntilAsync(() => bob.Received == 3, () => $"bob's third message, got {bob.Received}");
        Assert.DoesNotContain(bob.Messages, m => m.Header == "forged");
        Assert.Equal(carol.PeerId, bob.Messages.Single(m => m.Header == "real").From);
    }

    [RedisFact]
    public async Task Requests_to_peers_on_other_nodes_get_their_own_replies_both_ways()
    {
        await using var nodes = await RelayNodes.StartAsync(2);
        var alice = await nodes.ConnectAsync(0, "alice");
        var bob = await nodes.ConnectAsync(1, "bob");
        alice.Handler = Answer;
        bob.Handler = Answer;
        await RelayNodes.AllSeeAsync([alice, bob], alice, bob);

        var there = Enumerable.Range(0, 200).Select(i => alice.RequestAsync<Sample, Sample>(bob.PeerId, new MessageEnvelope("double"), new Sample { A = i }, s_long)).ToArray();
        var back = Enumerable.Range(0, 200).Select(i => bob.RequestAsync<Sample, Sample>(alice.PeerId, new MessageEnvelope("double"), new Sample { A = 1000 + i }, s_long)).ToArray();
        var replies = await Task.WhenAll(there).WaitAsync(s_long);
        var answers = await Task.WhenAll(back).WaitAsync(s_long);
        Assert.Equal(Enumerable.Range(0, 200).Select(i => 2 * i), replies.Select(r => r.A));
        Assert.All(replies, r => Assert.Equal("bob", r.Text));
        Assert.Equal(Enumerable.Range(0, 200).Select(i => 2 * (1000 + i)), answers.Select(r => r.A));
        var ping = await alice.PingAsync(bob.PeerId, s_long);
        Assert.True(ping > TimeSpan.Zero);
    }

    [RedisFact]
    public async Task A_forged_reply_from_a_peer_of_a_third_node_is_refused_and_the_real_one_still_answers()
    {
        await using var nodes = await RelayNodes.StartAsync(3);
        var asker = await nodes.ConnectAsync(0, "asker");
        var asked = await nodes.ConnectAsync(1, "asked");
        var forger = await nodes.ConnectAsync(2, "forger");
        await RelayNodes.AllSeeAsync([asker, asked, forger], asker, asked, forger);
        var held = new ConcurrentQueue<MessageEnvelope>();
        asked.Handler = (TestPeer _, in ProtoMessage m) => held.Enqueue(m.ToEnvelope());

        var waiting = asker.RequestAsync<Sample, Sample>(asked.PeerId, new MessageEnvelope("hold"), new Sample { A = 1 }, s_long);
        await Wait.UntilAsync(() => held.Count == 1, () => "the request to arrive");
        var request = held.Single();
        Assert.Equal(asker.PeerId, request.From);

        var forged = new MessageEnvelope("hold") { RequestId = request.RequestId, Flags = ProtoFlags.Response }.Pack(new Sample { A = 666 });
        Assert.True(forger.Send(asker.PeerId, forged));
        await Wait.UntilAsync(() => !forger.Failures.IsEmpty, () => "the forged reply to be refused (a status back from the asker's node)");
        Assert.Equal(RelayStatus.UnexpectedReply, forger.Failures.Single().Status);
        Assert.False(waiting.IsCompleted);

        Assert.True(asked.Reply(request, new Sample { A = 2 }));
        Assert.Equal(2, (await waiting.WaitAsync(Wait.Default)).A);
        Assert.Equal(0, asker.Received);
    }

    [RedisFact]
    public async Task A_room_spans_the_nodes_its_members_are_on_and_only_its_members_get_its_messages()
    {
        await using var nodes = await RelayNodes.StartAsync(2);
        var alice = await nodes.ConnectAsync(0, "alice");
        var dave = await nodes.ConnectAsync(0, "dave");
        var bob = await nodes.ConnectAsync(1, "bob");
        var carol = await nodes.ConnectAsync(1, "carol");
        await RelayNodes.AllSeeAsync([alice, dave, bob, carol], alice, dave, bob, carol);

        var there = await alice.JoinRoomAsync("lobby");
        var here = await bob.JoinRoomAsync("lobby");
        Assert.Equal(there.Id, here.Id); // one name, one id on every node

        Assert.True(alice.SendToRoom(there, new MessageEnvelope("to-room"), new Sample { A = 1 }));
        Assert.True(bob.SendToRoom(here, new MessageEnvelope("to-room"), new Sample { A = 2 }));
        await Wait.UntilAsync(() => alice.Received == 1 && bob.Received == 1, () => $"one room message each: alice {alice.Received}, bob {bob.Received}");
        Assert.Equal((alice.PeerId, 1), (bob.Messages.Single().From, bob.Messages.Single().Unpack<Sample>().A));
        Assert.Equal((bob.PeerId, 2), (alice.Messages.Single().From, alice.Messages.Single().Unpack<Sample>().A));

        // Non-members on either node got nothing; a non-member cannot send to it.
        Assert.True(carol.Send(here.Id, new MessageEnvelope("outsider")));
        await Wait.UntilAsync(() => !carol.Failures.IsEmpty, () => "the outsider's refusal");
        Assert.Equal(RelayStatus.NotMember, carol.Failures.Single().Status);
        Assert.Equal((0, 0), (dave.Received, carol.Received));
        Assert.Equal((1, 1), (alice.Received, bob.Received));
    }

    [RedisFact]
    public async Task Sends_to_an_unknown_peer_get_UnknownPeer_as_on_one_relay()
    {
        await using var nodes = await RelayNodes.StartAsync(2);
        var alice = await nodes.ConnectAsync(0, "alice");
        var bob = await nodes.ConnectAsync(1, "bob");
        await RelayNodes.AllSeeAsync([alice, bob], alice, bob);
        var nobody = Guid.NewGuid();

        var refused = await Assert.ThrowsAsync<RelayException>(() => alice.RequestAsync(nobody, new MessageEnvelope("x"), s_long));
        Assert.Equal(RelayStatus.UnknownPeer, refused.Status);
        Assert.True(alice.Send(nobody, new MessageEnvelope("x")));
        await Wait.UntilAsync(() => !alice.Failures.IsEmpty, () => "the refusal");
        Assert.Equal((RelayStatus.UnknownPeer, nobody), (alice.Failures.Single().Status, alice.Failures.Single().To));
    }

    [RedisFact]
    public async Task A_request_fails_when_the_peer_on_the_other_node_leaves()
    {
        await using var nodes = await RelayNodes.StartAsync(2);
        var alice = await nodes.ConnectAsync(0, "alice");
        var bob = await nodes.ConnectAsync(1, "bob");
        await RelayNodes.AllSeeAsync([alice, bob], alice, bob);

        var waiting = alice.RequestAsync(bob.PeerId, new MessageEnvelope("never"), s_long);
        await Wait.UntilAsync(() => bob.Received == 1, () => "the request to arrive");
        var started = Stopwatch.StartNew();
        await bob.DisposeAsync();
        var failed = await Assert.ThrowsAsync<RelayException>(() => waiting.WaitAsync(Wait.Default));
        Assert.Equal(RelayStatus.PeerLeft, failed.Status);
        Assert.True(started.Elapsed < TimeSpan.FromSeconds(5), $"failed after {started.Elapsed}");
        await RelayNodes.AllSeeAsync([alice], alice);
    }

    [RedisFact]
    public async Task A_node_that_stops_takes_its_peers_out_of_the_lists_and_their_requests_fail()
    {
        await using var nodes = await RelayNodes.StartAsync(2);
        var alice = await nodes.ConnectAsync(0, "alice");
        var bob = await nodes.ConnectAsync(1, "bob");
        var bert = await nodes.ConnectAsync(1, "bert");
        await RelayNodes.AllSeeAsync([alice, bob, bert], alice, bob, bert);

        var waiting = alice.RequestAsync(bob.PeerId, new MessageEnvelope("never"), s_long);
        await Wait.UntilAsync(() => bob.Received == 1, () => "the request to arrive");
        var started = Stopwatch.StartNew();
        Assert.True(nodes.Relays[1].Stop());
        var failed = await Assert.ThrowsAsync<RelayException>(() => waiting.WaitAsync(Wait.Default));
        Assert.Equal(RelayStatus.PeerLeft, failed.Status);
        await RelayNodes.AllSeeAsync([alice], alice);
        Assert.True(started.Elapsed < RelayNodes.NodeTimeout, $"the stop (its Bye) took {started.Elapsed}; a timeout would take {RelayNodes.NodeTimeout}");
        Assert.Equal(0, nodes.Relays[0].RemotePeerCount);
    }

    [RedisFact]
    public async Task A_node_that_dies_leaves_every_list_within_the_node_timeout()
    {
        await using var nodes = await RelayNodes.StartAsync(2);
        var alice = await nodes.ConnectAsync(0, "alice");
        var bob = await nodes.ConnectAsync(1, "bob");
        await RelayNodes.AllSeeAsync([alice, bob], alice, bob);
        var waiting = alice.RequestAsync(bob.PeerId, new MessageEnvelope("never"), s_long);
        await Wait.UntilAsync(() => bob.Received == 1, () => "the request to arrive");

        // Node 1 goes silent without a goodbye, as a killed process does: its Redis connection just drops.
        var started = Stopwatch.StartNew();
        nodes.Backplanes[1].Backplane.DropConnectionForTest();
        var failed = await Assert.ThrowsAsync<RelayException>(() => waiting.WaitAsync(Wait.Default));
        Assert.Equal(RelayStatus.PeerLeft, failed.Status);
        var elapsed = started.Elapsed;
        output.WriteLine($"a silent node left after {elapsed.TotalMilliseconds:0} ms (heartbeat {RelayNodes.Heartbeat.TotalMilliseconds} ms, node timeout {RelayNodes.NodeTimeout.TotalMilliseconds} ms)");
        await RelayNodes.AllSeeAsync([alice], alice);
        Assert.True(elapsed >= RelayNodes.NodeTimeout - RelayNodes.Heartbeat, $"gone after {elapsed}: sooner than the timeout");
        Assert.True(elapsed < RelayNodes.NodeTimeout + 3 * RelayNodes.Heartbeat + TimeSpan.FromSeconds(1), $"gone after {elapsed}");

        // Node 1 lost the cluster too: after the same timeout its peers see only themselves, and sends to alice get UnknownPeer.
        await RelayNodes.AllSeeAsync([bob], bob);
    }

    [RedisFact]
    public async Task With_Redis_down_local_routes_go_on_remote_sends_fail_at_once_and_the_lists_heal_when_it_is_back()
    {
        var nodeTimeout = TimeSpan.FromSeconds(4);
        await using var nodes = await RelayNodes.StartAsync(2, nodeTimeout);
        var alice = await nodes.ConnectAsync(0, "alice");
        var anna = await nodes.ConnectAsync(0, "anna");
        var bob = await nodes.ConnectAsync(1, "bob");
        anna.Handler = Answer;
        await RelayNodes.AllSeeAsync([alice, anna, bob], alice, anna, bob);

        await nodes.Redis.StopAsync();
        await Wait.UntilAsync(() => !nodes.Backplanes[0].IsConnected, () => "node 0 to see Redis gone");
        var refused = await Assert.ThrowsAsync<RelayException>(() => alice.RequestAsync(bob.PeerId, new MessageEnvelope("x"), s_long));
        Assert.Equal(RelayStatus.NodeUnavailable, refused.Status);
        Assert.True(alice.Send(bob.PeerId, new MessageEnvelope("plain")));
        await Wait.UntilAsync(() => !alice.Failures.IsEmpty, () => "the plain send's refusal");
        Assert.Equal(RelayStatus.NodeUnavailable, alice.Failures.Single().Status);
        var local = await alice.RequestAsync<Sample, Sample>(anna.PeerId, new MessageEnvelope("double"), new Sample { A = 21 }, s_long);
        Assert.Equal(42, local.A);

        // Past the node timeout each node lists only its own peers; nothing waits for the other side.
        await RelayNodes.AllSeeAsync([alice, anna], alice, anna);
        await RelayNodes.AllSeeAsync([bob], bob);
        Assert.True(nodes.Backplanes[0].Backplane.PendingPublishes <= new BackplaneOptions().MaxPendingPublishes);

        // Redis back (empty: no persistence): the heartbeats find the other node and its list again.
        await nodes.Redis.RestartAsync();
        await RelayNodes.AllSeeAsync([alice, anna, bob], alice, anna, bob);
        bob.Handler = Answer;
        var again = await alice.RequestAsync<Sample, Sample>(bob.PeerId, new MessageEnvelope("double"), new Sample { A = 5 }, s_long);
        Assert.Equal((10, "bob"), (again.A, again.Text));
    }
}
