namespace NetServer.Http;

/// <summary>
/// The parts of a request target (path and query) and their percent-decoding (RFC 3986 section
/// 2.1; '+' is a space only in the query, as HTML forms encode it). Decoding is strict: a '%' not
/// followed by two hex digits, an encoded NUL (%00) or bytes that are not UTF-8 (overlong forms
/// included, so "%C0%AE" is not a '.') make it fail instead of producing a guess.
/// </summary>
/// <remarks>The decoded path is not normalized: "%2F" becomes '/', and dot segments stay as sent.</remarks>
internal static class HttpUrl
{
    private const int StackLimit = 256;

    /// <summary>Where the path and the query (after '?', without it) lie in a request target.</summary>
    /// <remarks>
    /// Origin-form ("/a?b") and asterisk-form ("*") are taken as they are; absolute-form
    /// ("http://host/a?b") skips the scheme and authority (an empty path stands for "/");
    /// anything after a '#' (which a client should not send) is no part of either.
    /// </remarks>
    public static void Split(ReadOnlySpan<byte> target, out HttpRange path, out HttpRange query)
    {
        var hash = target.IndexOf((byte)'#');
        if (hash >= 0)
            target = target.Slice(0, hash);

        var pathStart = 0;
        if (!target.IsEmpty && target[0] != (byte)'/')
        {
            var scheme = target.IndexOf("://"u8);
            if (scheme > 0)
            {
                var authorityStart = scheme + 3;
                var end = target.Slice(authorityStart).IndexOfAny((byte)'/', (byte)'?');
                pathStart = end < 0 ? target.Length : authorityStart + end;
            }
        }

        var mark = target.Slice(pathStart).IndexOf((byte)'?');
        var pathEnd = mark < 0 ? target.Length : pathStart + mark;
        path = new HttpRange(pathStart, pathEnd - pathStart);
        query = mark < 0 ? new HttpRange(target.Length, 0) : new HttpRange(pathEnd + 1, target.Length - pathEnd - 1);
    }

    /// <summary>
    /// Percent-decodes <paramref name="encoded"/> into <paramref name="destination"/> (at least as
    /// long); false on a bad escape, a NUL or a result that is not UTF-8.
    /// </summary>
    public static bool TryDecode(ReadOnlySpan<byte> encoded, Span<byte> destination, bool plusIsSpace, out int written)
    {
        written = 0;
        for (var i = 0; i < encoded.Length; i++)
        {
            var b = encoded[i];
            if (b == (byte)'%')
            {
                if (i + 2 >= encoded.Length)
                    return false;
                var high = HexValue(encoded[i + 1]);
                var low = HexValue(encoded[i + 2]);
                if (high < 0 || low < 0)
                    return false;
                b = (byte)((high << 4) | low);
                i += 2;
            }
            else if (b == (byte)'+' && plusIsSpace)
            {
                b = (byte)' ';
            }

            if (b == 0)
                return false;
            destination[written++] = b;
        }

        return IsValidUtf8(destination.Slice(0, written));
    }

    /// <summary>Decodes <paramref name="encoded"/> to a string kept in <paramref name="text"/> (reused when the text repeats).</summary>
    public static bool TryDecode(ReadOnlySpan<byte> encoded, bool plusIsSpace, ref HttpText text, out string value)
    {
        byte[]? rented = null;
        var scratch = encoded.Length <= StackLimit ? stackalloc byte[StackLimit] : (rented = BufferPool.Shared.Rent(encoded.Length));
        try
        {
            if (!TryDecode(encoded, scratch, plusIsSpace, out var written))
            {
                value = string.Empty;
                return false;
            }

            value = text.Get(scratch.Slice(0, written));
            return true;
        }
        finally
        {
            if (rented is not null)
                BufferPool.Shared.Return(rented);
        }
    }

    /// <summary>
    /// Finds the first parameter of <paramref name="query"/> whose decoded name is
    /// <paramref name="name"/> and decodes its value ("a" alone has the value ""). False when there
    /// is none, or when its value's encoding is invalid.
    /// </summary>
    public static bool TryGetQuery(ReadOnlySpan<byte> query, string name, out string value)
    {
        value = string.Empty;
        if (name is null)
            ThrowHelper.ThrowArgumentNull(nameof(name));

        var nameLength = TextEncoding.ByteCount(name.AsSpan());
        var scratchLength = Math.Max(query.Length, nameLength);
        byte[]? rented = null;
        var scratch = scratchLength * 2 <= StackLimit ? stackalloc byte[StackLimit] : (rented = BufferPool.Shared.Rent(scratchLength * 2));
        try
        {
            var nameBytes = scratch.Slice(0, nameLength);
            TextEncoding.Encode(name.AsSpan(), nameBytes);
            var decoded = scratch.Slice(scratchLength);
            while (!query.IsEmpty)
            {
                var amp = query.IndexOf((byte)'&');
                var pair = amp < 0 ? query : query.Slice(0, amp);
                query = amp < 0 ? default : query.Slice(amp + 1);

                var eq = pair.IndexOf((byte)'=');
                var key = eq < 0 ? pair : pair.Slice(0, eq);
                if (!TryDecode(key, decoded, plusIsSpace: true, out var keyLength) || !decoded.Slice(0, keyLength).SequenceEqual(nameBytes))
                    continue;

                var raw = eq < 0 ? default : pair.Slice(eq + 1);
                if (!TryDecode(raw, decoded, plusIsSpace: true, out var valueLength))
                    return false;
                value = valueLength == 0 ? string.Empty : TextEncoding.Decode(decoded.Slice(0, valueLength));
                return true;
            }

            return false;
        }
        finally
        {
            if (rented is not null)
                BufferPool.Shared.Return(rented);
        }
    }

    /// <summary>Strict UTF-8 (RFC 3629): no overlong forms, no surrogates, nothing above U+10FFFF.</summary>
    public static bool IsValidUtf8(ReadOnlySpan<byte> bytes)
    {
        var i = 0;
        while (i < bytes.Length)
        {
            var b = bytes[i];
            if (b < 0x80)
            {
                i++;
                continue;
            }

            // The allowed range of the second byte depends on the first (RFC 3629 section 4).
            int extra;
            byte low = 0x80, high = 0xBF;
            if (b is >= 0xC2 and <= 0xDF)
            {
                extra = 1;
            }
            else if (b is >= 0xE0 and <= 0xEF)
            {
                extra = 2;
                if (b == 0xE0)
                    low = 0xA0;
                else if (b == 0xED)
                    high = 0x9F;
            }
            else if (b is >= 0xF0 and <= 0xF4)
            {
                extra = 3;
                if (b == 0xF0)
                    low = 0x90;
                else if (b == 0xF4)
                    high = 0x8F;
            }
            else
            {
                return false;
            }

            if (i + extra >= bytes.Length)
                return false;
            if (bytes[i + 1] < low || bytes[i + 1] > high)
                return false;
            for (var k = 2; k <= extra; k++)
            {
                if ((bytes[i + k] & 0xC0) != 0x80)
                    return false;
            }

            i += extra + 1;
        }

        return true;
    }

    private static int HexValue(byte b) => b switch
    {
        >= (byte)'0' and <= (byte)'9' => b - '0',
        >= (byte)'a' and <= (byte)'f' => b - 'a' + 10,
        >= (byte)'A' and <= (byte)'F' => b - 'A' + 10,
        _ => -1,
    };
}
