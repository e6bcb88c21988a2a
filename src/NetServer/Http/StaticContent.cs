namespace NetServer.Http;

/// <summary>
/// Answers GET and HEAD requests from the static files of a <see cref="FileCache"/>: the cached 200
/// response as it is, its head alone for HEAD, 304 for a fresh conditional request, 206 for one
/// byte range, 412/416 where RFC 9110 says so, and a redirect from a folder's path without its '/'.
/// See docs/http-static.md.
/// </summary>
/// <remarks>
/// <para>Other methods are never answered here (<see cref="StaticReplyKind.NotStatic"/>): the
/// application decides what a POST to a static path means, as with NetCoreServer, which consulted
/// its cache for GET only.</para>
/// <para>Allocation-free: the target is decoded into a per-thread buffer, heads that depend on the
/// request are written into the caller's scratch span, bodies are slices of the cached array.</para>
/// </remarks>
internal static partial class StaticContent
{
    /// <summary>The scratch span <see cref="Serve"/> needs at least; every head it builds fits (a redirect for a very long path falls back to <see cref="StaticReplyKind.NotStatic"/>).</summary>
    public const int MinScratchSize = 512;

    private static readonly byte[] s_badRequest = Ascii("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n");
    private static readonly byte[] s_preconditionFailed = Ascii("HTTP/1.1 412 Precondition Failed\r\nContent-Length: 0\r\n\r\n");

    /// <summary>
    /// Decides the answer to one request for static content.
    /// </summary>
    /// <param name="cache">The cache holding the static files.</param>
    /// <param name="method">The request method, as received (methods are case-sensitive).</param>
    /// <param name="target">The request target as received: percent-encoded path and query (origin-form or absolute-form).</param>
    /// <param name="headers">The request's header fields.</param>
    /// <param name="scratch">At least <see cref="MinScratchSize"/> bytes for a head built for this request; keep it until the reply is sent.</param>
    public static StaticReply Serve<THeaders>(FileCache cache, ReadOnlySpan<byte> method, ReadOnlySpan<byte> target, THeaders headers, Span<byte> scratch)
        where THeaders : IHttpHeaderSource
    {
        bool head;
        if (method.SequenceEqual("GET"u8))
            head = false;
        else if (method.SequenceEqual("HEAD"u8))
            head = true;
        else
            return default;
        if (cache.Empty)
            return default;

        // Room for the decoded path (never longer than the target, plus its leading '/') and "/index.html".
        var key = CacheKey.Probe(target.Length + 1 + IndexFile.Length + 1);
        switch (RequestPath.Normalize(target, key, out var length, out var pathStart, out var pathEnd, out var queryEnd))
        {
            case RequestPathResult.NotPath:
                return default;
            case RequestPathResult.Invalid:
                return new StaticReply(StaticReplyKind.BadRequest, 0, s_badRequest);
        }

        CacheEntry? entry;
        if (key[length - 1] == '/')
        {
            IndexFile.CopyTo(key.AsSpan(length));
            if (!cache.TryGetEntry(key, length + IndexFile.Length, out entry))
                return default;
        }
        else if (!cache.TryGetEntry(key, length, out entry))
        {
            // "/docs" where "/docs/index.html" exists: send the client to "/docs/", so the page's relative links resolve.
            key[length] = (byte)'/';
            IndexFile.CopyTo(key.AsSpan(length + 1));
            if (cache.TryGetEntry(key, length + 1 + IndexFile.Length, out var index) && index.Response is not null)
                return Redirect(target.Slice(pathStart, pathEnd - pathStart), target.Slice(pathEnd, queryEnd - pathEnd), scratch);
            return default;
        }

        var response = entry.Response;
        if (response is null)
        {
            // A value added by FileCache.Add: sent as it is for GET (what NetCoreServer did); it has no head to send alone.
            return head ? default : new StaticReply(StaticReplyKind.Whole, 0, entry.Value);
        }

        return Respond(response, head, headers, scratch);
    }

    private static ReadOnlySpan<byte> IndexFile => "index.html"u8;

    private static StaticReply Respond<THeaders>(StaticResponse response, bool head, THeaders headers, Span<byte> scratch)
        where THeaders : IHttpHeaderSource
    {
        // RFC 9110 13.2.2: If-Match, else If-Unmodified-Since; then If-None-Match, else If-Modified-Since; then Range.
        // A field whose value does not parse is ignored, as if absent.
        if (headers.TryGetHeader("If-Match"u8, out var value))
        {
            if (MatchEntityTags(value, response.ETag, strong: true) == TagMatch.None)
                return new StaticReply(StaticReplyKind.PreconditionFailed, 0, s_preconditionFailed);
        }
        else if (headers.TryGetHeader("If-Unmodified-Since"u8, out value) && HttpDate.TryParse(value, out var unmodifiedSince)
            && response.LastModified > unmodifiedSince)
        {
            return new StaticReply(StaticReplyKind.PreconditionFailed, 0, s_preconditionFailed);
        }

        var noneMatch = headers.TryGetHeader("If-None-Match"u8, out value) ? MatchEntityTags(value, response.ETag, strong: false) : TagMatch.Invalid;
        if (noneMatch == TagMatch.Found)
            return NotModified(response, scratch);
        if (noneMatch == TagMatch.Invalid && headers.TryGetHeader("If-Modified-Since"u8, out value) && HttpDate.TryParse(value, out var modifiedSince)
            && response.LastModified <= modifiedSince)
        {
            return NotModified(response, scratch);
        }

        if (head)
            return new StaticReply(StaticReplyKind.Head, 0, new ReadOnlyMemory<byte>(response.Bytes, 0, response.HeadLength));

        // Range applies to GET only (RFC 9110 14.2); an empty file has no bytes to select, so it is sent whole.
        if (response.ContentLength > 0 && headers.TryGetHeader("Range"u8, out value)
            && (!headers.TryGetHeader("If-Range"u8, out var ifRange) || IfRangeHolds(ifRange, response)))
        {
            switch (ParseRange(value, response.ContentLength, out var first, out var last))
            {
                case RangeResult.Satisfiable:
                    return Partial(response, first, last, scratch);
                case RangeResult.Unsatisfiable:
                    return RangeNotSatisfiable(response, scratch);
            }
        }

        return new StaticReply(StaticReplyKind.Whole, 0, response.Bytes);
    }

    private static StaticReply NotModified(StaticResponse response, Span<byte> scratch)
    {
        // RFC 9110 15.4.5: the fields a 200 would carry for caches (ETag, Cache-Control; Last-Modified too), no body.
        var writer = new HeadWriter(scratch);
        writer.Write("HTTP/1.1 304 Not Modified\r\n"u8);
        writer.Write(response.Validators);
        writer.Write("\r\n"u8);
        return Built(StaticReplyKind.NotModified, ref writer, default, response);
    }

    private static StaticReply Partial(StaticResponse response, long first, long last, Span<byte> scratch)
    {
        var writer = new HeadWriter(scratch);
        writer.Write("HTTP/1.1 206 Partial Content\r\nContent-Length: "u8);
        writer.Write(last - first + 1);
        writer.Write("\r\nContent-Range: bytes "u8);
        writer.Write(first);
        writer.Write("-"u8);
        writer.Write(last);
        writer.Write("/"u8);
        writer.Write(response.ContentLength);
        writer.Write("\r\n"u8);
        writer.Write(response.Fields);
        writer.Write("\r\n"u8);
        var body = new ReadOnlyMemory<byte>(response.Bytes, response.HeadLength + (int)first, (int)(last - first + 1));
        return Built(StaticReplyKind.Partial, ref writer, body, response);
    }

    private static StaticReply RangeNotSatisfiable(StaticResponse response, Span<byte> scratch)
    {
        var writer = new HeadWriter(scratch);
        writer.Write("HTTP/1.1 416 Range Not Satisfiable\r\nContent-Range: bytes */"u8);
        writer.Write(response.ContentLength);
        writer.Write("\r\nContent-Length: 0\r\n\r\n"u8);
        return Built(StaticReplyKind.RangeNotSatisfiable, ref writer, default, response);
    }

    private static StaticReply Redirect(ReadOnlySpan<byte> rawPath, ReadOnlySpan<byte> query, Span<byte> scratch)
    {
        // The path goes back as received; only visible ASCII is echoed into a header.
        if (!IsVisibleAscii(rawPath) || !IsVisibleAscii(query))
            return default;

        var writer = new HeadWriter(scratch);
        writer.Write("HTTP/1.1 301 Moved Permanently\r\nLocation: "u8);
        writer.Write(rawPath);
        writer.Write("/"u8);
        writer.Write(query);
        writer.Write("\r\nContent-Length: 0\r\n\r\n"u8);
        return writer.Overflowed ? default : new StaticReply(StaticReplyKind.Redirect, writer.Length, default);
    }

    // A head that does not fit the scratch (too small a span given) degrades to the plain 200.
    private static StaticReply Built(StaticReplyKind kind, ref HeadWriter writer, ReadOnlyMemory<byte> body, StaticResponse response) =>
        writer.Overflowed
            ? new StaticReply(StaticReplyKind.Whole, 0, response.Bytes)
            : new StaticReply(kind, writer.Length, body);

    private static bool IsVisibleAscii(ReadOnlySpan<byte> text)
    {
        foreach (var b in text)
        {
            if (b <= 0x20 || b >= 0x7F)
                return false;
        }

        return true;
    }

    private static byte[] Ascii(string text)
    {
        var bytes = new byte[text.Length];
        for (var i = 0; i < text.Length; i++)
            bytes[i] = (byte)text[i];
        return bytes;
    }
}
