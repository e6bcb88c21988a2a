using System.Globalization;

namespace NetServer;

/// <summary>
/// One trusted source of PROXY headers: an address, or a network in CIDR notation
/// (<c>10.0.0.0/8</c>, <c>fd00::/8</c>). IPv4-mapped IPv6 peers (a dual-mode listener's) match
/// the IPv4 networks.
/// </summary>
internal readonly struct ProxyNetwork
{
    private readonly byte[] _prefix;
    private readonly int _bits;

    private ProxyNetwork(byte[] prefix, int bits)
    {
        _prefix = prefix;
        _bits = bits;
    }

    /// <summary>Parses "address" or "address/bits".</summary>
    /// <exception cref="FormatException">The text is neither.</exception>
    public static ProxyNetwork Parse(string text)
    {
        var slash = text.IndexOf('/');
        var addressText = slash < 0 ? text : text.Substring(0, slash);
        // Strict, as in the headers: IPAddress.TryParse reads "010.0.0.0" as octal (8.0.0.0) and
        // "172.16" as 172.0.0.16, which would trust a network the operator never named.
        addressText = addressText.Trim();
        if (!ProxyHeader.TryParseAddress(addressText, v6: false, out var address) && !ProxyHeader.TryParseAddress(addressText, v6: true, out address))
            throw new FormatException($"'{text}' is not an IP address (a dotted quad without leading zeros, or IPv6) or a network such as 10.0.0.0/8.");
        var bytes = Normalize(address!).GetAddressBytes();
        var bits = bytes.Length * 8;
        if (slash >= 0
            && (!int.TryParse(text.Substring(slash + 1).Trim(), NumberStyles.None, CultureInfo.InvariantCulture, out bits) || bits > bytes.Length * 8))
            throw new FormatException($"'{text}': the prefix length must be 0 to {bytes.Length * 8}.");
        return new ProxyNetwork(bytes, bits);
    }

    /// <summary>True when <paramref name="address"/> is inside this network.</summary>
    public bool Contains(IPAddress address)
    {
        var bytes = Normalize(address).GetAddressBytes();
        if (bytes.Length != _prefix.Length)
            return false;
        var whole = _bits / 8;
        for (var i = 0; i < whole; i++)
        {
            if (bytes[i] != _prefix[i])
                return false;
        }

        var rest = _bits % 8;
        if (rest == 0)
            return true;
        var mask = (byte)(0xFF << (8 - rest));
        return (bytes[whole] & mask) == (_prefix[whole] & mask);
    }

    /// <summary>An IPv4-mapped IPv6 address as the IPv4 address it carries; any other as it is.</summary>
    internal static IPAddress Normalize(IPAddress address) => address.IsIPv4MappedToIPv6 ? address.MapToIPv4() : address;
}
