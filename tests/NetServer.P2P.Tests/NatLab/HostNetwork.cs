using System.IO;
using System.Linq;
using System.Text.RegularExpressions;
using System.Threading.Tasks;

namespace NetServer.P2P.Tests.Nat;

/// <summary>
/// What the lab must never change in the host's own namespace: its links and addresses (loopback
/// included), its iptables rules, and the conntrack and forwarding sysctls the lab sets inside its
/// routers.
/// </summary>
internal sealed partial record HostNetwork(string Links, string Addresses, string Rules, string Sysctls)
{
    private static readonly string[] s_sysctls =
    [
        "net/ipv4/ip_forward",
        "net/netfilter/nf_conntrack_udp_timeout",
        "net/netfilter/nf_conntrack_udp_timeout_stream",
    ];

    public static async Task<HostNetwork> SnapshotAsync()
    {
        // Statistics and counters change with traffic; the state does not.
        var links = await LabShell.RunAsync("ip", "-o", "link", "show");
        var addresses = await LabShell.RunAsync("ip", "-o", "addr", "show");
        var rules = await LabShell.RunAsync("iptables-save");
        var sysctls = string.Join(' ', s_sysctls.Select(name => $"{name}={File.ReadAllText("/proc/sys/" + name).Trim()}"));
        return new HostNetwork(
            string.Join('\n', links.Split('\n').Select(line => line.Split(" link/")[0])),
            addresses,
            string.Join('\n', rules.Split('\n').Where(line => !line.StartsWith('#')).Select(line => Counters().Replace(line, ""))),
            sysctls);
    }

    /// <summary>The host's value of <c>/proc/sys/NAME</c> (this process runs in the host's namespace).</summary>
    public static string Sysctl(string name) => File.ReadAllText("/proc/sys/" + name).Trim();

    [GeneratedRegex(@"\[\d+:\d+\]")]
    private static partial Regex Counters();
}
