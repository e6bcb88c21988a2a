namespace NetServer.Http;

/// <summary>What <see cref="RequestPath.Normalize"/> made of a request target.</summary>
internal enum RequestPathResult
{
    /// <summary>A path: the decoded, normalized bytes are in the buffer.</summary>
    Path,

    /// <summary>No path to look up: "*" (OPTIONS) or authority-form (CONNECT).</summary>
    NotPath,

    /// <summary>A path no file can have: it climbs above the root, holds NUL, a drive letter or a bad %-escape.</summary>
    Invalid,
}

/// <summary>
/// Turns a request target into the key of a static file: the path alone (query dropped),
/// percent-decoded once, '\' and %2F read as '/', runs of '/' merged, "." and ".." segments removed
/// as RFC 3986 5.2.4 does. A ".." that would climb above the root makes the whole target
/// <see cref="RequestPathResult.Invalid"/> instead of being clamped, as does NUL, a first segment
/// that is a drive letter ("C:") or a '%' not followed by two hex digits. The result always starts
/// with '/' and ends with '/' when it names a folder.
/// </summary>
/// <remarks>
/// Decoding once means "%252e%252e" stays the literal segment "%2e%2e", which no file is named.
/// The key is only ever looked up in the cache, never handed to the file system, so these rules
/// are a second line: a file outside the folder is never in the cache to begin with.
/// </remarks>
internal static class RequestPath
{
    /// <summary>
    /// Normalizes the path of <paramref name="target"/> into <paramref name="destination"/> (at
    /// least as long as the target plus one) and says where, in the target as received, the path
    /// ends and the query ("?..." up to any '#') ends: target[pathStart..pathEnd] and
    /// target[pathEnd..queryEnd] (for a redirect).
    /// </summary>
    public static RequestPathResult Normalize(ReadOnlySpan<byte> target, Span<byte> destination, out int length, out int pathStart, out int pathEnd, out int queryEnd)
    {
        length = 0;
        pathEnd = queryEnd = 0;
        if (!TryFindPath(target, out pathStart))
            return RequestPathResult.NotPath;

        pathEnd = pathStart;
        while (pathEnd < target.Length && target[pathEnd] != '?' && target[pathEnd] != '#')
            pathEnd++;
        queryEnd = pathEnd;
        while (queryEnd < target.Length && target[queryEnd] != '#')
            queryEnd++;

        var written = 1;
        destination[0] = (byte)'/';
        var segment = 1;
        var i = pathStart;
        if (i < pathEnd && target[i] == '/')
            i++;
        while (i <= pathEnd)
        {
            // The end of the path closes the last segment like a separator would, without adding one.
            var last = i == pathEnd;
            byte b;
            if (last)
            {
                b = (byte)'/';
                i++;
            }
            else if (target[i] == '%')
            {
                if (i + 2 >= pathEnd || !TryHex(target[i + 1], out var high) || !TryHex(target[i + 2], out var low))
                    return RequestPathResult.Invalid;
                b = (byte)((high << 4) | low);
                i += 3;
            }
            else
            {
                b = target[i++];
            }

            if (b == 0)
                return RequestPathResult.Invalid;
            if (b != '/' && b != '\\')
            {
                destination[written++] = b;
                continue;
            }

            // A segment ended at destination[segment..written]; '/' before it is written already.
            var name = destination.Slice(segment, written - segment);
            if (name.Length == 1 && name[0] == '.')
            {
                written = segment;
            }
            else if (name.Length == 2 && name[0] == '.' && name[1] == '.')
            {
                if (segment == 1)
                    return RequestPathResult.Invalid; // above the root
                written = segment - 1;
                while (destination[written - 1] != '/')
                    written--;
            }
            else if (name.Length > 0)
            {
                if (segment == 1 && IsDriveLetter(name))
                    return RequestPathResult.Invalid;
                if (!last)
                    destination[written++] = (byte)'/';
            }

            // (an empty segment, "//", is merged)
            segment = written;
        }

        length = written;
        return RequestPathResult.Path;
    }

    // origin-form "/path?query", or absolute-form "http://host/path?query" (RFC 9112 3.2.2: a server must accept it).
    private static bool TryFindPath(ReadOnlySpan<byte> target, out int pathStart)
    {
        pathStart = 0;
        if (target.Length > 0 && target[0] == '/')
            return true;

        var colon = target.IndexOf((byte)':');
        if (colon <= 0 || !target.Slice(colon).StartsWith("://"u8))
            return false;
        for (var i = 0; i < colon; i++)
        {
            var c = target[i] | 0x20;
            if (!((c >= 'a' && c <= 'z') || (i > 0 && ((target[i] >= '0' && target[i] <= '9') || target[i] == '+' || target[i] == '-' || target[i] == '.'))))
                return false;
        }

        pathStart = colon + 3;
        while (pathStart < target.Length && target[pathStart] != '/' && target[pathStart] != '?' && target[pathStart] != '#')
            pathStart++;
        return true;
    }

    private static bool IsDriveLetter(ReadOnlySpan<byte> name) =>
        name.Length >= 2 && name[1] == ':' && (uint)((name[0] | 0x20) - 'a') <= 'z' - 'a';

    private static bool TryHex(byte b, out int value)
    {
        if ((uint)(b - '0') <= 9)
            value = b - '0';
        else if ((uint)((b | 0x20) - 'a') <= 5)
            value = (b | 0x20) - 'a' + 10;
        else
            value = -1;
        return value >= 0;
    }
}
