namespace NetServer.Http;

/// <summary>
/// The byte classes of RFC 9110/9112 and small span helpers shared by the head parser and the
/// body reader. The per-target files scan with them: vectorized <c>SearchValues</c> on net10.0,
/// a table lookup per byte on the netstandard builds.
/// </summary>
internal static partial class HttpSyntax
{
    public const byte CR = (byte)'\r';
    public const byte LF = (byte)'\n';
    public const byte SP = (byte)' ';
    public const byte HT = (byte)'\t';

    private const byte Token = 1;        // tchar (RFC 9110 5.6.2)
    private const byte BadValue = 2;     // not allowed in a field value: CTLs but HTAB (RFC 9110 5.5)
    private const byte BadTarget = 4;    // not allowed in a request target: CTLs, SP, DEL
    private const byte RegName = 8;      // unreserved / sub-delims / "%" of a reg-name (RFC 3986 3.2.2)

    private static readonly byte[] s_classes = BuildClasses();

    public static bool IsToken(byte b) => (s_classes[b] & Token) != 0;

    public static bool IsWhitespace(byte b) => b == SP || b == HT;

    public static bool IsDigit(byte b) => (uint)(b - '0') <= 9;

    /// <summary>The value of a hexadecimal digit, or -1.</summary>
    public static int HexValue(byte b)
    {
        if ((uint)(b - '0') <= 9)
            return b - '0';
        var lower = b | 0x20;
        return (uint)(lower - 'a') <= 'f' - 'a' ? lower - 'a' + 10 : -1;
    }

    /// <summary>The span without leading and trailing spaces and tabs (OWS).</summary>
    public static ReadOnlySpan<byte> TrimWhitespace(ReadOnlySpan<byte> value)
    {
        var start = 0;
        while (start < value.Length && IsWhitespace(value[start]))
            start++;
        var end = value.Length;
        while (end > start && IsWhitespace(value[end - 1]))
            end--;
        return value.Slice(start, end - start);
    }

    /// <summary>
    /// ASCII case-insensitive equality with a lower-case literal. Letters are folded by setting bit
    /// 0x20, so only letters compare loosely: a non-letter of the literal ('-', digits) must match
    /// exactly, which also keeps control bytes such as CR (0x0D, which folds to '-') from matching.
    /// </summary>
    public static bool EqualsLower(ReadOnlySpan<byte> value, ReadOnlySpan<byte> lowerLiteral)
    {
        if (value.Length != lowerLiteral.Length)
            return false;
        for (var i = 0; i < value.Length; i++)
        {
            var expected = lowerLiteral[i];
            var b = value[i];
            if (b != expected && ((uint)(expected - 'a') > 'z' - 'a' || (b | 0x20) != expected))
                return false;
        }

        return true;
    }

    /// <summary>ASCII case-insensitive equality of two spans (header names given by a caller).</summary>
    public static bool EqualsIgnoreCase(ReadOnlySpan<byte> a, ReadOnlySpan<byte> b)
    {
        if (a.Length != b.Length)
            return false;
        for (var i = 0; i < a.Length; i++)
        {
            var x = a[i];
            var y = b[i];
            if (x != y && ((uint)((x | 0x20) - 'a') > 'z' - 'a' || (x | 0x20) != (y | 0x20)))
                return false;
        }

        return true;
    }

    /// <summary>
    /// The next element of a comma-separated list (RFC 9110 5.6.1), trimmed of OWS, starting at
    /// <paramref name="position"/>; empty elements come back empty (callers skip them, as the RFC
    /// asks). False once the list is exhausted.
    /// </summary>
    public static bool NextListElement(ReadOnlySpan<byte> list, ref int position, out ReadOnlySpan<byte> element)
    {
        if (position > list.Length)
        {
            element = default;
            return false;
        }

        var rest = list.Slice(position);
        var comma = rest.IndexOf((byte)',');
        if (comma < 0)
        {
            element = TrimWhitespace(rest);
            position = list.Length + 1;
        }
        else
        {
            element = TrimWhitespace(rest.Slice(0, comma));
            position += comma + 1;
        }

        return true;
    }

    /// <summary>Whether the comma-separated list <paramref name="list"/> has the element <paramref name="token"/> (any case).</summary>
    public static bool HasToken(ReadOnlySpan<byte> list, ReadOnlySpan<byte> token)
    {
        var position = 0;
        while (NextListElement(list, ref position, out var element))
        {
            if (EqualsIgnoreCase(element, token))
                return true;
        }

        return false;
    }

    /// <summary>
    /// A Host field value (RFC 9110 7.2): <c>uri-host [ ":" port ]</c>, where the host is a
    /// reg-name (with valid percent escapes), an IPv4 address (a reg-name by its bytes) or an IP
    /// literal in brackets. Empty is valid (a target without authority).
    /// </summary>
    public static bool IsValidHost(ReadOnlySpan<byte> host)
    {
        if (host.IsEmpty)
            return true;
        int portStart;
        if (host[0] == (byte)'[')
        {
            var close = host.IndexOf((byte)']');
            if (close < 2)
                return false;
            foreach (var b in host.Slice(1, close - 1))
            {
                if (HexValue(b) < 0 && b != (byte)':' && b != (byte)'.')
                    return false;
            }

            if (close == host.Length - 1)
                return true;
            if (host[close + 1] != (byte)':')
                return false;
            portStart = close + 2;
        }
        else
        {
            var colon = host.IndexOf((byte)':');
            var name = colon < 0 ? host : host.Slice(0, colon);
            for (var i = 0; i < name.Length; i++)
            {
                var b = name[i];
                if ((s_classes[b] & RegName) == 0)
                    return false;
                if (b == (byte)'%' && (i + 2 >= name.Length || HexValue(name[i + 1]) < 0 || HexValue(name[i + 2]) < 0))
                    return false;
            }

            if (colon < 0)
                return true;
            portStart = colon + 1;
        }

        foreach (var b in host.Slice(portStart))
        {
            if (!IsDigit(b))
                return false;
        }

        return true;
    }

    private static byte[] BuildClasses()
    {
        var classes = new byte[256];
        for (var b = 0; b < 256; b++)
        {
            var isAlnum = b is >= '0' and <= '9' or >= 'A' and <= 'Z' or >= 'a' and <= 'z';
            if (isAlnum || "!#$%&'*+-.^_`|~".AsSpan().IndexOf((char)b) >= 0)
                classes[b] |= Token;
            if ((b < 0x20 && b != '\t') || b == 0x7F)
                classes[b] |= BadValue;
            if (b <= 0x20 || b == 0x7F)
                classes[b] |= BadTarget;
            if (isAlnum || "-._~!$&'()*+,;=%".AsSpan().IndexOf((char)b) >= 0)
                classes[b] |= RegName;
        }

        return classes;
    }
}
