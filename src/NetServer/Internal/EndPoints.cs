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
}
