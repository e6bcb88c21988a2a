using System;
using System.Net;
using System.Collections.Generic;

namespace NetServer.P2P.Tests.Nat;

/// <summary>
/// The iptables rules of a NAT router namespace, as <c>iptables-restore</c> input (one atomic
/// load). The router has <c>wan0</c> on the public segment and <c>lan0</c> towards its one LAN host.
/// </summary>
internal static class NatRules
{
    public const string Wan = "wan0";
    public const string Lan = "lan0";

    public static string For(NatType type, IPAddress wanAddress, IPAddress lanHost)
    {
        if (type == NatType.Public)
            throw new ArgumentException("A public peer has no router.", nameof(type));

        var rules = new List<string>();
        rules.Add("*nat");
        rules.Add(":PREROUTING ACCEPT [0:0]");
        rules.Add(":INPUT ACCEPT [0:0]");
        rules.Add(":OUTPUT ACCEPT [0:0]");
        rules.Add(":POSTROUTING ACCEPT [0:0]");
        if (type == NatType.FullCone)
        {
            // Every UDP port of the router leads to the LAN host, and its UDP leaves from the same port.
            rules.Add($"-A PREROUTING -i {Wan} -p udp -j DNAT --to-destination {lanHost}");
            rules.Add($"-A POSTROUTING -o {Wan} -s {lanHost} -p udp -j SNAT --to-source {wanAddress}");
        }

        rules.Add(type == NatType.Symmetric
            ? $"-A POSTROUTING -o {Wan} -j MASQUERADE --random-fully"
            : $"-A POSTROUTING -o {Wan} -j MASQUERADE");
        rules.Add("COMMIT");

        rules.Add("*filter");
        rules.Add(":INPUT ACCEPT [0:0]");
        rules.Add(":FORWARD ACCEPT [0:0]");
        rules.Add(":OUTPUT ACCEPT [0:0]");
        if (type == NatType.UdpBlocked)
            rules.Add("-A FORWARD -p udp -j DROP");

        // Only answers get in: to the router itself, and forwarded to the LAN.
        rules.Add($"-A INPUT -i {Wan} -m conntrack --ctstate ESTABLISHED,RELATED -j ACCEPT");
        rules.Add($"-A INPUT -i {Wan} -j DROP");
        rules.Add($"-A FORWARD -i {Wan} -m conntrack --ctstate ESTABLISHED,RELATED -j ACCEPT");
        if (type == NatType.FullCone)
            rules.Add($"-A FORWARD -i {Wan} -p udp -m conntrack --ctstate DNAT -j ACCEPT");
        rules.Add($"-A FORWARD -i {Wan} -j DROP");
        rules.Add("COMMIT");
        return string.Join('\n', rules) + "\n";
    }
}
