using System;
using System.Linq;
using System.Threading.Tasks;
using NetServer.P2P.Tests.Infrastructure;
using Xunit;

namespace NetServer.P2P.Tests.Relay;

/// <summary>The peer list: one snapshot per peer at registration, then one delta per change, never the whole list again.</summary>
public sealed class PeerListTests
{
    [Fact]
    public async Task A_hundred_peers_joining_and_leaving_see_only_deltas()
    {
        const int Peers = 100;
        const int Leaving = 40;
        await using var harness = new RelayHarness(new RelayServerOptions { MaxPeersPerAddress = 0 });
        var peers = await harness.ConnectManyAsync(Peers);
        await RelayHarness.AllSeeAsync(peers, Peers);

        foreach (var peer in peers.Take(Leaving))
            await peer.DisconnectAsync();
        var staying = peers.Skip(Leaving).ToArray();
        await RelayHarness.AllSeeAsync(staying, Peers - Leaving);

        var version = harness.Relay.PeersVersion;
        Assert.Equal(Peers + Leaving, version);
        var expected = harness.Relay.GetPeers().Select(p => p.Id).Order().ToArray();
        foreach (var peer in staying)
        {
            // The list: the relay's, at the relay's version.
            Assert.Equal(expected, peer.GetPeers().Select(p => p.Id).Order());
            Assert.Equal(version, peer.PeersVersion);

            // What it took: the list once (in its welcome), then exactly one delta per change after
            // its own registration, and no snapshot: nobody pushed the whole list on a change.
            var joinedAt = harness.Relay.TryGetPeerStatistics(peer.PeerId, out var statistics) ? statistics!.JoinedVersion : -1;
            Assert.Equal(version - joinedAt, peer.DeltasReceived);
            Assert.Equal(0, peer.SnapshotsReceived);
            Assert.Equal(1, peer.Synchronizations);
            Assert.Equal(Peers, peer.Joined); // those it found at registration, itself, and those after
            Assert.Equal(Leaving, peer.Left);
        }

        // Bytes, all peers together. With deltas: a welcome of k entries for the k-th peer (about
        // 100 x 100 / 2 x 40 B) plus about 100 x 100 deltas of ~70 B: under 1.5 MB. A full list
        // pushed to everyone on each of the 140 changes would be over 10 MB.
        var received = staying.Sum(p => p.BytesReceived) + peers.Take(Leaving).Sum(p => p.BytesReceived);
        Assert.True(received < 1_500_000, $"the peers received {received} bytes for {version} changes");
    }

    [Fact]
    public async Task A_peer_whose_connection_drops_leaves_the_others_lists()
    {
        await using var harness = new RelayHarness();
        var a = await harness.ConnectAsync("a");
        var b = await harness.ConnectAsync("b");
        var gone = new TestPeer(harness.Endpoint) { Name = "gone" };
        await gone.ConnectAsync().WaitAsync(Wait.Default);
        await RelayHarness.AllSeeAsync([a, b, gone], 3);
        var id = gone.PeerId;

        gone.Dispose(); // no goodbye: the relay sees the connection end
        await RelayHarness.AllSeeAsync([a, b], 2);
        Assert.Contains(id, a.LeftIds);
        Assert.Contains(id, b.LeftIds);
        Assert.False(a.TryGetPeer(id, out _));
        Assert.False(harness.Relay.TryGetPeer(id, out _));
    }

    [Fact]
    public async Task A_lost_delta_is_seen_as_a_gap_and_healed_by_one_snapshot()
    {
        await using var harness = new RelayHarness();
        var watcher = await harness.ConnectAsync("watcher");
        watcher.DropDeltasForTests = 1;
        var lost = await harness.ConnectAsync("lost");       // its delta is dropped: the list misses it
        await Wait.UntilAsync(() => watcher.DropDeltasForTests == 0, () => "the delta to be dropped");
        Assert.Equal(1, watcher.PeerCount);

        var next = await harness.ConnectAsync("next");       // one version further: the gap shows
        await RelayHarness.AllSeeAsync([watcher, lost, next], 3);
        Assert.Equal(1, watcher.SnapshotsReceived);
        Assert.Equal(2, watcher.Synchronizations);           // the welcome's list and the snapshot
        Assert.Equal(harness.Relay.PeersVersion, watcher.PeersVersion);
        Assert.Contains(lost.PeerId, watcher.JoinedIds);
        Assert.Contains(next.PeerId, watcher.JoinedIds);
    }

    [Fact]
    public async Task Snapshots_to_one_peer_are_spaced_by_the_snapshot_interval()
    {
        var interval = TimeSpan.FromMilliseconds(600);
        await using var harness = new RelayHarness(new RelayServerOptions { SnapshotInterval = interval });
        var watcher = await harness.ConnectAsync("watcher");
        var others = new[] { await harness.ConnectAsync("1") };

        var first = DateTime.UtcNow;
        watcher.DropDeltasForTests = 1;
        others = [.. others, await harness.ConnectAsync("2")];
        others = [.. others, await harness.ConnectAsync("3")];
        await Wait.UntilAsync(() => watcher.SnapshotsReceived == 1 && watcher.IsPeerListSynchronized, () => "the first snapshot");

        watcher.DropDeltasForTests = 1;
        others = [.. others, await harness.ConnectAsync("4")];
        var asked = DateTime.UtcNow;
        others = [.. others, await harness.ConnectAsync("5")];
        await Wait.UntilAsync(() => watcher.SnapshotsReceived == 2 && watcher.IsPeerListSynchronized, () => "the second snapshot");
        var healed = DateTime.UtcNow;

        // The second came no sooner than the interval after the first, and still came.
        Assert.True(healed - first >= interval - TimeSpan.FromMilliseconds(20), $"the second snapshot came {(healed - first).TotalMilliseconds:0} ms after the first");
        Assert.True(healed >= asked);
        Assert.Equal(6, watcher.PeerCount);
    }

    [Fact]
    public async Task Stopping_the_relay_disconnects_every_peer_without_a_departure_delta_each()
    {
        await using var harness = new RelayHarness();
        var peers = await harness.ConnectManyAsync(10);
        await RelayHarness.AllSeeAsync(peers, 10);
        var deltas = peers.Sum(p => p.DeltasReceived);

        Assert.True(harness.Relay.Stop());
        await Wait.UntilAsync(() => peers.All(p => !p.IsConnected), () => "every peer to be disconnected");
        Assert.Equal(deltas, peers.Sum(p => p.DeltasReceived)); // 10 x 9 peer-left deltas would be wasted on peers that are all leaving
        Assert.Equal(0, harness.Relay.PeerCount);
    }
}
