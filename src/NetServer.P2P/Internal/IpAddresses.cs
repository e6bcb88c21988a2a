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
    /// link-local IPv6 address keeps its whole address: fe80::/64 is every host's on the link. So
    /// do addresses whose low 64 bits name the host rather than the network: an IPv4 client behind a
    /// translator (64:ff9b::/96, RFC 6052; ::ffff:0:0:0/96, RFC 2765) counts under its IPv4 address,
    /// a Teredo client (2001::/32, RFC 4380) under its own IPv4 (the last 32 bits, inverted),
    /// a 6to4 site (2002::/16) under the IPv4 address inside.
    /// </summary>
    public static IPAddress RegistrationKey(IPAddress address)
    {
        address = Unmap(address);
        if (address.AddressFamily != AddressFamily.InterNetworkV6 || address.IsIPv6LinkLocal)
            return address;
        Span<byte> bytes = stackalloc byte[16];
        address.TryWriteBytes(bytes, out _);
        if (address.IsIPv6Teredo)
        {
            // The client's IPv4 is the last four bytes inverted; server, flags and port are the client's to choose.
            for (var i = 12; i < 16; i++)
                bytes[i] = (byte)~bytes[i];
            return new IPAddress(bytes.Slice(12));
        }

        if (bytes.Slice(0, 12).SequenceEqual(s_nat64WellKnown) || bytes.Slice(0, 12).SequenceEqual(s_ipv4Translated))
            return new IPAddress(bytes.Slice(12));
        if (bytes[0] == 0x20 && bytes[1] == 0x02)
            return new IPAddress(bytes.Slice(2, 4)); // 6to4 (2002:V4::/48, RFC 3056): its 65,536 /64s are one IPv4 host's
        bytes.Slice(8).Clear();
        return new IPAddress(bytes);
    }

    /// <summary>
    /// Whether <paramref name="address"/> (a bare IPv6 address) is in the NAT64 well-known prefix
    /// 64:ff9b::/96 with an IPv4 address inside that is not global: RFC 6052 (3.1) forbids those, and
    /// a NAT64 gateway does not translate them.
    /// </summary>
    public static bool IsNat64OfNonGlobal(IPAddress address)
    {
        if (address.AddressFamily != AddressFamily.InterNetworkV6)
            return false;
        Span<byte> bytes = stackalloc byte[16];
        address.TryWriteBytes(bytes, out _);
        return bytes.Slice(0, 12).SequenceEqual(s_nat64WellKnown) && !IsGlobalIPv4(bytes.Slice(12));
    }

    /// <summary>
    /// Whether <paramref name="address"/> is IPv4-compatible (::a.b.c.d, ::/96, deprecated by RFC 4291):
    /// nothing routes it. The unspecified address and ::1 are in that range too and are left to their own rules.
    /// </summary>
    public static bool IsIPv4Compatible(IPAddress address)
    {
        if (address.AddressFamily != AddressFamily.InterNetworkV6 || address.Equals(IPAddress.IPv6Any) || address.Equals(IPAddress.IPv6Loopback))
            return false;
        Span<byte> bytes = stackalloc byte[16];
        address.TryWriteBytes(bytes, out _);
        return bytes.Slice(0, 12).SequenceEqual(s_ipv4CompatiblePrefix);
    }

    private static readonly byte[] s_nat64WellKnown = [0x00, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0];
    private static readonly byte[] s_ipv4Translated = [0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0, 0]; // ::ffff:0:0:0/96
    private static readonly byte[] s_ipv4CompatiblePrefix = new byte[12];

    /// <summary>
    /// False for the IPv4 ranges no NAT64 gateway takes (RFC 6052 3.1): this network (0/8), private
    /// (10/8, 172.16/12, 192.168/16), shared (100.64/10), loopback, link-local (169.254/16), and
    /// multicast, reserved and broadcast (224/3).
    /// </summary>
    private static bool IsGlobalIPv4(ReadOnlySpan<byte> v4) => v4[0] switch
    {
        0 or 10 or 127 => false,
        >= 224 => false,
        100 => (v4[1] & 0xc0) != 64,
        169 => v4[1] != 254,
        172 => (v4[1] & 0xf0) != 16,
        192 => v4[1] != 168,
        _ => true,
    };
}
