using System;
using System.Net;
using System.Net.Sockets;
using Xunit;

namespace NetServer.P2P.Tests.Infrastructure;

/// <summary>A fact skipped, with the reason, where this machine has no IPv6 loopback (no IPv6 at all, or ::1 not bound to lo).</summary>
public sealed class Ipv6LoopbackFactAttribute : FactAttribute
{
    private static readonly Lazy<string?> s_failure = new(Probe);

    public Ipv6LoopbackFactAttribute()
    {
        if (s_failure.Value is { } failure)
            Skip = failure;
    }

    private static string? Probe()
    {
        if (!Socket.OSSupportsIPv6)
            return "No IPv6 on this machine (Socket.OSSupportsIPv6 is false).";
        try
        {
            using var tcp = new Socket(AddressFamily.InterNetworkV6, SocketType.Stream, ProtocolType.Tcp);
            tcp.Bind(new IPEndPoint(IPAddress.IPv6Loopback, 0));
            using var udp = new Socket(AddressFamily.InterNetworkV6, SocketType.Dgram, ProtocolType.Udp);
            udp.Bind(new IPEndPoint(IPAddress.IPv6Loopback, 0));
            return null;
        }
        catch (SocketException e)
        {
            return $"No IPv6 loopback: binding [::1]:0 failed ({e.SocketErrorCode}: {e.Message}).";
        }
    }
}
