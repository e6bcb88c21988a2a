using System;
using System.Linq;
using System.Threading.Tasks;
using NetServer.P2P.Tests.Infrastructure;
using NetServer.Protobuf;
using Xunit;

namespace NetServer.P2P.Tests.Datagrams;

/// <summary>The UDP layer under abuse: pair keys of departed peers, floods, bad input.</summary>
public sealed class UdpHardeningTests
{
    private static readonly TimeSpan s_ready = TimeSpan.FromSeconds(10);

    [Fact]
    public async Task A_peer_that_pairs_with_a_victim_and_leaves_again_and_again_does_not_fill_the_victims_pair_keys()
    {
        await using var harness = new RelayHarness(new RelayServerOptions { MaxUdpPairsPerPeer = 2 });
        var victim = await harness.ConnectAsync("victim");
        Assert.True(await victim.UdpReady.WaitAsync(s_ready));

        for (var i = 0; i < 6; i++)
        {
            var attacker = new TestPeer(harness.Endpoint) { Name = $"attacker-{i}" };
            await attacker.ConnectAsync().WaitAsync(Wait.Default);
            Assert.True(await attacker.UdpReady.WaitAsync(s_ready));
            Assert.True(await attacker.SendDatagramAsync(victim.PeerId, "x"u8.ToArray()), $"pair {i}");
            await attacker.DisposeAsync();
            await Wait.UntilAsync(() => victim.LeftIds.Count == i + 1 && victim.PairSessionForTests(attacker.PeerId) is null, () => $"victim to see attacker {i} leave");
        }

        var friend = await harness.ConnectAsync("friend");
        Assert.True(await friend.UdpReady.WaitAsync(s_ready));
        Assert.True(await victim.SendDatagramAsync(friend.PeerId, "hello"u8.ToArray()));
        await Wait.UntilAsync(() => friend.Datagrams.Any(d => d.From == victim.PeerId), () => "friend to get the victim's datagram");
    }

    [Fact]
    public async Task Malformed_punch_requests_do_not_use_up_the_punch_sessions()
    {
        await using var harness = new RelayHarness();
        var alice = await harness.ConnectAsync("alice");
        var bob = await harness.ConnectAsync(new TestPeer(harness.Endpoint) { Name = "bob", MaxPunchRequestsPerMinute = 100 });
        Assert.True(await alice.UdpReady.WaitAsync(s_ready));
        Assert.True(await bob.UdpReady.WaitAsync(s_ready));
        Assert.True(await alice.SendDatagramAsync(bob.PeerId, "pair"u8.ToArray()));
        await Wait.UntilAsync(() => bob.PairSessionForTests(alice.PeerId) is not null, () => "bob to get the pair key");

        for (var i = 0; i < 3 * bob.MaxPunchSessions; i++)
            await alice.RequestAsync(bob.PeerId, new MessageEnvelope("p2p/punch") { Payload = new byte[] { 0x0A, 0xFF } }, TimeSpan.FromSeconds(5));

        Assert.Equal(RelayPath.Direct, await alice.ConnectDirectAsync(bob.PeerId, TimeSpan.FromSeconds(5)));
    }

    [Fact]
    public async Task Relayed_UDP_datagrams_are_held_to_the_peers_byte_rate()
    {
        await using var harness = new RelayHarness(new RelayServerOptions { PeerByteRate = 8_000 });
        var alice = await harness.ConnectAsync("alice");
        var bob = await harness.ConnectAsync("bob");
        Assert.True(await alice.UdpReady.WaitAsync(s_ready));
        Assert.True(await bob.UdpReady.WaitAsync(s_ready));
        var dropped = harness.Relay.Udp!.DatagramsDropped;

        var payload = new byte[1_000];
        for (var i = 0; i < 40; i++)
            Assert.True(await alice.SendDatagramAsync(bob.PeerId, payload));

        await Wait.UntilAsync(() => harness.Relay.Udp.DatagramsDropped - dropped >= 20, () => $"the relay to drop most: {harness.Relay.Udp.DatagramsDropped - dropped} dropped");
        await Task.Delay(200);
        Assert.True(bob.Datagrams.Count < 20, $"bob got {bob.Datagrams.Count} of 40 at 8,000 bytes a second");
    }
}
