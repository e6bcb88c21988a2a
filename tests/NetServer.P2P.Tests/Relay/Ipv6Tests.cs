using System;
using System.Diagnostics;
using System.Linq;
using System.Net;
using System.Net.Sockets;
using System.Threading.Tasks;
using NetServer.P2P.Tests.Infrastructure;
using NetServer.Protobuf;
using Xunit;

namespace NetServer.P2P.Tests.Relay;

/// <summary>
/// The relay and its clients over IPv6: a relay on ::1, and a dual-stack relay on [::] with IPv4
/// and IPv6 peers at once. Registration, routed envelopes and requests, the BINDACK's endpoint,
/// relayed datagrams, hole punching to Direct, and a punch between the two families ending
/// Relayed at once.
/// </summary>
/// <remarks>
/// The dual-stack tests bind [::] (port 0, for a few seconds): the one way to have IPv4 and IPv6
/// on one socket. Everything connects through 127.0.0.1 or ::1.
/// </remarks>
public sealed class Ipv6Tests
{
    private static readonly TimeSpan s_ready = TimeSpan.FromSeconds(10);

    [Ipv6LoopbackFact]
    public async Task Peers_register_and_exchange_envelopes_and_requests_through_a_relay_on_IPv6_loopback()
    {
        await using var harness = new RelayHarness(address: IPAddress.IPv6Loopback);
        var alice = await harness.ConnectAsync("alice");
        var bob = await harness.ConnectAsync("bob");
        bob.Handler = Double;
        await RelayHarness.AllSeeAsync([alice, bob], 2);

        Assert.True(alice.Send(bob.PeerId, new MessageEnvelope("hello"), new Sample { A = 6 }));
        await Wait.UntilAsync(() => bob.Messages.Any(m => m.Header == "hello"), () => "bob to get hello");
        Assert.Equal(alice.PeerId, bob.Messages.Single(m => m.Header == "hello").From);
        var reply = await alice.RequestAsync<Sample, Sample>(bob.PeerId, new MessageEnvelope("double"), new Sample { A = 21 }, s_ready);
        Assert.Equal(42, reply.A);

        Assert.True(harness.Relay.TryGetPeerStatistics(alice.PeerId, out var statistics));
        Assert.Equal(IPAddress.IPv6Loopback, ((IPEndPoint)statistics!.RemoteEndPoint!).Address);
        Assert.True(harness.Relay.TryGetPeerId(LocalTcpEndpoint(alice), out var found));
        Assert.Equal(alice.PeerId, found);
    }

    [Ipv6LoopbackFact]
    public async Task Datagrams_go_through_a_relay_on_IPv6_loopback_whose_BINDACK_gives_the_IPv6_endpoint()
    {
        await using var harness = new RelayHarness(address: IPAddress.IPv6Loopback);
        var (alice, bob) = await UdpPairAsync(harness, harness.Endpoint, harness.Endpoint);
        Assert.Equal(AddressFamily.InterNetworkV6, alice.LocalUdpEndpoint!.AddressFamily);
        Assert.Equal(new IPEndPoint(IPAddress.IPv6Loopback, alice.LocalUdpEndpoint.Port), alice.ServerReflexiveEndpoint);

        var forwarded = harness.Relay.Udp!.DatagramsForwarded;
        await ExchangeAsync(alice, bob, RelayPath.Relayed);
        await Wait.UntilAsync(() => harness.Relay.Udp.DatagramsForwarded == forwarded + 2, () => $"the relay to count 2 datagrams forwarded, not {harness.Relay.Udp.DatagramsForwarded - forwarded}"); // counted just after the send
    }

    [Ipv6LoopbackFact]
    public async Task Two_peers_go_direct_over_IPv6_loopback()
    {
        await using var harness = new RelayHarness(address: IPAddress.IPv6Loopback);
        var (alice, bob) = await UdpPairAsync(harness, harness.Endpoint, harness.Endpoint);
        await AssertGoDirectAsync(harness, alice, bob);
    }

    [Ipv6LoopbackFact]
    public async Task A_dual_stack_relay_takes_IPv4_and_IPv6_peers_and_relays_between_them()
    {
        await using var harness = new RelayHarness(address: IPAddress.IPv6Any);
        var (v4, v6) = await UdpPairAsync(harness, harness.EndpointAt(IPAddress.Loopback), harness.EndpointAt(IPAddress.IPv6Loopback));
        v6.Handler = Double;

        // The IPv4 peer as the relay names it: 127.0.0.1, not ::ffff:127.0.0.1.
        Assert.True(harness.Relay.TryGetPeerStatistics(v4.PeerId, out var statistics));
        Assert.Equal(IPAddress.Loopback, ((IPEndPoint)statistics!.RemoteEndPoint!).Address);
        Assert.True(harness.Relay.TryGetPeerId(LocalTcpEndpoint(v4), out var found));
        Assert.Equal(v4.PeerId, found);
        Assert.Equal(new IPEndPoint(IPAddress.Loopback, v4.LocalUdpEndpoint!.Port), v4.ServerReflexiveEndpoint);
        Assert.Equal(new IPEndPoint(IPAddress.IPv6Loopback, v6.LocalUdpEndpoint!.Port), v6.ServerReflexiveEndpoint);

        var reply = await v4.RequestAsync<Sample, Sample>(v6.PeerId, new MessageEnvelope("double"), new Sample { A = 5 }, s_ready);
        Assert.Equal(10, reply.A);
        await ExchangeAsync(v4, v6, RelayPath.Relayed);

        // No candidate of the other family can be punched: Relayed at once, not after three tries of 2.5 s.
        var clock = Stopwatch.StartNew();
        Assert.Equal(RelayPath.Relayed, await v4.ConnectDirectAsync(v6.PeerId, TimeSpan.FromSeconds(8)));
        Assert.True(clock.Elapsed < TimeSpan.FromSeconds(2), $"took {clock.Elapsed}");
        Assert.Equal(RelayPath.Relayed, await v6.ConnectDirectAsync(v4.PeerId, TimeSpan.FromSeconds(8)));
        await ExchangeAsync(v4, v6, RelayPath.Relayed);
    }

    [Ipv6LoopbackFact]
    public async Task Two_IPv4_peers_of_a_dual_stack_relay_go_direct()
    {
        await using var harness = new RelayHarness(address: IPAddress.IPv6Any);
        var (alice, bob) = await UdpPairAsync(harness, harness.EndpointAt(IPAddress.Loopback), harness.EndpointAt(IPAddress.Loopback));
        Assert.Equal(AddressFamily.InterNetwork, alice.LocalUdpEndpoint!.AddressFamily);
        await AssertGoDirectAsync(harness, alice, bob);
    }

    /// <summary>
    /// The client's UDP goes to the address its TLS connection reached, not to the host name resolved
    /// once more: where localhost resolves to ::1 and 127.0.0.1, in either order, a relay on one of
    /// them only was taken for "UDP blocked" half the time.
    /// </summary>
    [Fact]
    public async Task A_client_given_a_host_name_binds_UDP_at_the_address_its_TLS_connection_reached()
    {
        await using var harness = new RelayHarness();
        var peer = await harness.ConnectAsync(new TestPeer(new DnsEndPoint("localhost", harness.Relay.Port, AddressFamily.InterNetwork)) { Name = "by-name" });
        Assert.True(await peer.UdpReady.WaitAsync(s_ready), "the BIND to 127.0.0.1 answered");
        Assert.Equal(new IPEndPoint(IPAddress.Loopback, peer.LocalUdpEndpoint!.Port), peer.ServerReflexiveEndpoint);
    }

    private static void Double(TestPeer peer, in ProtoMessage message)
    {
        if (message.IsRequest && message.HeaderEquals("double"))
            peer.Reply(in message, new Sample { A = message.Unpack<Sample>().A * 2 });
    }

    private static IPEndPoint LocalTcpEndpoint(TestPeer peer) => (IPEndPoint)peer.Transport.Socket!.LocalEndPoint!;

    /// <summary>Two registered peers, through <paramref name="first"/> and <paramref name="second"/>, that see each other and whose UDP to the relay works.</summary>
    private static async Task<(TestPeer First, TestPeer Second)> UdpPairAsync(RelayHarness harness, EndPoint first, EndPoint second)
    {
        var a = await harness.ConnectAsync(new TestPeer(first) { Name = "a" });
        var b = await harness.ConnectAsync(new TestPeer(second) { Name = "b" });
        await RelayHarness.AllSeeAsync([a, b], 2);
        Assert.True(await a.UdpReady.WaitAsync(s_ready), "a's BIND answered");
        Assert.True(await b.UdpReady.WaitAsync(s_ready), "b's BIND answered");
        return (a, b);
    }

    private static async Task AssertGoDirectAsync(RelayHarness harness, TestPeer alice, TestPeer bob)
    {
        Assert.Equal(RelayPath.Direct, await alice.ConnectDirectAsync(bob.PeerId, TimeSpan.FromSeconds(5)));
        await Wait.UntilAsync(() => bob.GetPath(alice.PeerId) == RelayPath.Direct, () => "bob to take the nomination");
        var forwarded = harness.Relay.Udp!.DatagramsForwarded;
        await ExchangeAsync(alice, bob, RelayPath.Direct);
        Assert.Equal(forwarded, harness.Relay.Udp.DatagramsForwarded);
        Assert.Equal(1, alice.GetStatistics(bob.PeerId)!.PunchSuccesses);
    }

    /// <summary>One datagram each way, each awaited, each by <paramref name="path"/>.</summary>
    private static async Task ExchangeAsync(TestPeer a, TestPeer b, RelayPath path)
    {
        var text = Guid.NewGuid().ToByteArray();
        Assert.True(await a.SendDatagramAsync(b.PeerId, text));
        await Wait.UntilAsync(() => b.Datagrams.Any(d => d.Payload.AsSpan().SequenceEqual(text)), () => $"b to get a's datagram ({path})");
        Assert.Equal((a.PeerId, path), b.Datagrams.Where(d => d.Payload.AsSpan().SequenceEqual(text)).Select(d => (d.From, d.Path)).Single());
        Assert.True(await b.SendDatagramAsync(a.PeerId, text));
        await Wait.UntilAsync(() => a.Datagrams.Any(d => d.Payload.AsSpan().SequenceEqual(text)), () => $"a to get b's datagram ({path})");
        Assert.Equal((b.PeerId, path), a.Datagrams.Where(d => d.Payload.AsSpan().SequenceEqual(text)).Select(d => (d.From, d.Path)).Single());
    }
}
