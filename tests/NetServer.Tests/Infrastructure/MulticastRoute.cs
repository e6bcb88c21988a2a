using System;
using System.Net;
using System.Net.Sockets;

namespace NetServer.Tests.Infrastructure;

/// <summary>
/// Whether a multicast datagram sent on this machine comes back to a listener on it, and through
/// which interface: the system's choice (index 0, the default route's interface) or the loopback
/// interface (index 1 on Linux, for machines without a default route). Probed once per address
/// family with raw sockets, so a machine that cannot multicast skips the multicast tests with the
/// reason instead of failing them.
/// </summary>
internal sealed class MulticastRoute
{
    private static readonly Lazy<MulticastRoute> s_ipv4 = new(() => Probe(AddressFamily.InterNetwork));
    private static readonly Lazy<MulticastRoute> s_ipv6 = new(() => Probe(AddressFamily.InterNetworkV6));
    private static readonly TimeSpan s_probeTimeout = TimeSpan.FromSeconds(2);

    private MulticastRoute(int interfaceIndex, string? failure)
    {
        InterfaceIndex = interfaceIndex;
        Failure = failure;
    }

    /// <summary>The interface to multicast through (0: the system's choice); meaningless when <see cref="Failure"/> is set.</summary>
    public int InterfaceIndex { get; }

    /// <summary>Why multicast does not loop back here, or null when it does.</summary>
    public string? Failure { get; }

    public static MulticastRoute For(AddressFamily family) =>
        family == AddressFamily.InterNetworkV6 ? s_ipv6.Value : s_ipv4.Value;

    /// <summary>A group no other test uses: 239.255.x.y (IPv4 organization-local) or ff15::x:y (IPv6 transient, site-local).</summary>
    public static IPAddress RandomGroup(AddressFamily family) => family == AddressFamily.InterNetworkV6
        ? IPAddress.Parse($"ff15::{Random.Shared.Next(1, 0xffff):x}:{Random.Shared.Next(1, 0xffff):x}")
        : IPAddress.Parse($"239.255.{Random.Shared.Next(1, 255)}.{Random.Shared.Next(1, 255)}");

    /// <summary>A UDP port that was free a moment ago (the system picked it for a socket now closed).</summary>
    public static int FreePort(AddressFamily family)
    {
        using var socket = new Socket(family, SocketType.Dgram, ProtocolType.Udp);
        socket.Bind(new IPEndPoint(AnyOf(family), 0));
        return ((IPEndPoint)socket.LocalEndPoint!).Port;
    }

    public static IPAddress AnyOf(AddressFamily family) =>
        family == AddressFamily.InterNetworkV6 ? IPAddress.IPv6Any : IPAddress.Any;

    private static MulticastRoute Probe(AddressFamily family)
    {
        string? failure = null;
        foreach (var index in (int[])[0, 1])
        {
            failure = TryLoopBack(family, index);
            if (failure is null)
                return new MulticastRoute(index, null);
        }

        var name = family == AddressFamily.InterNetworkV6 ? "IPv6" : "IPv4";
        return new MulticastRoute(0, $"No {name} multicast loops back on this machine (through the default interface or loopback): {failure}");
    }

    /// <summary>Sends one datagram to a fresh group through interface <paramref name="index"/>; null if a member of the group on this machine received it, else why not.</summary>
    private static string? TryLoopBack(AddressFamily family, int index)
    {
        var group = RandomGroup(family);
        var payload = Guid.NewGuid().ToByteArray();
        try
        {
            using var receiver = new Socket(family, SocketType.Dgram, ProtocolType.Udp);
            receiver.Bind(new IPEndPoint(AnyOf(family), 0));
            using var sender = new Socket(family, SocketType.Dgram, ProtocolType.Udp);
            if (family == AddressFamily.InterNetworkV6)
            {
                receiver.SetSocketOption(SocketOptionLevel.IPv6, SocketOptionName.AddMembership, new IPv6MulticastOption(group, index));
                sender.SetSocketOption(SocketOptionLevel.IPv6, SocketOptionName.MulticastInterface, index);
            }
            else
            {
                receiver.SetSocketOption(SocketOptionLevel.IP, SocketOptionName.AddMembership, new MulticastOption(group, index));
                sender.SetSocketOption(SocketOptionLevel.IP, SocketOptionName.MulticastInterface, IPAddress.HostToNetworkOrder(index));
            }

            sender.SendTo(payload, new IPEndPoint(group, ((IPEndPoint)receiver.LocalEndPoint!).Port));

            // The probe runs while xunit discovers tests (a Fact attribute's constructor): a bounded blocking receive is all it can do.
            receiver.ReceiveTimeout = (int)s_probeTimeout.TotalMilliseconds;
            var buffer = new byte[payload.Length + 1];
            var received = receiver.Receive(buffer);
            return buffer.AsSpan(0, received).SequenceEqual(payload) ? null : $"a stranger's datagram arrived on interface {index} instead of the probe";
        }
        catch (SocketException e)
        {
            return $"interface {index}: {e.SocketErrorCode} ({e.Message})";
        }
    }
}
