namespace NetServer.Http;

/// <summary>
/// The methods and the common header names as string constants, so a parsed message hands them
/// out without making a string: <c>request.Method == "GET"</c> costs nothing, and a new
/// connection's first <c>Header(i)</c> of a common header allocates only its value.
/// </summary>
internal static class HttpKnownNames
{
    // Spelled as clients send them; another spelling ("host") is decoded like any other name.
    private static readonly string[] s_headerNames =
    [
        "Host", "Connection", "Content-Length", "Content-Type", "Transfer-Encoding", "User-Agent",
        "Accept", "Accept-Encoding", "Accept-Language", "Accept-Charset", "Cache-Control", "Pragma",
        "Cookie", "Set-Cookie", "Upgrade", "Origin", "Referer", "Authorization", "Expect", "Range",
        "If-None-Match", "If-Modified-Since", "Keep-Alive", "Date", "Server", "ETag", "Last-Modified",
        "Location", "Allow", "Content-Encoding", "Vary", "Sec-WebSocket-Key", "Sec-WebSocket-Version",
        "Sec-WebSocket-Protocol", "Sec-WebSocket-Extensions", "Sec-WebSocket-Accept", "X-Forwarded-For",
        "X-Requested-With", "Upgrade-Insecure-Requests", "DNT", "TE", "Trailer",
    ];

    private static readonly string[] s_methods = ["GET", "POST", "PUT", "DELETE", "HEAD", "OPTIONS", "TRACE", "PATCH", "CONNECT"];

    /// <summary>The constant for a common header name spelled exactly as <paramref name="name"/>.</summary>
    public static bool TryGet(ReadOnlySpan<byte> name, out string known) => TryFind(s_headerNames, name, out known);

    /// <summary>The constant for a standard method (case-sensitive, as methods are).</summary>
    public static bool TryGetMethod(ReadOnlySpan<byte> method, out string known) => TryFind(s_methods, method, out known);

    private static bool TryFind(string[] table, ReadOnlySpan<byte> bytes, out string known)
    {
        foreach (var candidate in table)
        {
            if (candidate.Length == bytes.Length && candidate[0] == bytes[0] && HttpAscii.SameText(candidate, bytes))
            {
                known = candidate;
                return true;
            }
        }

        known = string.Empty;
        return false;
    }
}
