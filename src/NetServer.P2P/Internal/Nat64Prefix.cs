using System;
using System.Globalization;
using System.Net;
using System.Net.Sockets;

namespace NetServer.P2P.Internal;

/// <summary>
/// An IPv4/IPv6 translator's prefix (RFC 6052): the IPv6 addresses under it carry an IPv4 address,
/// placed as section 2.2 lays out for each of the six lengths (32, 40, 48, 56, 64, 96): the IPv4
/// bits follow the prefix, skipping bits 64 to 71 (the "u" octet, always zero), and a suffix fills the rest.
/// </summary>
internal readonly struct Nat64Prefix
{
    private readonly byte[] _bytes;

    private Nat64Prefix(byte[] bytes, int length)
    {
        _bytes = bytes;
        Length = length;
    }

    /// <summary>The well-known prefix 64:ff9b::/96 (RFC 6052 2.1): global IPv4 addresses only (3.1).</summary>
    public static Nat64Prefix WellKnown { get; } = new([0x00, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], 96);

    /// <summary>The prefix length in bits: 32, 40, 48, 56, 64 or 96.</summary>
    public int Length { get; }

    /// <summary>Whether this is 64:ff9b::/96, which never carries a non-global IPv4 address.</summary>
    public bool IsWellKnown => Length == 96 && _bytes.AsSpan().SequenceEqual(WellKnown._bytes);

    /// <summary>
    /// Reads "prefix/length" (as "64:ff9b:1::/48"); false with the reason for anything else: no
    /// length, an IPv4 prefix, a scope id, a prefix in a range the registration key reads its own way
    /// (<see cref="Reserved"/>), a length RFC 6052 does not define, bits set past the length, or a
    /// non-zero u octet (bits 64 to 71, which RFC 6052 2.2 reserves as zero).
    /// </summary>
    public static bool TryParse(string? text, out Nat64Prefix prefix, out string reason)
    {
        prefix = default;
        var slash = text?.IndexOf('/') ?? -1;
        if (text is null || slash < 0 || !IPAddress.TryParse(text.AsSpan(0, slash), out var address)
            || !int.TryParse(text.AsSpan(slash + 1), NumberStyles.None, CultureInfo.InvariantCulture, out var length))
        {
            reason = $"'{text}' is not an IPv6 prefix with its length (as 64:ff9b:1::/48).";
            return false;
        }

        if (address.AddressFamily != AddressFamily.InterNetworkV6 || address.IsIPv4MappedToIPv6)
        {
            reason = $"'{text}' is an IPv4 prefix; a translator's prefix is IPv6 (RFC 6052).";
            return false;
        }

        if (address.ScopeId != 0 || text.Contains('%'))
        {
            reason = $"'{text}' has a scope id; a translator's prefix is a global one.";
            return false;
        }

        if (Reserved(address.GetAddressBytes()) is { } range)
        {
            reason = $"'{text}' lies in {range}, which this relay reads otherwise; a translator's prefix cannot.";
            return false;
        }

        if (length is not (32 or 40 or 48 or 56 or 64 or 96))
        {
            reason = $"'{text}': RFC 6052 defines the lengths 32, 40, 48, 56, 64 and 96 only.";
            return false;
        }

        var bytes = address.GetAddressBytes();
        if (bytes[8] != 0)
        {
            reason = $"'{text}': bits 64 to 71 (the u octet) must be zero (RFC 6052 2.2).";
            return false;
        }

        if (!IsZero(bytes.AsSpan(length / 8)))
        {
            reason = $"'{text}' has bits set past its length /{length}.";
            return false;
        }

        prefix = new Nat64Prefix(bytes, length);
        reason = "";
        return true;
    }

    /// <summary>
    /// Writes the IPv4 address inside <paramref name="address"/> (16 bytes) to <paramref name="v4"/>
    /// (4 bytes) if it is under this prefix. The u octet and the suffix are not looked at: a
    /// translator writes them zero, and were they not, each variant still names the same IPv4 host.
    /// </summary>
    public bool TryExtract(ReadOnlySpan<byte> address, Span<byte> v4)
    {
        var prefixBytes = Length / 8;
        if (!address.Slice(0, prefixBytes).SequenceEqual(_bytes.AsSpan(0, prefixBytes)))
            return false;
        var from = prefixBytes;
        for (var i = 0; i < 4; i++, from++)
        {
            if (from == 8)
                from++; // the u octet
            v4[i] = address[from];
        }

        return true;
    }

    /// <summary>The translated form of the IPv4 address <paramref name="v4"/> under this prefix (u octet and suffix zero).</summary>
    public IPAddress Embed(ReadOnlySpan<byte> v4)
    {
        Span<byte> bytes = stackalloc byte[16];
        _bytes.CopyTo(bytes);
        var to = Length / 8;
        for (var i = 0; i < 4; i++, to++)
        {
            if (to == 8)
                to++;
            bytes[to] = v4[i];
        }

        return new IPAddress(bytes);
    }

    /// <summary>
    /// The range of <paramref name="bytes"/> the registration key reads its own way, or null: a
    /// prefix there would take over those addresses (every prefix is at least 32 bits long, so
    /// its first 32 bits decide). ::/16 holds ::1, ::/96 and ::ffff:0:0/96 (IPv4-mapped).
    /// </summary>
    private static string? Reserved(ReadOnlySpan<byte> bytes) => bytes switch
    {
        [0, 0, ..] => "::/16 (loopback, IPv4-mapped and IPv4-translated addresses)",
        [0x20, 0x01, 0, 0, ..] => "2001::/32 (Teredo)",
        [0x20, 0x02, ..] => "2002::/16 (6to4)",
        [0xfe, var b, ..] when (b & 0xc0) == 0x80 => "fe80::/10 (link-local)",
        [0xff, ..] => "ff00::/8 (multicast)",
        _ => null,
    };

    private static bool IsZero(ReadOnlySpan<byte> bytes)
    {
        foreach (var b in bytes)
        {
            if (b != 0)
                return false;
        }

        return true;
    }

    public override string ToString() => new IPAddress(_bytes) + "/" + Length.ToString(CultureInfo.InvariantCulture);
}
