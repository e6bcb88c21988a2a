using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Linq;
using System.Threading.Tasks;
using Xunit;

namespace NetServer.P2P.Tests.Nat;

/// <summary>The lab leaves nothing behind: not after Dispose, and not after a run that was killed (the next run sweeps it).</summary>
public sealed class NatLabTeardownTests
{
    private static readonly TimeSpan s_exitWait = TimeSpan.FromSeconds(10);

    [NatLabFact]
    public async Task Dispose_leaves_no_namespace_link_rule_or_process_and_the_host_untouched()
    {
        var before = await HostNetwork.SnapshotAsync();
        var lab = await NatLab.CreateAsync(
            [NatType.EndpointIndependent, NatType.Symmetric, NatType.FullCone, NatType.UdpBlocked, NatType.Public],
            new NatLabOptions { UdpMappingTimeout = TimeSpan.FromSeconds(5) });
        var pids = new List<int>();
        try
        {
            var reflector = await lab.StartReflectorAsync();
            pids.Add(reflector.ProcessId);
            foreach (var peer in lab.Peers)
            {
                var probe = await lab.StartProbeAsync(peer);
                pids.Add(probe.ProcessId);
                await probe.MapAsync(lab.Relay.Reflector);
            }

            // Alive: 2 + 2 per NAT peer + 1 namespaces, the bridge ports, the routers' rules.
            var namespaces = await LabNamespaces.ListAsync();
            Assert.Equal(3 + 2 * 4, lab.Namespaces.Count);
            Assert.All(lab.Namespaces, ns => Assert.Contains(ns, namespaces));
            var ports = await NatLab.ExecAsync(lab.InternetNamespace, "ip", "-o", "link", "show", "master", "br0");
            Assert.Equal(1 + lab.Peers.Count, ports.Split('\n', StringSplitOptions.RemoveEmptyEntries).Length);
            Assert.Contains("MASQUERADE", await NatLab.ExecAsync(lab.Peers[0].RouterNamespace!, "iptables-save"), StringComparison.Ordinal);
        }
        finally
        {
            await lab.DisposeAsync();
        }

        var left = (await LabNamespaces.ListAsync()).Intersect(lab.Namespaces).ToList();
        Assert.True(left.Count == 0, $"Namespaces left: {string.Join(", ", left)}");
        foreach (var pid in pids)
            Assert.False(IsRunning(pid), $"Agent process {pid} still runs.");

        // Nothing was ever made in the host's namespace, and nothing there changed.
        var after = await HostNetwork.SnapshotAsync();
        Assert.Equal(before.Links, after.Links);
        Assert.Equal(before.Addresses, after.Addresses);
        Assert.Equal(before.Rules, after.Rules);
        Assert.Equal(before.Sysctls, after.Sysctls);
    }

    [NatLabFact]
    public async Task A_dead_runs_namespaces_and_processes_are_swept_and_a_live_runs_are_kept()
    {
        await using var live = await NatLab.CreateAsync(NatType.EndpointIndependent);

        // A namespace as a killed run leaves it: owner pid 0 (never a process), a veth, a process still inside.
        var stale = $"{LabNamespaces.Prefix}0-{Guid.NewGuid():N}-1-inet";
        await LabShell.RunAsync("ip", "netns", "add", stale);
        using var leftover = Process.Start(new ProcessStartInfo("ip", ["netns", "exec", stale, "sleep", "60"]) { UseShellExecute = false })!;
        try
        {
            await LabShell.RunAsync("ip", "-n", stale, "link", "add", "v-stale", "type", "veth", "peer", "name", "eth0");
            Assert.False(LabNamespaces.IsOwnerAlive(stale));
            Assert.True(LabNamespaces.IsOwnerAlive(live.Name));

            await LabNamespaces.SweepStaleAsync();

            var namespaces = await LabNamespaces.ListAsync();
            Assert.DoesNotContain(stale, namespaces);
            Assert.All(live.Namespaces, ns => Assert.Contains(ns, namespaces));
            await leftover.WaitForExitAsync().WaitAsync(s_exitWait);
        }
        finally
        {
            if (!leftover.HasExited)
                leftover.Kill();
            await LabNamespaces.DeleteAsync(stale);
        }
    }

    private static bool IsRunning(int pid)
    {
        try
        {
            using var process = Process.GetProcessById(pid);
            return !process.HasExited;
        }
        catch (ArgumentException)
        {
            return false;
        }
    }
}
