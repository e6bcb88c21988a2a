using NetServer.Http;

namespace NetServer.WebSockets;

// The Sec-WebSocket-Extensions grammar (RFC 6455 section 9.1) as far as permessage-deflate needs it:
//   extension-list = 1#extension ; extension = name *( ";" param ) ; param = token [ "=" ( token / quoted-string ) ]
// with optional whitespace around ";" and "=". The list is split at commas by HttpSyntax.NextListElement,
// which does not know quoted strings: a comma inside quotes splits an element in two, but such a
// value could never be valid here (our values are digits), so the offer it is in is declined anyway.
internal static partial class WsDeflateNegotiation
{
    private const int ClientBitsWithoutValue = -1;

    /// <summary>The parameters of one permessage-deflate element, each checked for its own validity.</summary>
    private struct Parsed
    {
        public bool ServerNoContextTakeover;
        public bool ClientNoContextTakeover;
        public int ServerMaxWindowBits;  // 0 when absent
        public int ClientMaxWindowBits;  // 0 when absent, ClientBitsWithoutValue when given without a value
    }

    /// <summary>The leading token of a list element (the extension name) and what follows it.</summary>
    private static ReadOnlySpan<byte> SplitName(ReadOnlySpan<byte> element, out ReadOnlySpan<byte> parameters)
    {
        var end = HttpSyntax.IndexOfNonToken(element);
        if (end < 0)
            end = element.Length;
        parameters = element.Slice(end);
        return element.Slice(0, end);
    }

    private static bool IsDeflate(ReadOnlySpan<byte> name) => HttpSyntax.EqualsLower(name, "permessage-deflate"u8);

    /// <summary>
    /// Reads the <c>; param[=value]</c> list after the extension name. False, with the reason, for a
    /// syntax error, an unknown or repeated parameter, or a value RFC 7692 does not allow; in a
    /// response, <c>client_max_window_bits</c> must have a value (in an offer it may not).
    /// </summary>
    private static bool TryParseParameters(ReadOnlySpan<byte> rest, bool inResponse, out Parsed parsed, out string? problem)
    {
        parsed = default;
        while (true)
        {
            rest = HttpSyntax.TrimWhitespace(rest);
            if (rest.IsEmpty)
            {
                problem = null;
                return true;
            }

            if (rest[0] != (byte)';')
            {
                problem = $"unexpected '{Text(rest)}' where ';' should start a parameter";
                return false;
            }

            rest = HttpSyntax.TrimWhitespace(rest.Slice(1));
            var nameEnd = HttpSyntax.IndexOfNonToken(rest);
            var name = nameEnd < 0 ? rest : rest.Slice(0, nameEnd);
            if (name.IsEmpty)
            {
                problem = "a parameter without a name";
                return false;
            }

            rest = HttpSyntax.TrimWhitespace(rest.Slice(name.Length));
            var hasValue = false;
            ReadOnlySpan<byte> value = default;
            var quoted = false;
            if (!rest.IsEmpty && rest[0] == (byte)'=')
            {
                rest = HttpSyntax.TrimWhitespace(rest.Slice(1));
                var length = ValueLength(rest, out quoted);
                if (length == 0)
                {
                    problem = $"parameter '{Text(name)}' has a malformed value";
                    return false;
                }

                value = quoted ? rest.Slice(1, length - 2) : rest.Slice(0, length);
                rest = rest.Slice(length);
                hasValue = true;
            }

            if (!TryApply(ref parsed, name, hasValue, value, quoted, inResponse, out problem))
                return false;
        }
    }

    /// <summary>
    /// The length of the token or quoted-string (RFC 9110 5.6.4) that <paramref name="rest"/> starts
    /// with, quotes included; 0 when it starts with neither.
    /// </summary>
    private static int ValueLength(ReadOnlySpan<byte> rest, out bool quoted)
    {
        quoted = !rest.IsEmpty && rest[0] == (byte)'"';
        if (!quoted)
        {
            var end = HttpSyntax.IndexOfNonToken(rest);
            return end < 0 ? rest.Length : end;
        }

        for (var i = 1; i < rest.Length; i++)
        {
            var b = rest[i];
            if (b == (byte)'"')
                return i + 1;
            if (b == (byte)'\\')
            {
                i++;
                if (i == rest.Length || !IsQuotedText(rest[i]))
                    return 0;
            }
            else if (!IsQuotedText(b))
            {
                return 0;
            }
        }

        return 0;
    }

    // qdtext and the byte of a quoted-pair: HTAB, SP, VCHAR, obs-text (RFC 9110 5.6.4).
    private static bool IsQuotedText(byte b) => b == HttpSyntax.HT || (b >= 0x20 && b != 0x7F);

    private static bool TryApply(ref Parsed parsed, ReadOnlySpan<byte> name, bool hasValue, ReadOnlySpan<byte> value, bool quoted, bool inResponse, out string? problem)
    {
        problem = null;
        if (HttpSyntax.EqualsLower(name, "server_no_context_takeover"u8))
        {
            if (parsed.ServerNoContextTakeover)
                problem = "server_no_context_takeover is given twice";
            else if (hasValue)
                problem = "server_no_context_takeover takes no value";
            parsed.ServerNoContextTakeover = true;
        }
        else if (HttpSyntax.EqualsLower(name, "client_no_context_takeover"u8))
        {
            if (parsed.ClientNoContextTakeover)
                problem = "client_no_context_takeover is given twice";
            else if (hasValue)
                problem = "client_no_context_takeover takes no value";
            parsed.ClientNoContextTakeover = true;
        }
        else if (HttpSyntax.EqualsLower(name, "server_max_window_bits"u8))
        {
            if (parsed.ServerMaxWindowBits != 0)
                problem = "server_max_window_bits is given twice";
            else if (!hasValue)
                problem = "server_max_window_bits needs a value";
            else if (!TryParseWindowBits(value, quoted, out parsed.ServerMaxWindowBits))
                problem = $"server_max_window_bits={Text(value)} is not a window size from 8 to 15";
        }
        else if (HttpSyntax.EqualsLower(name, "client_max_window_bits"u8))
        {
            if (parsed.ClientMaxWindowBits != 0)
                problem = "client_max_window_bits is given twice";
            else if (!hasValue && inResponse)
                problem = "client_max_window_bits needs a value in a response";
            else if (!hasValue)
                parsed.ClientMaxWindowBits = ClientBitsWithoutValue;
            else if (!TryParseWindowBits(value, quoted, out parsed.ClientMaxWindowBits))
                problem = $"client_max_window_bits={Text(value)} is not a window size from 8 to 15";
        }
        else
        {
            problem = $"unknown parameter '{Text(name)}'";
        }

        return problem is null;
    }

    /// <summary>
    /// A window size: a decimal from 8 to 15 without leading zeros (RFC 7692 7.1.2). A quoted value
    /// counts after unescaping (RFC 6455 9.1), so <c>"1\0"</c> is 10.
    /// </summary>
    private static bool TryParseWindowBits(ReadOnlySpan<byte> value, bool quoted, out int bits)
    {
        bits = 0;
        var digits = 0;
        for (var i = 0; i < value.Length; i++)
        {
            var b = value[i];
            if (quoted && b == (byte)'\\')
                b = value[++i]; // ValueLength guarantees a byte follows a backslash
            if (!HttpSyntax.IsDigit(b) || (digits == 1 && bits == 0) || digits == 2)
            {
                bits = 0;
                return false;
            }

            bits = (bits * 10) + (b - '0');
            digits++;
        }

        if (bits is >= WsDeflateOptions.MinWindowBits and <= WsDeflateOptions.MaxWindowBits)
            return true;
        bits = 0;
        return false;
    }

    /// <summary>Header text for an error message.</summary>
    private static string Text(ReadOnlySpan<byte> bytes) => TextEncoding.Decode(bytes.Length > 64 ? bytes.Slice(0, 64) : bytes);

    /// <summary>A header string as the bytes it stands for (Latin-1; a char past 0xFF becomes NUL, which no rule allows).</summary>
    private static ReadOnlySpan<byte> ToBytes(string text, Span<byte> buffer)
    {
        var bytes = text.Length <= buffer.Length ? buffer.Slice(0, text.Length) : new byte[text.Length];
        for (var i = 0; i < text.Length; i++)
            bytes[i] = text[i] <= 0xFF ? (byte)text[i] : (byte)0;
        return bytes;
    }
}
