using System;
using System.Diagnostics.CodeAnalysis;
using System.Net;
using System.Net.Sockets;

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

    /// <summary>
    /// What the per-address registration limit counts a peer under. An IPv6 host is given a whole
    /// /64 and may take any address in it (temporary addresses, RFC 4941, by the thousand), so an
    /// IPv6 peer counts under its /64 prefix; an IPv4 peer (mapped or not) under its address. A
    /// link-local IPv6 address keeps its whole address: fe80::/64 is every host's on the link.
    /// </summary>
    public static IPAddress RegistrationKey(IPAddress address)
    {
        address = Unmap(address);
        if (address.AddressFamily != AddressFamily.InterNetworkV6 || address.IsIPv6LinkLocal)
            return address;
        Span<byte> bytes = stackalloc byte[16];
        address.TryWriteBytes(bytes, out _);
        bytes.Slice(8).Clear();
        return new IPAddress(bytes);
    }
}
