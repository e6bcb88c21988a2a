using System.Linq;
using System.Net;
using System.Threading.Tasks;
using Xunit;
using Xunit.Abstractions;

namespace NetServer.P2P.Tests.Nat;

/// <summary>
/// Each NAT profile maps as declared, measured with a reflector in the relay's namespace (two ports
/// on one address, one port on a second address) before any P2P test relies on it.
/// </summary>
public sealed class NatBehaviourTests(ITestOutputHelper output)
{
    /// <summary>The wait for a datagram that should come (it takes microseconds in the lab).</summary>
    internal const int ArrivalWaitMilliseconds = 5000;

    [NatLabFact]
    public async Task EndpointIndependent_maps_one_socket_to_one_external_endpoint_for_every_destination()
    {
        await using var lab = await NatLab.CreateAsync(NatType.EndpointIndependent);
        var (first, otherPort, otherAddress) = await MapThreeWaysAsync(lab, lab.Peers[0]);

        // Translated (the relay sees the router, not 10.0.1.2), and the same endpoint to all three.
        Assert.Equal(lab.Peers[0].PublicAddress, first.Address);
        Assert.Equal(first, otherPort);
        Assert.Equal(first, otherAddress);
    }

    [NatLabFact]
    public async Task Symmetric_maps_one_socket_to_another_external_port_per_destination()
    {
        await using var lab = await NatLab.CreateAsync(NatType.Symmetric);
        var (first, otherPort, otherAddress) = await MapThreeWaysAsync(lab, lab.Peers[0]);

        Assert.All(new[] { first, otherPort, otherAddress }, mapped => Assert.Equal(lab.Peers[0].PublicAddress, mapped.Address));

        // --random-fully draws each port from 64,512: two of three destinations share one once in
        // ~20,000 runs, all three (what an endpoint-independent NAT does) practically never.
        Assert.True(new[] { first.Port, otherPort.Port, otherAddress.Port }.Distinct().Count() >= 2, $"One external port for three destinations: {first}, {otherPort}, {otherAddress}");
    }

    [NatLabFact]
    public async Task FullCone_lets_an_unsolicited_host_reach_the_mapped_endpoint()
    {
        await using var lab = await NatLab.CreateAsync(NatType.FullCone, NatType.Public);
        await using var reflector = await lab.StartReflectorAsync();
        await using var probe = await lab.StartProbeAsync(lab.Peers[0]);
        await using var stranger = await lab.StartProbeAsync(lab.Peers[1]);

        var mapped = await MapAsync(probe, lab.Relay.Reflector);
        Assert.Equal(new IPEndPoint(lab.Peers[0].PublicAddress, probe.BoundEndpoint.Port), mapped);

        // The public peer never heard from the probe, and sends from an address the probe never sent to.
        await stranger.SendAsync(mapped, "unsolicited");
        var received = await probe.ReceiveAsync(ArrivalWaitMilliseconds);
        Assert.NotNull(received);
        Assert.Equal(new IPEndPoint(lab.Peers[1].Address, stranger.BoundEndpoint.Port), received.Endpoint("from"));
        Assert.Equal("unsolicited", received["text"]);
        output.WriteLine($"full cone: probe {probe.BoundEndpoint} mapped to {mapped}, reached by {received["from"]}");
    }

    [NatLabFact]
    public async Task UdpBlocked_drops_udp_and_lets_tcp_through()
    {
        await using var lab = await NatLab.CreateAsync(NatType.UdpBlocked, NatType.Public);
        await using var reflector = await lab.StartReflectorAsync();
        await using var blocked = await lab.StartProbeAsync(lab.Peers[0]);
        await using var control = await lab.StartProbeAsync(lab.Peers[1]);

        // The reflector answers UDP (the public peer's request), but nothing from behind the router reaches it.
        Assert.NotNull(await control.MapAsync(lab.Relay.Reflector, ArrivalWaitMilliseconds));
        Assert.Null(await blocked.MapAsync(lab.Relay.Reflector));

        var tcp = await blocked.TcpMapAsync(lab.Relay.Reflector);
        Assert.True(tcp is not null, blocked.Transcript);
        Assert.Equal(lab.Peers[0].PublicAddress, tcp.Address);
        output.WriteLine($"udp blocked: no UDP answer; TCP seen from {tcp}");
    }

    [NatLabFact]
    public async Task Public_peer_is_seen_at_its_own_address_and_port()
    {
        await using var lab = await NatLab.CreateAsync(NatType.Public);
        var peer = lab.Peers[0];
        Assert.Null(peer.RouterNamespace);
        Assert.Equal(peer.Address, peer.PublicAddress);

        await using var reflector = await lab.StartReflectorAsync();
        await using var probe = await lab.StartProbeAsync(peer);
        var own = new IPEndPoint(peer.Address, probe.BoundEndpoint.Port);
        Assert.Equal(own, await MapAsync(probe, lab.Relay.Reflector));
        Assert.Equal(own, await MapAsync(probe, lab.Relay.ReflectorAlternate));
    }

    internal static async Task<IPEndPoint> MapAsync(NatAgent probe, IPEndPoint reflector)
    {
        var mapped = await probe.MapAsync(reflector, ArrivalWaitMilliseconds);
        Assert.True(mapped is not null, $"No answer from the reflector at {reflector}. Probe:\n{probe.Transcript}");
        return mapped;
    }

    private async Task<(IPEndPoint First, IPEndPoint OtherPort, IPEndPoint OtherAddress)> MapThreeWaysAsync(NatLab lab, NatPeer peer)
    {
        await using var reflector = await lab.StartReflectorAsync();
        await using var probe = await lab.StartProbeAsync(peer);
        var first = await MapAsync(probe, lab.Relay.Reflector);
        var otherPort = await MapAsync(probe, lab.Relay.ReflectorOtherPort);
        var otherAddress = await MapAsync(probe, lab.Relay.ReflectorAlternate);
        output.WriteLine($"{peer.Type}: local {probe.BoundEndpoint} -> {lab.Relay.Reflector}: {first}, {lab.Relay.ReflectorOtherPort}: {otherPort}, {lab.Relay.ReflectorAlternate}: {otherAddress}");
        return (first, otherPort, otherAddress);
    }
}
