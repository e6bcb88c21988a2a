using System;
using System.Diagnostics;
using System.Linq;
using System.Net;
using System.Threading.Tasks;
using NetServer.P2P.Tests.Infrastructure;
using NetServer.P2P.Wire;
using NetServer.P2P.Wire.Contracts;
using NetServer.Protobuf;
using Xunit;

namespace NetServer.P2P.Tests.Datagrams;

/// <summary>How long a punch lives on each side, and both sides asking at once (loopback).</summary>
public sealed class PunchLifetimeTests
{
    private static readonly TimeSpan s_ready = TimeSpan.FromSeconds(10);

    [Fact]
    public async Task The_asked_sides_punch_ends_after_its_grace_and_a_late_nomination_then_moves_nothing()
    {
        await using var harness = new RelayHarness();
        var alice = await harness.ConnectAsync(new TestPeer(harness.Endpoint) { Name = "alice", KeepaliveInterval = TimeSpan.FromMilliseconds(200) });
        var bob = await harness.ConnectAsync(new TestPeer(harness.Endpoint) { Name = "bob", KeepaliveInterval = TimeSpan.FromMilliseconds(200) });
        Assert.True(await alice.UdpReady.WaitAsync(s_ready));
        Assert.True(await bob.UdpReady.WaitAsync(s_ready));

        Assert.Equal(RelayPath.Direct, await alice.ConnectDirectAsync(bob.PeerId, TimeSpan.FromSeconds(5)));
        Assert.False(alice.IsPunchingForTests(bob.PeerId)); // the asker's punch ends with its try
        await Wait.UntilAsync(() => bob.GetPath(alice.PeerId) == RelayPath.Direct, () => "bob to take the nomination");
        Assert.True(bob.IsPunchingForTests(alice.PeerId), "the asked side keeps its punch a while for a late nomination");

        // Bob's direct path goes silent and falls back; then his punch ends (spray plus grace: two tries' length).
        bob.DropDirectForTests = true;
        await Wait.UntilAsync(() => bob.PathChanges.Contains((alice.PeerId, RelayPath.Relayed)), () => "bob's fallback");
        await Wait.UntilAsync(() => !bob.IsPunchingForTests(alice.PeerId), () => "bob's punch to end");
        bob.DropDirectForTests = false;

        // A nomination now (replayed by the peer, or just late) finds no punch: bob stays Relayed.
        Assert.True(alice.Send(bob.PeerId, new MessageEnvelope(RelayKinds.PeerPunchNominate)));
        Assert.True(alice.Send(bob.PeerId, new MessageEnvelope("after-nomination")));
        await Wait.UntilAsync(() => bob.Messages.Any(m => m.Header == "after-nomination"), () => "the marker after the nomination");
        Assert.Equal(RelayPath.Relayed, bob.GetPath(alice.PeerId));
        Assert.Single(bob.PathChanges, change => change == (alice.PeerId, RelayPath.Direct));
    }

    [Fact]
    public async Task The_asked_sides_punch_lives_two_tries_from_its_answer_even_when_its_spray_ends_early()
    {
        await using var harness = new RelayHarness();
        var alice = await harness.ConnectAsync("alice");
        var bob = await harness.ConnectAsync("bob");
        Assert.True(await alice.UdpReady.WaitAsync(s_ready));
        Assert.True(await bob.UdpReady.WaitAsync(s_ready));
        Assert.True(await alice.SendDatagramAsync(bob.PeerId, new byte[] { 1 })); // both sides hold the pair
        await Wait.UntilAsync(() => bob.Datagrams.Count == 1, () => "the pairing datagram");

        // 16 candidates (nothing listens there): 64 punches are spent in 4 rounds, under a second.
        var offer = new PunchOfferMessage();
        for (var i = 0; i < 16; i++)
        {
            var candidate = new byte[7];
            UdpFraming.WriteEndpoint(candidate, new IPEndPoint(IPAddress.Loopback, 40_000 + i));
            offer.Candidates.Add(candidate);
        }

        var clock = Stopwatch.StartNew();
        var answer = await alice.RequestAsync<PunchOfferMessage, PunchOfferMessage>(bob.PeerId, new MessageEnvelope(RelayKinds.PeerPunch), offer, TimeSpan.FromSeconds(5));
        Assert.False(answer.Refused);
        Assert.True(bob.IsPunchingForTests(alice.PeerId));
        await Wait.UntilAsync(() => !bob.IsPunchingForTests(alice.PeerId), () => "bob's punch to end");

        // A lower bound only (a slow machine ends it later, never sooner): two tries' length (5 s)
        // from the answer, not a try's length from the spray's early end (about 3.3 s).
        Assert.True(clock.Elapsed >= TimeSpan.FromSeconds(4.8), $"ended after {clock.Elapsed}");
    }

    [Fact]
    public async Task Both_peers_asking_at_once_both_end_direct()
    {
        await using var harness = new RelayHarness();
        var alice = await harness.ConnectAsync("alice");
        var bob = await harness.ConnectAsync("bob");
        Assert.True(await alice.UdpReady.WaitAsync(s_ready));
        Assert.True(await bob.UdpReady.WaitAsync(s_ready));

        var paths = await Task.WhenAll(alice.ConnectDirectAsync(bob.PeerId, TimeSpan.FromSeconds(9)), bob.ConnectDirectAsync(alice.PeerId, TimeSpan.FromSeconds(9)));
        Assert.Equal(new[] { RelayPath.Direct, RelayPath.Direct }, paths);
        Assert.Equal(RelayPath.Direct, alice.GetPath(bob.PeerId));
        Assert.Equal(RelayPath.Direct, bob.GetPath(alice.PeerId));
        Assert.True(await alice.SendDatagramAsync(bob.PeerId, new byte[] { 1 }));
        Assert.True(await bob.SendDatagramAsync(alice.PeerId, new byte[] { 2 }));
        await Wait.UntilAsync(() => bob.Datagrams.Count == 1 && alice.Datagrams.Count == 1, () => $"bob {bob.Datagrams.Count}, alice {alice.Datagrams.Count} of 1");
        Assert.All(bob.Datagrams, d => Assert.Equal(RelayPath.Direct, d.Path));
        Assert.All(alice.Datagrams, d => Assert.Equal(RelayPath.Direct, d.Path));
    }
}
