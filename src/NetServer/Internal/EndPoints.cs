using System.Linq;

namespace NetServer;

/// <summary>Endpoint parsing and host-name resolution shared by the TCP and UDP servers and clients.</summary>
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

    /// <summary>Resolves a host name endpoint to an IP endpoint (blocking); other endpoints are returned as they are.</summary>
    /// <exception cref="SocketException">The host name does not resolve (to an address of the requested family).</exception>
    public static EndPoint Resolve(EndPoint endpoint) =>
        endpoint is DnsEndPoint dns ? Pick(dns, Dns.GetHostAddresses(dns.Host)) : endpoint;

    /// <summary>Resolves a host name endpoint to an IP endpoint without blocking; other endpoints are returned as they are.</summary>
    /// <exception cref="SocketException">The host name does not resolve (to an address of the requested family).</exception>
    public static async ValueTask<EndPoint> ResolveAsync(EndPoint endpoint) =>
        endpoint is DnsEndPoint dns ? Pick(dns, await Dns.GetHostAddressesAsync(dns.Host).ConfigureAwait(false)) : endpoint;

    private static IPEndPoint Pick(DnsEndPoint dns, IPAddress[] addresses)
    {
        // Prefer the family the endpoint asks for; otherwise the resolver's first answer.
        var address = addresses.FirstOrDefault(a => dns.AddressFamily == AddressFamily.Unspecified || a.AddressFamily == dns.AddressFamily)
            ?? throw new SocketException((int)SocketError.HostNotFound);
        return new IPEndPoint(address, dns.Port);
    }
}
