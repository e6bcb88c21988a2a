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
    /// What the registration limits count a peer under (<see cref="Internal.RegistrationKey"/>). An
    /// IPv6 host is given a whole /64 and may take any address in it (temporary addresses, RFC 4941,
    /// by the thousand), so an IPv6 peer counts under its /64 prefix, and that /64 under its /48
    /// (a site's assignment, RFC 6177); an IPv4 peer (mapped or not) under its address and no site.
    /// A link-local IPv6 address keeps its whole address and no site: fe80::/64 is every host's on
    /// the link. So do addresses whose low bits name the host rather than the network: an IPv4
    /// client behind a translator (a prefix of <paramref name="translators"/>, RFC 6052;
    /// ::ffff:0:0:0/96, RFC 2765) counts under its IPv4 address, a Teredo client (2001::/32,
    /// RFC 4380) under its own IPv4 (the last 32 bits, inverted), a 6to4 site (2002::/16) under the
    /// IPv4 address inside. An IPv4 address there that is not global is nobody's public address:
    /// such an address counts as an ordinary IPv6 one rather than share a key with that IPv4 host,
    /// except under an operator's translator prefix or ::ffff:0:0:0/96, which may carry private
    /// addresses (RFC 6052 restricts only the well-known one, RFC 2765 not at all): there the
    /// translated address, whole (u octet and suffix zero), is the key, not ::/64 shared with ::1.
    /// </summary>
    public static RegistrationKey RegistrationKeyOf(IPAddress address, ReadOnlySpan<Nat64Prefix> translators)
    {
        address = Unmap(address);
        if (address.AddressFamily != AddressFamily.InterNetworkV6 || address.IsIPv6LinkLocal)
            return new RegistrationKey(address, null);
        Span<byte> bytes = stackalloc byte[16];
        address.TryWriteBytes(bytes, out _);
        Span<byte> v4 = stackalloc byte[4];
        if (TryGetEmbeddedIPv4(address, bytes, translators, v4, out var translator))
        {
            if (IsGlobalIPv4(v4))
                return new RegistrationKey(new IPAddress(v4), null);
            if (translator is { IsWellKnown: false } operatorPrefix)
                return new RegistrationKey(operatorPrefix.Embed(v4), null);
            if (bytes.Slice(0, 12).SequenceEqual(s_ipv4Translated))
                return new RegistrationKey(new IPAddress(bytes), null); // 96 fixed bits and the IPv4: no bit free
        }

        bytes.Slice(8).Clear();
        var key = new IPAddress(bytes);
        bytes.Slice(6).Clear();
        return new RegistrationKey(key, new IPAddress(bytes));
    }

    /// <summary>
    /// The IPv4 address an IPv6 one carries in place of a host part (into <paramref name="v4"/>), and
    /// the translator prefix it was found under if it was: a translator's (first, the operator named
    /// them), IPv4-translated (::ffff:0:0:0/96), Teredo (the client's, inverted), 6to4 (2002:V4::/48).
    /// </summary>
    private static bool TryGetEmbeddedIPv4(IPAddress address, ReadOnlySpan<byte> bytes, ReadOnlySpan<Nat64Prefix> translators, Span<byte> v4, out Nat64Prefix? translator)
    {
        translator = null;
        foreach (var prefix in translators)
        {
            if (prefix.TryExtract(bytes, v4))
            {
                translator = prefix;
                return true;
            }
        }

        if (address.IsIPv6Teredo)
        {
            // Server, flags and port are the client's to choose.
            for (var i = 0; i < 4; i++)
                v4[i] = (byte)~bytes[12 + i];
            return true;
        }

        if (bytes.Slice(0, 12).SequenceEqual(s_ipv4Translated))
            bytes.Slice(12).CopyTo(v4);
        else if (bytes[0] == 0x20 && bytes[1] == 0x02)
            bytes.Slice(2, 4).CopyTo(v4); // 6to4 (2002:V4::/48, RFC 3056): its 65,536 /64s are one IPv4 host's
        else
            return false;
        return true;
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
        Span<byte> v4 = stackalloc byte[4];
        return Nat64Prefix.WellKnown.TryExtract(bytes, v4) && !IsGlobalIPv4(v4);
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
