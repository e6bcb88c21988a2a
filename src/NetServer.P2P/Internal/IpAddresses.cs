using System.Diagnostics.CodeAnalysis;
using System.Net;

namespace NetServer.P2P.Internal;

/// <summary>
/// Addresses in the one form the P2P layer keeps and compares them in: an IPv4 peer reaching a
/// dual-stack socket (a relay on [::]) shows as an IPv4-mapped IPv6 address (::ffff:a.b.c.d),
/// taken here as the IPv4 address it is, so per-address limits, lookups, BINDACKs and punch
/// candidates see one address whichever socket it came through.
/// </summary>
internal static class IpAddresses
{
    public static IPAddress Unmap(IPAddress address) => address.IsIPv4MappedToIPv6 ? address.MapToIPv4() : address;

    public static IPEndPoint Unmap(IPEndPoint endpoint) => endpoint.Address.IsIPv4MappedToIPv6 ? new IPEndPoint(endpoint.Address.MapToIPv4(), endpoint.Port) : endpoint;

    [return: NotNullIfNotNull(nameof(endpoint))]
    public static EndPoint? Unmap(EndPoint? endpoint) => endpoint is IPEndPoint ip ? Unmap(ip) : endpoint;
}
