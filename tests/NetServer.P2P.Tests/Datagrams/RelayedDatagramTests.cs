using System;
using System.Collections.Concurrent;
using System.Linq;
using System.Net;
using System.Net.Sockets;
using System.Text;
using System.Threading.Tasks;
using NetServer.P2P.Tests.Infrastructure;
using NetServer.Protobuf;
using Xunit;

namespace NetServer.P2P.Tests.Datagrams;

/// <summary>UDP datagrams between peers through the relay, on loopback: BIND, the pair key, the relay's outer layer only, the TLS fallback, forgeries.</summary>
public sealed class RelayedDatagramTests
{
    private static readonly TimeSpan s_ready = TimeSpan.FromSeconds(10);

    [Fact]
    public async Task A_client_learns_its_server_reflexive_endpoint_from_the_relays_BINDACK()
    {
        await using var harness = new RelayHarness();
        var peer = await harness.ConnectAsync("alice");
        Assert.True(await peer.UdpReady.WaitAsync(s_ready));
        Assert.True(peer.IsUdpAvailable);
        Assert.Equal(IPAddress.Loopback, peer.ServerReflexiveEndpoint!.Address);
        Assert.Equal(peer.LocalUdpEndpoint!.Port, peer.ServerReflexiveEndpoint.Port);
        Assert.NotEqual(0, harness.Relay.UdpPort);
    }

    [Fact]
    public async Task Datagrams_reach_the_peer_through_the_relay_which_never_sees_the_payload()
    {
        await using var harness = new RelayHarness();
        var seen = new ConcurrentQueue<byte[]>();
        var alice = await harness.ConnectAsync("alice");
        var bob = await harness.ConnectAsync("bob");
        Assert.True(await alice.UdpReady.WaitAsync(s_ready));
        Assert.True(await bob.UdpReady.WaitAsync(s_ready));
        harness.Relay.Udp!.ObserveForTests = seen.Enqueue;

        for (var i = 0; i < 20; i++)
            Assert.True(await alice.SendDatagramAsync(bob.PeerId, Encoding.ASCII.GetBytes($"secret-payload-{i:00}")));
        await Wait.UntilAsync(() => bob.Datagrams.Count >= 20, () => $"bob got {bob.Datagrams.Count} of 20");

        Assert.All(bob.Datagrams, d => Assert.Equal(alice.PeerId, d.From));
        Assert.All(bob.Datagrams, d => Assert.Equal(RelayPath.Relayed, d.Path));
        Assert.Equal(Enumerable.Range(0, 20).Select(i => $"secret-payload-{i:00}").Order(), bob.Datagrams.Select(d => Encoding.ASCII.GetString(d.Payload)).Order());
        Assert.True(seen.Count >= 40, "the relay saw each datagram, raw and opened");
        var plaintext = Encoding.ASCII.GetBytes("secret-payload");
        Assert.DoesNotContain(seen, bytes => bytes.AsSpan().IndexOf(plaintext) >= 0);

        // And back, on the key bob got from the relay without asking.
        Assert.True(await bob.SendDatagramAsync(alice.PeerId, "pong"u8.ToArray()));
        await Wait.UntilAsync(() => alice.Datagrams.Any(d => d.From == bob.PeerId && d.Payload.AsSpan().SequenceEqual("pong"u8)), () => "alice to get pong");
        var statistics = bob.GetStatistics(alice.PeerId)!;
        Assert.Equal(20 * 17, statistics.DatagramBytesReceivedRelayed);
        Assert.Equal(0, statistics.DatagramBytesReceivedDirect);
    }

    [Fact]
    public async Task With_UDP_to_the_relay_blocked_datagrams_go_over_TLS_and_are_still_delivered()
    {
        await using var harness = new RelayHarness();
        int closedPort;
        using (var probe = new Socket(AddressFamily.InterNetwork, SocketType.Dgram, ProtocolType.Udp))
        {
            probe.Bind(new IPEndPoint(IPAddress.Loopback, 0));
            closedPort = ((IPEndPoint)probe.LocalEndPoint!).Port;
        }

        var blocked = await harness.ConnectAsync(new TestPeer(harness.Endpoint) { Name = "blocked", UdpPortOverrideForTests = closedPort, UdpBindTimeout = TimeSpan.FromMilliseconds(500) });
        var open = await harness.ConnectAsync("open");
        Assert.False(await blocked.UdpReady.WaitAsync(s_ready));
        Assert.True(await open.UdpReady.WaitAsync(s_ready));

        for (var i = 0; i < 10; i++)
        {
            Assert.True(await blocked.SendDatagramAsync(open.PeerId, new[] { (byte)i }));
            Assert.True(await open.SendDatagramAsync(blocked.PeerId, new[] { (byte)(100 + i) }));
        }

        await Wait.UntilAsync(() => open.Datagrams.Count == 10 && blocked.Datagrams.Count == 10, () => $"open got {open.Datagrams.Count}, blocked {blocked.Datagrams.Count} of 10");
        Assert.Equal(Enumerable.Range(0, 10).Select(i => (byte)i), open.Datagrams.Select(d => d.Payload[0]).Order());
        Assert.Equal(Enumerable.Range(100, 10).Select(i => (byte)i), blocked.Datagrams.Select(d => d.Payload[0]).Order());
        Assert.Equal(RelayPath.Relayed, await blocked.ConnectDirectAsync(open.PeerId, TimeSpan.FromSeconds(3)));
    }

    [Fact]
    public async Task A_forged_datagram_is_counted_and_dropped_and_changes_nothing()
    {
        await using var harness = new RelayHarness();
        var alice = await harness.ConnectAsync("alice");
        var bob = await harness.ConnectAsync("bob");
        Assert.True(await alice.UdpReady.WaitAsync(s_ready));
        Assert.True(await bob.UdpReady.WaitAsync(s_ready));
        Assert.True(await alice.SendDatagramAsync(bob.PeerId, "first"u8.ToArray()));
        await Wait.UntilAsync(() => bob.Datagrams.Count == 1, () => "the first datagram");

        // The right indexes, a wrong key: sent straight to bob's socket, and to the relay's.
        var real = bob.PairSessionForTests(alice.PeerId)!;
        using var forger = new SecureUdpSession(SecureUdpSession.NewSecret(), "forged"u8, SecureUdpRole.Initiator, real.RemoteIndex, real.LocalIndex);
        var forged = new byte[64];
        var length = forger.Seal(SecureDatagramType.Data, "forged"u8, forged);
        using var socket = new Socket(AddressFamily.InterNetwork, SocketType.Dgram, ProtocolType.Udp);
        for (var i = 0; i < 5; i++)
        {
            socket.SendTo(forged, 0, length, SocketFlags.None, new IPEndPoint(IPAddress.Loopback, bob.LocalUdpEndpoint!.Port));
            socket.SendTo(forged, 0, length, SocketFlags.None, new IPEndPoint(IPAddress.Loopback, harness.Relay.UdpPort));
            length = forger.Seal(SecureDatagramType.Data, "forged"u8, forged);
        }

        // The forger's counter 0 is taken already (alice's first): a replay, dropped before any AEAD work; the other four fail the tag.
        await Wait.UntilAsync(() => bob.GetStatistics(alice.PeerId) is { AuthenticationFailures: 4, ReplaysDropped: 1 }, () => $"4 authentication failures and a replay: {bob.GetStatistics(alice.PeerId)!.AuthenticationFailures}, {bob.GetStatistics(alice.PeerId)!.ReplaysDropped}");
        Assert.True(await alice.SendDatagramAsync(bob.PeerId, "second"u8.ToArray()));
        await Wait.UntilAsync(() => bob.Datagrams.Count == 2, () => "the second datagram");
        Assert.Equal(["first", "second"], bob.Datagrams.Select(d => Encoding.ASCII.GetString(d.Payload)));
        Assert.Equal(RelayPath.Relayed, bob.GetPath(alice.PeerId));
    }

    [Fact]
    public async Task A_spoofed_From_changes_nothing_the_relay_names_the_true_source()
    {
        await using var harness = new RelayHarness();
        var alice = await harness.ConnectAsync("alice");
        var bob = await harness.ConnectAsync("bob");
        var mallory = await harness.ConnectAsync("mallory");
        Assert.True(await bob.UdpReady.WaitAsync(s_ready));
        Assert.True(await alice.SendDatagramAsync(bob.PeerId, "from alice"u8.ToArray()));
        await Wait.UntilAsync(() => bob.Datagrams.Count == 1, () => "alice's datagram");

        // A look-alike relay/udp routed to bob with alice's id as From: refused, nothing delivered.
        var spoof = new MessageEnvelope("relay/udp") { From = alice.PeerId, Payload = new byte[64] };
        Assert.True(mallory.Send(bob.PeerId, spoof));
        await Wait.UntilAsync(() => mallory.Failures.Any(f => f.Status == RelayStatus.Forbidden), () => "the Forbidden status");

        // Mallory's own datagram reaches bob as mallory's, whatever she claims.
        Assert.True(await mallory.SendDatagramAsync(bob.PeerId, "from mallory"u8.ToArray()));
        await Wait.UntilAsync(() => bob.Datagrams.Count == 2, () => "mallory's datagram");
        Assert.Equal([alice.PeerId, mallory.PeerId], bob.Datagrams.Select(d => d.From));
        Assert.Equal(0, bob.Received);
    }

    [Fact]
    public async Task A_datagram_replayed_to_the_relay_is_delivered_once()
    {
        await using var harness = new RelayHarness();
        var alice = await harness.ConnectAsync("alice");
        var bob = await harness.ConnectAsync("bob");
        Assert.True(await alice.UdpReady.WaitAsync(s_ready));
        Assert.True(await bob.UdpReady.WaitAsync(s_ready));
        var raw = new ConcurrentQueue<byte[]>();
        harness.Relay.Udp!.ObserveForTests = bytes => { if (bytes.Length > 0 && bytes[0] == (byte)SecureDatagramType.Relayed) raw.Enqueue(bytes); };
        Assert.True(await alice.SendDatagramAsync(bob.PeerId, "once"u8.ToArray()));
        await Wait.UntilAsync(() => bob.Datagrams.Count == 1, () => "the datagram");
        Assert.True(raw.TryPeek(out var captured), "the relay saw the raw datagram");

        // An on-path attacker sends the captured datagram again, from its own socket: the relay's replay window drops it.
        using var socket = new Socket(AddressFamily.InterNetwork, SocketType.Dgram, ProtocolType.Udp);
        await Wait.UntilAsync(() => harness.Relay.Udp.DatagramsForwarded == 1, () => "the relay to count its one forward"); // counted after the send that bob may see first
        var forwarded = harness.Relay.Udp.DatagramsForwarded;
        for (var i = 0; i < 3; i++)
            socket.SendTo(captured!, new IPEndPoint(IPAddress.Loopback, harness.Relay.UdpPort));
        await Task.Delay(300);
        Assert.Equal(forwarded, harness.Relay.Udp.DatagramsForwarded);
        Assert.Single(bob.Datagrams);
        Assert.True(await alice.SendDatagramAsync(bob.PeerId, "twice"u8.ToArray()), "alice's path is unchanged");
        await Wait.UntilAsync(() => bob.Datagrams.Count == 2, () => "the next datagram");
    }
}
