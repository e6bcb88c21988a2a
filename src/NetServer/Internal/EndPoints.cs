using System;
using System.Net;
using NetServer.Internal;

namespace NetServer;

/// <summary>Endpoint parsing shared by the TCP servers and clients.</summary>
internal static class EndPoints
{
    /// <summary>An IP endpoint when <paramref name="address"/> is an IP address, otherwise a DNS endpoint resolved later.</summary>
    public static EndPoint Parse(string address, int port)
    {
        if (address is null)
            ThrowHelper.ThrowArgumentNull(nameof(address));
        if (port is < IPEndPoint.MinPort or > IPEndPoint.MaxPort)
            ThrowHelper.ThrowArgumentOutOfRange(nameof(port), "The port must be between 0 and 65535.");
        if (IPAddress.TryParse(address, out var ip))
            return new IPEndPoint(ip, port);
        if (address.Length == 0)
            throw new ArgumentException("The address is empty.", nameof(address));
        return new DnsEndPoint(address, port);
    }

    /// <summary>The address part of a TCP endpoint as text (an IP address or a host name).</summary>
    public static string AddressOf(EndPoint endpoint) => endpoint switch
    {
        IPEndPoint ip => ip.Address.ToString(),
        DnsEndPoint dns => dns.Host,
        _ => endpoint.ToString() ?? string.Empty,
    };

    /// <summary>The port of a TCP endpoint (0 for other kinds).</summary>
    public static int PortOf(EndPoint endpoint) => endpoint switch
    {
        IPEndPoint ip => ip.Port,
        DnsEndPoint dns => dns.Port,
        _ => 0,
    };
}
