using System;
using System.Threading.Tasks;
using Xunit;
using Xunit.Abstractions;

namespace NetServer.P2P.Tests.Nat;

/// <summary>
/// The relay and two peers as agents in the lab's namespaces (docs/nat-lab.md), behind real NATs:
/// which pairs go direct by hole punching, which stay relayed, and that every datagram arrives.
/// </summary>
public sealed class NatPunchTests(ITestOutputHelper output)
{
    [NatLabFact]
    public Task Endpoint_independent_behind_both_goes_direct() => AssertDirectAsync(NatType.EndpointIndependent, NatType.EndpointIndependent);

    [NatLabFact]
    public Task Public_and_endpoint_independent_go_direct() => AssertDirectAsync(NatType.Public, NatType.EndpointIndependent);

    [NatLabFact]
    public Task Full_cone_and_symmetric_go_direct_through_a_peer_reflexive_candidate() => AssertDirectAsync(NatType.FullCone, NatType.Symmetric);

    [NatLabFact]
    public Task Symmetric_asking_a_full_cone_peer_goes_direct_too() => AssertDirectAsync(NatType.Symmetric, NatType.FullCone);

    [NatLabFact]
    public async Task Endpoint_independent_and_symmetric_end_relayed_with_every_datagram_delivered()
    {
        await using var setup = await PunchPair.CreateAsync(NatType.EndpointIndependent, NatType.Symmetric);
        var punched = await setup.PunchAsync();
        output.WriteLine(punched.Line);
        Assert.Equal("relayed", punched["path"]);
        await AssertDeliveredAsync(setup, "relayed");
    }

    [NatLabFact]
    public async Task Symmetric_behind_both_ends_relayed_with_every_datagram_delivered()
    {
        await using var setup = await PunchPair.CreateAsync(NatType.Symmetric, NatType.Symmetric);
        var punched = await setup.PunchAsync();
        output.WriteLine(punched.Line);
        Assert.Equal("relayed", punched["path"]);
        await AssertDeliveredAsync(setup, "relayed");
    }

    [NatLabFact]
    public async Task With_UDP_blocked_datagrams_are_delivered_over_the_TLS_relay()
    {
        await using var setup = await PunchPair.CreateAsync(NatType.UdpBlocked, NatType.EndpointIndependent);
        Assert.Equal("blocked", setup.AStart["udp"]);
        Assert.Equal("ok", setup.BStart["udp"]);
        var punched = await setup.PunchAsync();
        Assert.Equal("relayed", punched["path"]);
        await AssertDeliveredAsync(setup, "relayed");
    }

    [NatLabFact]
    public async Task A_short_mapping_timeout_with_keepalives_stays_direct()
    {
        await using var setup = await PunchPair.CreateAsync(NatType.EndpointIndependent, NatType.EndpointIndependent, keepaliveMilliseconds: 500, mappingTimeout: TimeSpan.FromSeconds(2));
        Assert.Equal("direct", (await setup.PunchAsync())["path"]);
        await Task.Delay(TimeSpan.FromSeconds(5)); // 2.5 mapping lifetimes: only the keepalives keep it
        Assert.Equal("direct", (await setup.A.CommandAsync($"path {setup.BId}", "path"))["path"]);
        await AssertDeliveredAsync(setup, "direct");
    }

    /// <summary>Fresh peers (new sockets, so new NAT mappings) on one lab and relay for each try: every punch goes direct, none rides on the one before (build/bench-nat.sh times 20 a case).</summary>
    [NatLabFact]
    public async Task Fresh_punches_between_endpoint_independent_NATs_each_go_direct()
    {
        await using var setup = await PunchPair.CreateAsync(NatType.EndpointIndependent, NatType.EndpointIndependent);
        var outcomes = await setup.PunchFreshAsync(5);
        output.WriteLine($"EIM x EIM, 5 fresh punches: {string.Join(", ", outcomes)}");
        Assert.All(outcomes, outcome => Assert.True(outcome.Direct, $"a punch ended relayed after {outcome.Milliseconds} ms"));
    }

    private async Task AssertDirectAsync(NatType first, NatType second)
    {
        await using var setup = await PunchPair.CreateAsync(first, second);
        var punched = await setup.PunchAsync();
        output.WriteLine($"{first} x {second}: {punched.Line}");
        Assert.Equal("direct", punched["path"]);
        Assert.InRange(long.Parse(punched["ms"], System.Globalization.CultureInfo.InvariantCulture), 0, 5000);
        await AssertDeliveredAsync(setup, "direct");
    }

    /// <summary>Ten datagrams each way, each awaited by its event with the path it came by.</summary>
    private static async Task AssertDeliveredAsync(PunchPair setup, string path)
    {
        for (var i = 0; i < 10; i++)
        {
            await setup.A.CommandAsync($"send {setup.BId} a-to-b-{i}", "sent");
            var got = await setup.B.WaitForAsync("datagram", r => r["text"] == $"a-to-b-{i}");
            Assert.Equal(setup.AId.ToString(), got["from"]);
            Assert.Equal(path, got["path"]);
            await setup.B.CommandAsync($"send {setup.AId} b-to-a-{i}", "sent");
            Assert.Equal(path, (await setup.A.WaitForAsync("datagram", r => r["text"] == $"b-to-a-{i}"))["path"]);
        }
    }
}
