using System;
using System.Diagnostics;
using System.Linq;
using System.Threading.Tasks;
using NetServer.P2P.Tests.Infrastructure;
using Xunit;

namespace NetServer.P2P.Tests.Datagrams;

/// <summary>Hole punching on loopback (no NAT: the host candidates answer at once): Direct, keepalives, the fallback, the limits.</summary>
public sealed class PunchTests
{
    private static readonly TimeSpan s_ready = TimeSpan.FromSeconds(10);

    [Fact]
    public async Task Two_peers_on_loopback_go_direct_and_datagrams_then_skip_the_relay()
    {
        await using var harness = new RelayHarness();
        var alice = await harness.ConnectAsync("alice");
        var bob = await harness.ConnectAsync("bob");
        Assert.True(await alice.UdpReady.WaitAsync(s_ready));
        Assert.True(await bob.UdpReady.WaitAsync(s_ready));

        var clock = Stopwatch.StartNew();
        Assert.Equal(RelayPath.Direct, await alice.ConnectDirectAsync(bob.PeerId, TimeSpan.FromSeconds(5)));
        Assert.True(clock.Elapsed < TimeSpan.FromSeconds(3), $"took {clock.Elapsed}");
        Assert.Equal(RelayPath.Direct, alice.GetPath(bob.PeerId));
        await Wait.UntilAsync(() => bob.GetPath(alice.PeerId) == RelayPath.Direct, () => "bob to take the nomination");
        Assert.Contains((bob.PeerId, RelayPath.Direct), alice.PathChanges);

        var forwarded = harness.Relay.Udp!.DatagramsForwarded;
        for (var i = 0; i < 10; i++)
        {
            Assert.True(await alice.SendDatagramAsync(bob.PeerId, new[] { (byte)i }));
            Assert.True(await bob.SendDatagramAsync(alice.PeerId, new[] { (byte)i }));
        }

        await Wait.UntilAsync(() => bob.Datagrams.Count == 10 && alice.Datagrams.Count == 10, () => $"bob {bob.Datagrams.Count}, alice {alice.Datagrams.Count} of 10");
        Assert.All(bob.Datagrams.Concat(alice.Datagrams), d => Assert.Equal(RelayPath.Direct, d.Path));
        Assert.Equal(forwarded, harness.Relay.Udp.DatagramsForwarded);
        var statistics = alice.GetStatistics(bob.PeerId)!;
        Assert.Equal(RelayPath.Direct, statistics.Path);
        Assert.Equal(10, statistics.DatagramBytesSentDirect);
        Assert.Equal(0, statistics.DatagramBytesSentRelayed);
        Assert.Equal(1, statistics.PunchAttempts);
        Assert.Equal(1, statistics.PunchSuccesses);
        Assert.True(await alice.RequestHolePunchAsync(bob.PeerId, TimeSpan.FromSeconds(1)), "already direct");
    }

    [Fact]
    public async Task A_direct_path_that_stops_answering_falls_back_to_the_relay_with_an_event()
    {
        await using var harness = new RelayHarness();
        var alice = await harness.ConnectAsync(new TestPeer(harness.Endpoint) { Name = "alice", KeepaliveInterval = TimeSpan.FromMilliseconds(200) });
        var bob = await harness.ConnectAsync(new TestPeer(harness.Endpoint) { Name = "bob", KeepaliveInterval = TimeSpan.FromMilliseconds(200) });
        Assert.True(await alice.UdpReady.WaitAsync(s_ready));
        Assert.True(await bob.UdpReady.WaitAsync(s_ready));
        Assert.Equal(RelayPath.Direct, await alice.ConnectDirectAsync(bob.PeerId, TimeSpan.FromSeconds(5)));

        await Task.Delay(1500); // keepalives hold it (4 intervals of silence would drop it)
        Assert.Equal(RelayPath.Direct, alice.GetPath(bob.PeerId));

        alice.DropDirectForTests = true; // bob's keepalives no longer reach alice
        await Wait.UntilAsync(() => alice.PathChanges.Contains((bob.PeerId, RelayPath.Relayed)), () => "alice's fallback event");
        Assert.Equal(RelayPath.Relayed, alice.GetPath(bob.PeerId));
        alice.DropDirectForTests = false;
        Assert.True(await alice.SendDatagramAsync(bob.PeerId, "after"u8.ToArray()));
        await Wait.UntilAsync(() => bob.Datagrams.Any(d => d.Path == RelayPath.Relayed), () => "the datagram through the relay");
    }

    [Fact]
    public async Task Punch_requests_over_the_peers_limit_are_refused_and_the_asker_ends_Relayed()
    {
        await using var harness = new RelayHarness();
        var alice = await harness.ConnectAsync("alice");
        var bob = await harness.ConnectAsync(new TestPeer(harness.Endpoint) { Name = "bob", MaxPunchRequestsPerMinute = 0 });
        Assert.True(await alice.UdpReady.WaitAsync(s_ready));
        Assert.True(await bob.UdpReady.WaitAsync(s_ready));
        var clock = Stopwatch.StartNew();
        Assert.Equal(RelayPath.Relayed, await alice.ConnectDirectAsync(bob.PeerId, TimeSpan.FromSeconds(5)));
        Assert.True(clock.Elapsed < TimeSpan.FromSeconds(2), $"a refusal is quick: {clock.Elapsed}");
        Assert.Equal(1, alice.GetStatistics(bob.PeerId)!.PunchAttempts);
        Assert.Equal(0, alice.GetStatistics(bob.PeerId)!.PunchSuccesses);
        Assert.True(await alice.SendDatagramAsync(bob.PeerId, "still"u8.ToArray()));
        await Wait.UntilAsync(() => bob.Datagrams.Count == 1, () => "the datagram through the relay");
    }
}
