using System.Collections.Generic;
using System.Text;

namespace NetServer;

/// <summary>
/// Parses a PROXY protocol header (v1 text or v2 binary, as HAProxy's <c>send-proxy</c> and
/// <c>send-proxy-v2</c> write it) from the first bytes of a connection. Pure and incremental: call
/// with everything received so far until it says <see cref="ProxyParseStatus.Done"/> or
/// <see cref="ProxyParseStatus.Invalid"/>; it never looks past the header, so the bytes after
/// <c>consumed</c> are the client's own data.
/// </summary>
internal static class ProxyHeader
{
    /// <summary>The longest v1 line, CRLF included (spec: 107 bytes).</summary>
    public const int MaxV1Length = 107;

    /// <summary>Size of the fixed v2 header (signature, version/command, family, length).</summary>
    public const int V2FixedLength = 16;

    /// <summary>Default bound on the v2 length field (addresses plus TLVs).</summary>
    public const int DefaultMaxV2Length = 4096;

    private static readonly byte[] s_v1Prefix = Encoding.ASCII.GetBytes("PROXY ");

    private static readonly char[] s_v6Forbidden = { '%', '[', ']' };

    private static readonly byte[] s_v2Signature =
        { 0x0D, 0x0A, 0x0D, 0x0A, 0x00, 0x0D, 0x0A, 0x51, 0x55, 0x49, 0x54, 0x0A };

    /// <summary>Parses the header at the start of <paramref name="data"/>.</summary>
    /// <param name="data">All bytes received so far on the connection.</param>
    /// <param name="consumed">On Done, how many bytes the header took.</param>
    /// <param name="info">On Done, what the header said.</param>
    /// <param name="reason">On Invalid, what was wrong, for the close reason.</param>
    /// <param name="maxV2Length">Largest v2 length field accepted (at most 65535).</param>
    public static ProxyParseStatus Parse(
        ReadOnlySpan<byte> data,
        out int consumed,
        out ProxyInfo? info,
        out string? reason,
        int maxV2Length = DefaultMaxV2Length)
    {
        consumed = 0;
        info = null;
        reason = null;
        if (data.IsEmpty)
        {
            return ProxyParseStatus.NeedMoreData;
        }

        if (data[0] == s_v2Signature[0])
        {
            return ParseV2(data, maxV2Length, out consumed, out info, out reason);
        }

        if (data[0] == s_v1Prefix[0])
        {
            return ParseV1(data, out consumed, out info, out reason);
        }

        reason = "PROXY protocol: the connection does not start with a PROXY v1 or v2 signature";
        return ProxyParseStatus.Invalid;
    }

    private static ProxyParseStatus ParseV1(
        ReadOnlySpan<byte> data, out int consumed, out ProxyInfo? info, out string? reason)
    {
        consumed = 0;
        info = null;
        reason = null;
        int prefix = Math.Min(data.Length, s_v1Prefix.Length);
        if (!data.Slice(0, prefix).SequenceEqual(s_v1Prefix.AsSpan(0, prefix)))
        {
            reason = "PROXY protocol: the connection does not start with a PROXY v1 or v2 signature";
            return ProxyParseStatus.Invalid;
        }

        int limit = Math.Min(data.Length, MaxV1Length);
        int end = -1;
        for (int i = 0; i < limit; i++)
        {
            byte b = data[i];
            if (b == (byte)'\n')
            {
                if (i == 0 || data[i - 1] != (byte)'\r')
                {
                    reason = "PROXY v1: line ends with LF without CR";
                    return ProxyParseStatus.Invalid;
                }

                end = i - 1;
                break;
            }

            if (b == (byte)'\r')
            {
                if (i + 1 < data.Length && data[i + 1] != (byte)'\n')
                {
                    reason = "PROXY v1: CR not followed by LF";
                    return ProxyParseStatus.Invalid;
                }
            }
            else if (b < 0x20 || b > 0x7E)
            {
                reason = "PROXY v1: header contains a byte that is not printable ASCII";
                return ProxyParseStatus.Invalid;
            }
        }

        if (end < 0)
        {
            if (data.Length >= MaxV1Length)
            {
                reason = "PROXY v1: no CRLF within 107 bytes";
                return ProxyParseStatus.Invalid;
            }

            return ProxyParseStatus.NeedMoreData;
        }

        string line = Encoding.ASCII.GetString(data.Slice(0, end).ToArray());
        string[] parts = line.Split(' ');
        if (parts.Length >= 2 && parts[1] == "UNKNOWN")
        {
            // The spec lets a sender put anything after UNKNOWN; the receiver ignores it.
            consumed = end + 2;
            info = new ProxyInfo(1, isLocal: true, null, null, null, null, null);
            return ProxyParseStatus.Done;
        }

        if (parts.Length != 6)
        {
            reason = $"PROXY v1: expected 'PROXY TCP4|TCP6 src dst sport dport', got {parts.Length} fields";
            return ProxyParseStatus.Invalid;
        }

        bool v6;
        if (parts[1] == "TCP4")
        {
            v6 = false;
        }
        else if (parts[1] == "TCP6")
        {
            v6 = true;
        }
        else
        {
            reason = $"PROXY v1: unknown protocol '{parts[1]}' (TCP4, TCP6 or UNKNOWN)";
            return ProxyParseStatus.Invalid;
        }

        if (!TryParseAddress(parts[2], v6, out IPAddress? src) || !TryParseAddress(parts[3], v6, out IPAddress? dst))
        {
            reason = $"PROXY v1: bad {parts[1]} address";
            return ProxyParseStatus.Invalid;
        }

        if (!TryParsePort(parts[4], out int srcPort) || !TryParsePort(parts[5], out int dstPort))
        {
            reason = "PROXY v1: bad port (decimal 0-65535 without leading zeros)";
            return ProxyParseStatus.Invalid;
        }

        consumed = end + 2;
        info = new ProxyInfo(1, isLocal: false, Endpoint(src!, srcPort), Endpoint(dst!, dstPort), null, null, null);
        return ProxyParseStatus.Done;
    }

    /// <summary>A strict address: a dotted quad without leading zeros, or an IPv6 address without a zone; also what the trusted networks are parsed with.</summary>
    internal static bool TryParseAddress(string text, bool v6, out IPAddress? address)
    {
        address = null;
        if (!v6)
        {
            // Strict dotted quad: IPAddress.TryParse also takes "1", "0x7f.1" and the like.
            string[] octets = text.Split('.');
            if (octets.Length != 4)
            {
                return false;
            }

            var bytes = new byte[4];
            for (int i = 0; i < 4; i++)
            {
                string o = octets[i];
                if (o.Length == 0 || o.Length > 3 || !AllDigits(o) || (o.Length > 1 && o[0] == '0'))
                {
                    return false;
                }

                int value = int.Parse(o, System.Globalization.CultureInfo.InvariantCulture);
                if (value > 255)
                {
                    return false;
                }

                bytes[i] = (byte)value;
            }

            address = new IPAddress(bytes);
            return true;
        }

        if (text.Length == 0 || text.IndexOfAny(s_v6Forbidden) >= 0)
        {
            return false;
        }

        return IPAddress.TryParse(text, out address) && address.AddressFamily == AddressFamily.InterNetworkV6;
    }

    private static bool TryParsePort(string text, out int port)
    {
        port = 0;
        if (text.Length == 0 || text.Length > 5 || !AllDigits(text) || (text.Length > 1 && text[0] == '0'))
        {
            return false;
        }

        port = int.Parse(text, System.Globalization.CultureInfo.InvariantCulture);
        return port <= 65535;
    }

    private static bool AllDigits(string text)
    {
        foreach (char c in text)
        {
            if (c < '0' || c > '9')
            {
                return false;
            }
        }

        return true;
    }

    private static ProxyParseStatus ParseV2(
        ReadOnlySpan<byte> data, int maxLength, out int consumed, out ProxyInfo? info, out string? reason)
    {
        consumed = 0;
        info = null;
        reason = null;
        int prefix = Math.Min(data.Length, s_v2Signature.Length);
        if (!data.Slice(0, prefix).SequenceEqual(s_v2Signature.AsSpan(0, prefix)))
        {
            reason = "PROXY protocol: the connection does not start with a PROXY v1 or v2 signature";
            return ProxyParseStatus.Invalid;
        }

        if (data.Length > 12 && !CheckVersionCommand(data[12], out reason))
        {
            return ProxyParseStatus.Invalid;
        }

        if (data.Length < V2FixedLength)
        {
            return ProxyParseStatus.NeedMoreData;
        }

        bool local = (data[12] & 0x0F) == 0;
        int family = data[13] >> 4;
        int transport = data[13] & 0x0F;
        int length = (data[14] << 8) | data[15];
        if (length > maxLength)
        {
            reason = $"PROXY v2: header length {length} is over the limit of {maxLength}";
            return ProxyParseStatus.Invalid;
        }

        if (data.Length < V2FixedLength + length)
        {
            return ProxyParseStatus.NeedMoreData;
        }

        ReadOnlySpan<byte> body = data.Slice(V2FixedLength, length);
        consumed = V2FixedLength + length;
        if (local)
        {
            // LOCAL (the proxy's own health check): the spec says to ignore the family and skip the
            // whole block, so nothing in it can fail the connection; TLVs after an address block of
            // a known family are kept when they parse and their CRC32C, if any, holds.
            List<ProxyTlv>? localTlvs = null;
            if (AddressLength(family) is int skip && body.Length >= skip
                && (!TryReadTlvs(body.Slice(skip), out localTlvs, out _) || !ProxyCrc32C.Verify(data.Slice(0, consumed), V2FixedLength + skip, out _)))
            {
                localTlvs = null;
            }
            info = new ProxyInfo(2, isLocal: true, null, null, null, null, localTlvs);
            return ProxyParseStatus.Done;
        }

        if (AddressLength(family) is not int addressLength)
        {
            reason = $"PROXY v2: unknown address family {family}";
            consumed = 0;
            return ProxyParseStatus.Invalid;
        }

        // The spec's only valid combinations are UNSPEC (0x00) and STREAM or DGRAM over INET,
        // INET6 or UNIX; a stream connection takes no DGRAM header.
        if ((family == 0 && transport != 0) || (family != 0 && transport != 1))
        {
            reason = transport == 2
                ? "PROXY v2: a datagram (DGRAM) header on a stream connection"
                : $"PROXY v2: unknown transport {transport} for family {family}";
            consumed = 0;
            return ProxyParseStatus.Invalid;
        }

        if (body.Length < addressLength)
        {
            reason = $"PROXY v2: length {length} is too short for the addresses of family {family} ({addressLength} bytes)";
            consumed = 0;
            return ProxyParseStatus.Invalid;
        }

        if (!TryReadTlvs(body.Slice(addressLength), out List<ProxyTlv>? tlvs, out reason)
            || !ProxyCrc32C.Verify(data.Slice(0, consumed), V2FixedLength + addressLength, out reason))
        {
            consumed = 0;
            return ProxyParseStatus.Invalid;
        }

        if (family == 0)
        {
            // PROXY over UNSPEC: the proxy could not say who the client is; keep the socket's addresses.
            info = new ProxyInfo(2, isLocal: true, null, null, null, null, tlvs);
            return ProxyParseStatus.Done;
        }

        if (family == 3)
        {
            info = new ProxyInfo(2, false, null, null, UnixPath(body.Slice(0, 108)), UnixPath(body.Slice(108, 108)), tlvs);
            return ProxyParseStatus.Done;
        }

        int size = family == 1 ? 4 : 16;
        var src = new IPAddress(body.Slice(0, size).ToArray());
        var dst = new IPAddress(body.Slice(size, size).ToArray());
        int srcPort = (body[2 * size] << 8) | body[(2 * size) + 1];
        int dstPort = (body[(2 * size) + 2] << 8) | body[(2 * size) + 3];
        info = new ProxyInfo(2, false, Endpoint(src, srcPort), Endpoint(dst, dstPort), null, null, tlvs);
        return ProxyParseStatus.Done;
    }

    /// <summary>
    /// A header's address and port; an IPv4-mapped IPv6 address (a proxy listening dual-stack may
    /// send one in a TCP6 / AF_INET6 header) is given as the IPv4 client it is, as a direct IPv4
    /// client would be seen.
    /// </summary>
    private static IPEndPoint Endpoint(IPAddress address, int port) => new(ProxyNetwork.Normalize(address), port);

    /// <summary>Bytes of the address block of a v2 family (0 UNSPEC, 1 INET, 2 INET6, 3 UNIX); null for an unknown one.</summary>
    private static int? AddressLength(int family) => family switch
    {
        0 => 0,
        1 => 12,
        2 => 36,
        3 => 216,
        _ => null,
    };

    private static bool CheckVersionCommand(byte versionCommand, out string? reason)
    {
        reason = null;
        if (versionCommand >> 4 != 2)
        {
            reason = $"PROXY v2: unsupported version {versionCommand >> 4}";
            return false;
        }

        if ((versionCommand & 0x0F) > 1)
        {
            reason = $"PROXY v2: unknown command {versionCommand & 0x0F} (0 LOCAL, 1 PROXY)";
            return false;
        }

        return true;
    }

    private static bool TryReadTlvs(ReadOnlySpan<byte> rest, out List<ProxyTlv>? tlvs, out string? reason)
    {
        tlvs = null;
        reason = null;
        while (!rest.IsEmpty)
        {
            if (rest.Length < 3)
            {
                reason = "PROXY v2: truncated TLV header";
                return false;
            }

            byte type = rest[0];
            int length = (rest[1] << 8) | rest[2];
            if (rest.Length < 3 + length)
            {
                reason = $"PROXY v2: TLV 0x{type:X2} of {length} bytes runs past the header";
                return false;
            }

            // 0x04 NOOP is padding; every other type is kept raw, known or not.
            if (type != 0x04)
            {
                tlvs ??= new List<ProxyTlv>();
                tlvs.Add(new ProxyTlv(type, rest.Slice(3, length).ToArray()));
            }

            rest = rest.Slice(3 + length);
        }

        return true;
    }

    private static string UnixPath(ReadOnlySpan<byte> raw)
    {
        int nul = raw.IndexOf((byte)0);
        ReadOnlySpan<byte> path = nul < 0 ? raw : raw.Slice(0, nul);
        return Encoding.UTF8.GetString(path.ToArray());
    }
}
