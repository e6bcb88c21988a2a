using System;

namespace NetServer.P2P.Tests.Nat;

/// <summary>
/// Whether this machine can run the NAT lab, probed once per test run: Linux, root, the tools
/// (build/install-tools.sh installs them), and a namespace that takes NAT rules; and whether its
/// kernel has sch_netem for the latency knob.
/// </summary>
internal static class NatLabSupport
{
    private static readonly Lazy<(string? Lab, string? Netem)> s_probe = new(Probe);

    /// <summary>Why the lab cannot run here, or null when it can.</summary>
    public static string? Failure => s_probe.Value.Lab;

    /// <summary>Why <c>tc netem</c> (<see cref="NatPeer.SetLatencyAsync"/>) cannot run here, or null when it can.</summary>
    public static string? NetemFailure => s_probe.Value.Lab ?? s_probe.Value.Netem;

    private static (string? Lab, string? Netem) Probe()
    {
        if (!OperatingSystem.IsLinux())
            return ("The NAT lab needs Linux network namespaces.", null);
        if (!Environment.IsPrivilegedProcess)
            return ("The NAT lab needs root (network namespaces, veth pairs, iptables): run the tests as root.", null);

        try
        {
            foreach (var tool in new[] { new[] { "ip", "-V" }, ["tc", "-V"], ["iptables-restore", "--version"], ["sysctl", "--version"] })
            {
                var version = LabShell.TryRunBlocking(tool);
                if (!version.Succeeded)
                    return ($"`{string.Join(' ', tool)}` failed ({version.Error.Trim()}); build/install-tools.sh installs iproute2, iptables and procps.", null);
            }

            return ProbeNamespace(LabNamespaces.ProbeName);
        }
        catch (NatLabException e)
        {
            return (e.Message, null);
        }
    }

    private static (string? Lab, string? Netem) ProbeNamespace(string ns)
    {
        try
        {
            var add = LabShell.TryRunBlocking("ip", "netns", "add", ns);
            if (!add.Succeeded)
                return ($"`ip netns add` failed: {add.Error.Trim()} (network namespaces need CAP_SYS_ADMIN).", null);

            // The one rule that needs the most of the kernel: nat table, MASQUERADE, --random-fully.
            var nat = LabShell.TryRunBlocking("ip", "netns", "exec", ns, "iptables", "-t", "nat", "-A", "POSTROUTING", "-o", "lo", "-j", "MASQUERADE", "--random-fully");
            if (!nat.Succeeded)
                return ($"iptables NAT does not work in a namespace: {nat.Error.Trim()}", null);

            var netem = LabShell.TryRunBlocking("tc", "-n", ns, "qdisc", "add", "dev", "lo", "root", "netem", "delay", "1ms");
            return (null, netem.Succeeded ? null : $"tc netem is not available ({netem.Error.Trim()}): this kernel has no sch_netem (CONFIG_NET_SCH_NETEM), so the latency knob cannot work here.");
        }
        finally
        {
            LabNamespaces.DeleteBlocking(ns);
        }
    }
}
