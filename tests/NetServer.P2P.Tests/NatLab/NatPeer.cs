using System;
using System.Globalization;
using System.Net;
using System.Threading.Tasks;

namespace NetServer.P2P.Tests.Nat;

/// <summary>A lab peer: its namespace and address, and (behind a NAT) its router's namespace and public address.</summary>
internal sealed class NatPeer
{
    private readonly string _uplinkNamespace;
    private readonly string _uplink;
    private readonly string _downlinkNamespace;
    private readonly string _downlink;

    internal NatPeer(int index, NatType type, string ns, IPAddress address, string? routerNamespace, IPAddress publicAddress, (string Ns, string Link) uplink, (string Ns, string Link) downlink)
    {
        Index = index;
        Type = type;
        Namespace = ns;
        Address = address;
        RouterNamespace = routerNamespace;
        PublicAddress = publicAddress;
        (_uplinkNamespace, _uplink) = uplink;
        (_downlinkNamespace, _downlink) = downlink;
    }

    /// <summary>1 for the first peer given to <see cref="NatLab.CreateAsync(NatType, NatLabOptions?)"/>, and so on.</summary>
    public int Index { get; }

    public NatType Type { get; }

    /// <summary>The namespace to run the peer's programs in.</summary>
    public string Namespace { get; }

    /// <summary>The peer's own address: 10.0.N.2 on its LAN behind a NAT, 203.0.113.(10+N) when public.</summary>
    public IPAddress Address { get; }

    /// <summary>The NAT router's namespace (its iptables rules and conntrack table), or null for a public peer.</summary>
    public string? RouterNamespace { get; }

    /// <summary>The address the relay sees: the router's WAN address 203.0.113.(10+N), or <see cref="Address"/> when public.</summary>
    public IPAddress PublicAddress { get; }

    /// <summary>
    /// Sets how long the router's conntrack keeps an idle UDP mapping, in whole seconds (at least 1):
    /// <c>nf_conntrack_udp_timeout</c> and <c>nf_conntrack_udp_timeout_stream</c>, per namespace.
    /// </summary>
    public async Task SetUdpMappingTimeoutAsync(TimeSpan timeout)
    {
        var router = RouterNamespace ?? throw new InvalidOperationException($"Peer {Index} is public: it has no NAT mapping to time out.");
        var seconds = Math.Max(1, (int)Math.Ceiling(timeout.TotalSeconds)).ToString(CultureInfo.InvariantCulture);
        await LabShell.RunAsync("ip", "netns", "exec", router, "sysctl", "-q", "-w",
            $"net.netfilter.nf_conntrack_udp_timeout={seconds}",
            $"net.netfilter.nf_conntrack_udp_timeout_stream={seconds}");
    }

    /// <summary>
    /// Delays every packet on the peer's uplink by <paramref name="oneWay"/> in each direction (<c>tc netem</c>);
    /// <see cref="TimeSpan.Zero"/> removes the delay. A <see cref="NotSupportedException"/> where the kernel has no sch_netem.
    /// </summary>
    public async Task SetLatencyAsync(TimeSpan oneWay)
    {
        foreach (var (ns, link) in new[] { (_uplinkNamespace, _uplink), (_downlinkNamespace, _downlink) })
        {
            if (oneWay == TimeSpan.Zero)
            {
                await LabShell.TryRunAsync(null, "tc", "-n", ns, "qdisc", "del", "dev", link, "root");
                continue;
            }

            var delay = $"{(long)oneWay.TotalMicroseconds}us";
            var result = await LabShell.TryRunAsync(null, "tc", "-n", ns, "qdisc", "replace", "dev", link, "root", "netem", "delay", delay);
            if (!result.Succeeded)
                throw new NotSupportedException($"`tc -n {ns} qdisc replace dev {link} root netem delay {delay}` failed: {result.Error.Trim()} (a kernel without sch_netem, CONFIG_NET_SCH_NETEM: docs/nat-lab.md).");
        }
    }

    public override string ToString() => $"peer {Index} ({Type}) {Address} via {PublicAddress} in {Namespace}";
}
