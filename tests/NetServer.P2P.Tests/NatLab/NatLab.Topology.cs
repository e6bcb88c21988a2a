using System;
using System.Collections.Generic;
using System.Globalization;
using System.Linq;
using System.Net;
using System.Threading.Tasks;

namespace NetServer.P2P.Tests.Nat;

// The lab's namespaces, links and rules (docs/nat-lab.md draws them). Links are made inside the
// namespaces (a veth is created with each end already in its namespace), so nothing ever appears in
// the host's own namespace and deleting the namespaces removes every link and rule.
internal sealed partial class NatLab
{
    /// <summary>The most peers one lab takes (public addresses 203.0.113.11 up to .110).</summary>
    public const int MaxPeers = 100;

    private const string Bridge = "br0";
    private const string PublicPrefix = "203.0.113.";
    private const string PublicLength = "/24";

    private async Task BuildAsync(IReadOnlyList<NatType> types)
    {
        if (types.Count is 0 or > MaxPeers)
            throw new ArgumentOutOfRangeException(nameof(types), types.Count, $"A lab has 1 to {MaxPeers} peers.");

        _internet = await AddNamespaceAsync("inet");
        await IpBatchAsync(_internet, $"link add {Bridge} type bridge", $"link set {Bridge} up");

        var relay = await AddNamespaceAsync("relay");
        await AttachAsync(relay, "eth0", "v-relay");
        await IpBatchAsync(relay, $"addr add {PublicPrefix}1{PublicLength} dev eth0", $"addr add {PublicPrefix}2{PublicLength} dev eth0", "link set eth0 up");
        Relay = new LabRelay(relay, IPAddress.Parse(PublicPrefix + "1"), IPAddress.Parse(PublicPrefix + "2"));

        _peers.AddRange(await Task.WhenAll(types.Select((type, i) => AddPeerAsync(i + 1, type))));
    }

    private async Task<NatPeer> AddPeerAsync(int index, NatType type)
    {
        var publicAddress = IPAddress.Parse(PublicPrefix + (10 + index).ToString(CultureInfo.InvariantCulture));
        NatPeer peer;
        if (type == NatType.Public)
        {
            var ns = await AddNamespaceAsync($"p{index}");
            var port = $"v-p{index}";
            await AttachAsync(ns, "eth0", port);
            await IpBatchAsync(ns, $"addr add {publicAddress}{PublicLength} dev eth0", "link set eth0 up");
            peer = new NatPeer(index, type, ns, publicAddress, null, publicAddress, (ns, "eth0"), (_internet, port));
        }
        else
        {
            var lan = $"10.0.{index.ToString(CultureInfo.InvariantCulture)}.";
            var router = await AddNamespaceAsync($"r{index}");
            var ns = await AddNamespaceAsync($"p{index}");
            await AttachAsync(router, NatRules.Wan, $"v-r{index}");
            await IpBatchAsync(router,
                $"addr add {publicAddress}{PublicLength} dev {NatRules.Wan}",
                $"link set {NatRules.Wan} up",
                $"link add {NatRules.Lan} type veth peer name eth0 netns {ns}",
                $"addr add {lan}1/24 dev {NatRules.Lan}",
                $"link set {NatRules.Lan} up");
            await IpBatchAsync(ns, $"addr add {lan}2/24 dev eth0", "link set eth0 up", $"route add default via {lan}1");
            await LabShell.RunAsync("ip", "netns", "exec", router, "sysctl", "-q", "-w", "net.ipv4.ip_forward=1");
            await LabShell.RunWithInputAsync(NatRules.For(type, publicAddress, IPAddress.Parse(lan + "2")), "ip", "netns", "exec", router, "iptables-restore");
            peer = new NatPeer(index, type, ns, IPAddress.Parse(lan + "2"), router, publicAddress, (router, NatRules.Wan), (router, NatRules.Lan));
            if (_options.UdpMappingTimeout is { } timeout)
                await peer.SetUdpMappingTimeoutAsync(timeout);
        }

        if (_options.Latency is { } latency)
            await peer.SetLatencyAsync(latency);
        return peer;
    }

    private async Task<string> AddNamespaceAsync(string role)
    {
        var name = $"{Name}-{role}";

        // Listed before it exists: a failure from here on still deletes it.
        lock (_namespaces)
            _namespaces.Add(name);
        await LabShell.RunAsync("ip", "netns", "add", name);
        await IpBatchAsync(name, "link set lo up");
        return name;
    }

    /// <summary>A veth from the bridge (port <paramref name="port"/>) to <paramref name="ns"/> (link <paramref name="link"/>).</summary>
    private Task<string> AttachAsync(string ns, string link, string port) =>
        IpBatchAsync(_internet, $"link add {port} type veth peer name {link} netns {ns}", $"link set {port} master {Bridge} up");

    /// <summary>Runs ip commands inside <paramref name="ns"/> in one process (<c>ip -n NS -batch -</c> stops at the first error and says which).</summary>
    private static Task<string> IpBatchAsync(string ns, params string[] commands) =>
        LabShell.RunWithInputAsync(string.Join('\n', commands) + "\n", "ip", "-n", ns, "-batch", "-");
}
