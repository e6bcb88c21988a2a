using System;
using System.Diagnostics;
using System.Linq;
using System.Net;
using System.Threading.Tasks;
using Xunit;
using Xunit.Abstractions;

namespace NetServer.P2P.Tests.Nat;

/// <summary>The lab's knobs: a short UDP mapping lifetime per router, and added latency.</summary>
public sealed class NatKnobTests(ITestOutputHelper output)
{
    [NatLabFact]
    public async Task A_short_udp_timeout_expires_the_mapping_in_that_router_only()
    {
        var hostTimeout = HostNetwork.Sysctl("net/netfilter/nf_conntrack_udp_timeout");
        await using var lab = await NatLab.CreateAsync(NatType.EndpointIndependent, new NatLabOptions { UdpMappingTimeout = TimeSpan.FromSeconds(2) });
        var peer = lab.Peers[0];
        var router = peer.RouterNamespace!;

        // Per network namespace on this kernel: the router has 2 s, the host keeps its own.
        Assert.Equal("2", (await NatLab.ExecAsync(router, "sysctl", "-n", "net.netfilter.nf_conntrack_udp_timeout")).Trim());
        Assert.Equal("2", (await NatLab.ExecAsync(router, "sysctl", "-n", "net.netfilter.nf_conntrack_udp_timeout_stream")).Trim());
        Assert.Equal(hostTimeout, HostNetwork.Sysctl("net/netfilter/nf_conntrack_udp_timeout"));

        await using var reflector = await lab.StartReflectorAsync();
        await using var probe = await lab.StartProbeAsync(peer);
        var mapped = await NatBehaviourTests.MapAsync(probe, lab.Relay.Reflector);

        // Alive: the reflector may still send to the mapping, and the entry has at most 2 s to live
        // from that datagram on (each packet renews it; the watch starts before it).
        var watch = Stopwatch.StartNew();
        await reflector.SendFromAsync(lab.Relay.Reflector, mapped, "alive");
        Assert.Equal("alive", (await probe.ReceiveAsync(NatBehaviourTests.ArrivalWaitMilliseconds))?["text"]);
        var entry = await MappingAsync(router, peer.Address, probe.BoundEndpoint.Port);
        Assert.True(entry is not null, "No conntrack entry for the probe's mapping.");
        Assert.InRange(RemainingSeconds(entry), 0, 2);

        // Gone after the timeout: the router's table forgets it (polled, bounded), and the reflector is dropped.
        while (await MappingAsync(router, peer.Address, probe.BoundEndpoint.Port) is not null)
        {
            Assert.True(watch.Elapsed < TimeSpan.FromSeconds(10), $"The mapping outlived its 2 s timeout: {entry}");
            await Task.Delay(100);
        }

        output.WriteLine($"mapping {mapped} expired {watch.ElapsedMilliseconds} ms after its last packet was sent (timeout 2 s); host timeout {hostTimeout} s");
        Assert.True(watch.Elapsed > TimeSpan.FromSeconds(1.9), $"The mapping vanished after {watch.ElapsedMilliseconds} ms, before its 2 s timeout.");
        await reflector.SendFromAsync(lab.Relay.Reflector, mapped, "late");
        var late = await probe.ReceiveAsync();
        Assert.True(late is null, $"A datagram to the expired mapping got in: {late}");
    }

    [NatLabFact(RequiresNetem = true)]
    public async Task Latency_adds_its_delay_to_each_direction()
    {
        var oneWay = TimeSpan.FromMilliseconds(50);
        await using var lab = await NatLab.CreateAsync(NatType.EndpointIndependent, new NatLabOptions { Latency = oneWay });
        await using var reflector = await lab.StartReflectorAsync();
        await using var probe = await lab.StartProbeAsync(lab.Peers[0]);

        var delayed = await RoundTripAsync(probe, lab.Relay.Reflector);
        await lab.Peers[0].SetLatencyAsync(TimeSpan.Zero);
        var direct = await RoundTripAsync(probe, lab.Relay.Reflector);
        output.WriteLine($"round trip with {oneWay.TotalMilliseconds} ms each way: {delayed.TotalMilliseconds} ms; without: {direct.TotalMilliseconds} ms");
        Assert.True(delayed >= 2 * oneWay, $"Round trip {delayed.TotalMilliseconds} ms with {oneWay.TotalMilliseconds} ms each way.");
        Assert.True(direct < 2 * oneWay, $"Round trip {direct.TotalMilliseconds} ms after the delay was removed.");
    }

    private static async Task<TimeSpan> RoundTripAsync(NatAgent probe, IPEndPoint reflector)
    {
        var reply = await probe.CommandAsync($"map {reflector} {NatBehaviourTests.ArrivalWaitMilliseconds}", "mapped", "timeout");
        Assert.Equal("mapped", reply.Verb);
        return TimeSpan.FromMicroseconds(long.Parse(reply["rtt_us"], System.Globalization.CultureInfo.InvariantCulture));
    }

    /// <summary>The router's conntrack line for UDP from the LAN host's port, or null.</summary>
    private static async Task<string?> MappingAsync(string router, IPAddress host, int port)
    {
        var table = await NatLab.ExecAsync(router, "cat", "/proc/net/nf_conntrack");
        return table.Split('\n').FirstOrDefault(line => line.Contains(" udp ", StringComparison.Ordinal)
            && line.Contains($"src={host} ", StringComparison.Ordinal)
            && line.Contains($"sport={port} ", StringComparison.Ordinal));
    }

    // "ipv4 2 udp 17 SECONDS src=...": the seconds the entry has left.
    private static int RemainingSeconds(string entry) =>
        int.Parse(entry.Split(' ', StringSplitOptions.RemoveEmptyEntries)[4], System.Globalization.CultureInfo.InvariantCulture);
}
