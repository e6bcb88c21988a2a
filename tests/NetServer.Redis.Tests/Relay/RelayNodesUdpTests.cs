using System;
using System.Collections.Concurrent;
using System.Linq;
using System.Net;
using System.Net.Sockets;
using System.Text;
using System.Threading.Tasks;
using NetServer.P2P;
using NetServer.P2P.Tests.Infrastructure;
using NetServer.P2P.Wire;
using NetServer.Tests.Infrastructure;
using Xunit;

namespace NetServer.Redis.Tests.Relay;

/// <summary>
/// UDP between peers of two relay nodes on one real redis-server: the pair key made on the
/// requester's node and delivered by the other, relayed datagrams forwarded node to node (sealed
/// end to end), hole punching, the TLS fallback, departures, both peers asking at once, and a
/// backplane that refuses.
/// </summary>
public sealed class RelayNodesUdpTests
{
    private static readonly TimeSpan s_ready = TimeSpan.FromSeconds(10);

    private static Task<RelayNodes> StartAsync(int count = 2) => RelayNodes.StartAsync(count, configure: o => o.UdpEnabled = true);

    private static async Task<(TestPeer Alice, TestPeer Bob)> ConnectPairAsync(RelayNodes nodes)
    {
        var alice = await nodes.ConnectAsync(0, "alice");
        var bob = await nodes.ConnectAsync(1, "bob");
        await RelayNodes.AllSeeAsync([alice, bob], alice, bob);
        Assert.True(await alice.UdpReady.WaitAsync(s_ready));
        Assert.True(await bob.UdpReady.WaitAsync(s_ready));
        return (alice, bob);
    }

    [RedisFact]
    public async Task Datagrams_to_a_peer_of_another_node_are_forwarded_node_to_node_and_no_relay_sees_the_payload()
    {
        await using var nodes = await StartAsync();
        var (alice, bob) = await ConnectPairAsync(nodes);
        var seen = new ConcurrentQueue<byte[]>();
        nodes.Relays[0].Udp!.ObserveForTests = seen.Enqueue;
        nodes.Relays[1].Udp!.ObserveForTests = seen.Enqueue;

        for (var i = 0; i < 20; i++)
            Assert.True(await alice.SendDatagramAsync(bob.PeerId, Encoding.ASCII.GetBytes($"secret-payload-{i:00}")));
        await Wait.UntilAsync(() => bob.Datagrams.Count >= 20, () => $"bob got {bob.Datagrams.Count} of 20");

        Assert.All(bob.Datagrams, d => Assert.Equal((alice.PeerId, RelayPath.Relayed), (d.From, d.Path)));
        Assert.Equal(Enumerable.Range(0, 20).Select(i => $"secret-payload-{i:00}").Order(), bob.Datagrams.Select(d => Encoding.ASCII.GetString(d.Payload)).Order());

        // Node 0 forwarded them over the backplane, node 1 sent them on from its own UDP port.
        Assert.Equal(20, nodes.Relays[1].Cluster!.DatagramsFromNodes);
        Assert.True(nodes.Relays[1].Udp!.DatagramsForwarded >= 20, $"node 1 forwarded {nodes.Relays[1].Udp!.DatagramsForwarded}");
        Assert.DoesNotContain(seen, bytes => bytes.AsSpan().IndexOf("secret-payload"u8) >= 0);

        // One key, made on alice's node: bob got his view of it without asking, and answers on it.
        var mine = alice.PairSessionForTests(bob.PeerId)!;
        var theirs = bob.PairSessionForTests(alice.PeerId)!;
        Assert.Equal((mine.LocalIndex, mine.RemoteIndex), (theirs.RemoteIndex, theirs.LocalIndex));
        Assert.True(await bob.SendDatagramAsync(alice.PeerId, "pong"u8.ToArray()));
        await Wait.UntilAsync(() => alice.Datagrams.Any(d => d.From == bob.PeerId && d.Payload.AsSpan().SequenceEqual("pong"u8)), () => "alice to get pong");
        Assert.Equal(1, nodes.Relays[0].Cluster!.DatagramsFromNodes);
        Assert.Equal((1, 1), (nodes.Relays[0].Udp!.PairCount, nodes.Relays[1].Udp!.PairCount));
    }

    [RedisFact]
    public async Task Peers_of_two_nodes_punch_through_and_their_datagrams_then_skip_both_relays()
    {
        await using var nodes = await StartAsync();
        var (alice, bob) = await ConnectPairAsync(nodes);

        Assert.Equal(RelayPath.Direct, await alice.ConnectDirectAsync(bob.PeerId, TimeSpan.FromSeconds(8)));
        await Wait.UntilAsync(() => bob.GetPath(alice.PeerId) == RelayPath.Direct, () => "bob to take the nomination");

        var forwarded = (nodes.Relays[0].Udp!.DatagramsForwarded, nodes.Relays[1].Udp!.DatagramsForwarded);
        for (var i = 0; i < 10; i++)
        {
            Assert.True(await alice.SendDatagramAsync(bob.PeerId, new[] { (byte)i }));
            Assert.True(await bob.SendDatagramAsync(alice.PeerId, new[] { (byte)(100 + i) }));
        }

        await Wait.UntilAsync(() => bob.Datagrams.Count == 10 && alice.Datagrams.Count == 10, () => $"bob {bob.Datagrams.Count}, alice {alice.Datagrams.Count} of 10");
        Assert.All(bob.Datagrams.Concat(alice.Datagrams), d => Assert.Equal(RelayPath.Direct, d.Path));
        Assert.Equal(forwarded, (nodes.Relays[0].Udp!.DatagramsForwarded, nodes.Relays[1].Udp!.DatagramsForwarded));
        Assert.Equal((0L, 0L), (nodes.Relays[0].Cluster!.DatagramsFromNodes, nodes.Relays[1].Cluster!.DatagramsFromNodes));
        Assert.Equal(1, alice.GetStatistics(bob.PeerId)!.PunchSuccesses);
    }

    [RedisFact]
    public async Task A_peer_whose_UDP_to_its_relay_is_blocked_exchanges_datagrams_over_TLS_with_a_peer_of_another_node()
    {
        await using var nodes = await StartAsync();
        int closedPort;
        using (var probe = new Socket(AddressFamily.InterNetwork, SocketType.Dgram, ProtocolType.Udp))
        {
            probe.Bind(new IPEndPoint(IPAddress.Loopback, 0));
            closedPort = ((IPEndPoint)probe.LocalEndPoint!).Port;
        }

        var blocked = await nodes.ConnectAsync(new TestPeer(nodes.Endpoint(0)) { Name = "blocked", UdpPortOverrideForTests = closedPort, UdpBindTimeout = TimeSpan.FromMilliseconds(500) });
        var open = await nodes.ConnectAsync(1, "open");
        await RelayNodes.AllSeeAsync([blocked, open], blocked, open);
        Assert.False(await blocked.UdpReady.WaitAsync(s_ready));
        Assert.True(await open.UdpReady.WaitAsync(s_ready));

        // blocked -> node 0 over TLS -> node 1's UDP port; open -> node 1's UDP port -> node 0 -> TLS.
        for (var i = 0; i < 10; i++)
        {
            Assert.True(await blocked.SendDatagramAsync(open.PeerId, new[] { (byte)i }));
            Assert.True(await open.SendDatagramAsync(blocked.PeerId, new[] { (byte)(100 + i) }));
        }

        await Wait.UntilAsync(() => open.Datagrams.Count == 10 && blocked.Datagrams.Count == 10, () => $"open got {open.Datagrams.Count}, blocked {blocked.Datagrams.Count} of 10");
        Assert.Equal(Enumerable.Range(0, 10).Select(i => (byte)i), open.Datagrams.Select(d => d.Payload[0]).Order());
        Assert.Equal(Enumerable.Range(100, 10).Select(i => (byte)i), blocked.Datagrams.Select(d => d.Payload[0]).Order());
    }

    [RedisFact]
    public async Task A_peer_of_another_node_that_left_takes_its_pair_keys_with_it_and_a_new_one_is_refused_as_UnknownPeer()
    {
        await using var nodes = await StartAsync();
        var (alice, bob) = await ConnectPairAsync(nodes);
        Assert.True(await alice.SendDatagramAsync(bob.PeerId, "hello"u8.ToArray()));
        await Wait.UntilAsync(() => bob.Datagrams.Count == 1, () => "the first datagram");

        var bobId = bob.PeerId;
        await bob.DisposeAsync();
        await Wait.UntilAsync(() => alice.LeftIds.Contains(bobId), () => "alice to see bob leave");
        await Wait.UntilAsync(() => nodes.Relays[0].Udp!.PairCount == 0 && nodes.Relays[1].Udp!.PairCount == 0, () => "both nodes to drop the pair");
        Assert.Null(alice.PairSessionForTests(bobId));

        var refused = await Assert.ThrowsAsync<RelayException>(async () => await alice.SendDatagramAsync(bobId, "again"u8.ToArray()));
        Assert.Equal(RelayStatus.UnknownPeer, refused.Status);
        Assert.Equal(RelayPath.Relayed, await alice.ConnectDirectAsync(bobId, TimeSpan.FromSeconds(2)));
    }

    [RedisFact]
    public async Task Peers_that_ask_for_their_pair_key_at_once_each_on_its_node_end_with_one_key()
    {
        await using var nodes = await StartAsync();
        const int Pairs = 4;
        var left = new TestPeer[Pairs];
        var right = new TestPeer[Pairs];
        for (var i = 0; i < Pairs; i++)
        {
            left[i] = await nodes.ConnectAsync(0, $"left{i}");
            right[i] = await nodes.ConnectAsync(1, $"right{i}");
        }

        TestPeer[] all = [.. left, .. right];
        await RelayNodes.AllSeeAsync(all, all);
        foreach (var peer in all)
            Assert.True(await peer.UdpReady.WaitAsync(s_ready));

        // Both ends of each pair ask at the same moment: each node may make a key of its own.
        await Task.WhenAll(Enumerable.Range(0, Pairs).SelectMany(i => new[]
        {
            left[i].SendDatagramAsync(right[i].PeerId, "L"u8.ToArray()).AsTask(),
            right[i].SendDatagramAsync(left[i].PeerId, "R"u8.ToArray()).AsTask(),
        })).WaitAsync(s_ready);

        await Wait.UntilAsync(
            () => Enumerable.Range(0, Pairs).All(i => left[i].PairSessionForTests(right[i].PeerId) is { } l && right[i].PairSessionForTests(left[i].PeerId) is { } r && l.LocalIndex == r.RemoteIndex && l.RemoteIndex == r.LocalIndex),
            () => "both ends of every pair to hold the same key");
        Assert.Equal((Pairs, Pairs), (nodes.Relays[0].Udp!.PairCount, nodes.Relays[1].Udp!.PairCount));

        for (var i = 0; i < Pairs; i++)
        {
            Assert.True(await left[i].SendDatagramAsync(right[i].PeerId, "after"u8.ToArray()));
            Assert.True(await right[i].SendDatagramAsync(left[i].PeerId, "after"u8.ToArray()));
        }

        await Wait.UntilAsync(
            () => all.All(p => p.Datagrams.Any(d => d.Payload.AsSpan().SequenceEqual("after"u8))),
            () => "every peer to get the datagram sent on the agreed key");
    }

    [RedisFact]
    public async Task A_backplane_that_refuses_peer_traffic_fails_the_pair_key_at_once_and_drops_datagrams_it_does_not_hold()
    {
        await using var nodes = await RelayNodes.StartAsync(1, configure: o => o.UdpEnabled = true);
        FilteringBackplane? refusing = null;
        var second = await nodes.AddNodeAsync(wrap: b => refusing = new FilteringBackplane(b), configure: o => o.UdpEnabled = true);
        var alice = await nodes.ConnectAsync(second, "alice");
        var bob = await nodes.ConnectAsync(0, "bob");
        await RelayNodes.AllSeeAsync([alice, bob], alice, bob);
        Assert.True(await alice.UdpReady.WaitAsync(s_ready));
        Assert.True(await bob.UdpReady.WaitAsync(s_ready));

        // The pair key cannot reach bob's node: alice is told, and her node keeps no half of it.
        refusing!.Kind = ClusterKind.UdpPair;
        var refused = await Assert.ThrowsAsync<RelayException>(async () => await alice.SendDatagramAsync(bob.PeerId, "x"u8.ToArray()));
        Assert.Equal(RelayStatus.NodeUnavailable, refused.Status);
        Assert.Equal(0, nodes.Relays[second].Udp!.PairCount);

        // Taken the second time; then the backplane refuses the datagrams: dropped and counted, none held for later.
        refusing.Kind = null;
        Assert.True(await alice.SendDatagramAsync(bob.PeerId, "through"u8.ToArray()));
        await Wait.UntilAsync(() => bob.Datagrams.Count == 1, () => "the first datagram");
        refusing.Kind = ClusterKind.UdpDatagram;
        var dropped = nodes.Relays[second].Udp!.DatagramsDropped;
        var refusals = refusing.Filtered;
        for (var i = 0; i < 10; i++)
            Assert.True(await alice.SendDatagramAsync(bob.PeerId, "lost"u8.ToArray()));
        await Wait.UntilAsync(() => nodes.Relays[second].Udp!.DatagramsDropped >= dropped + 10, () => $"10 datagrams dropped, {nodes.Relays[second].Udp!.DatagramsDropped - dropped} so far");
        Assert.Equal(10, refusing.Filtered - refusals);

        refusing.Kind = null;
        Assert.True(await alice.SendDatagramAsync(bob.PeerId, "later"u8.ToArray()));
        await Wait.UntilAsync(() => bob.Datagrams.Count == 2, () => "the datagram after the refusals");
        Assert.Equal(["through", "later"], bob.Datagrams.Select(d => Encoding.ASCII.GetString(d.Payload)));
    }

    [RedisFact]
    public async Task A_pair_key_the_other_node_refuses_over_its_limit_reaches_the_requesters_OnDeliveryFailed()
    {
        await using var nodes = await RelayNodes.StartAsync(2, configure: o => { o.UdpEnabled = true; o.MaxUdpPairsPerPeer = 1; });
        var alice = await nodes.ConnectAsync(0, "alice");
        var bob = await nodes.ConnectAsync(1, "bob");
        var dave = await nodes.ConnectAsync(1, "dave");
        await RelayNodes.AllSeeAsync([alice, bob, dave], alice, bob, dave);
        foreach (var peer in new[] { alice, bob, dave })
            Assert.True(await peer.UdpReady.WaitAsync(s_ready));

        // Bob holds his one pair key (with dave); alice's node cannot know that, bob's node refuses hers.
        Assert.True(await bob.SendDatagramAsync(dave.PeerId, "local"u8.ToArray()));
        Assert.True(await alice.SendDatagramAsync(bob.PeerId, "x"u8.ToArray()));
        await Wait.UntilAsync(() => !alice.Failures.IsEmpty, () => "the refusal from bob's node");
        var failure = alice.Failures.Single();
        Assert.Equal((RelayStatus.ResourceLimitExceeded, bob.PeerId), (failure.Status, failure.To));
        Assert.Null(bob.PairSessionForTests(alice.PeerId));
        Assert.Equal(1, nodes.Relays[1].Udp!.PairCount); // bob and dave's only
    }
}
