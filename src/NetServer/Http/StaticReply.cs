using System.Runtime.InteropServices;

namespace NetServer.Http;

/// <summary>What <see cref="StaticContent.Serve"/> decided for one request.</summary>
internal enum StaticReplyKind
{
    /// <summary>Not static content (not GET/HEAD, no such key, or an opaque value asked for with HEAD): the application answers.</summary>
    NotStatic,

    /// <summary>200: the whole cached value, one array (for a value added by <see cref="FileCache.Add"/>, whatever it holds).</summary>
    Whole,

    /// <summary>200 to HEAD: the cached response's head, its Content-Length included.</summary>
    Head,

    /// <summary>304: If-None-Match or If-Modified-Since held.</summary>
    NotModified,

    /// <summary>206: one byte range; the head in the scratch, the body a slice of the cached bytes.</summary>
    Partial,

    /// <summary>416: the range starts past the end; Content-Range: bytes */length.</summary>
    RangeNotSatisfiable,

    /// <summary>412: If-Match or If-Unmodified-Since failed.</summary>
    PreconditionFailed,

    /// <summary>301 to the same path with '/' added: the path names a folder with an index.html.</summary>
    Redirect,

    /// <summary>400: the path climbs above the root or holds NUL, a drive letter or a bad %-escape.</summary>
    BadRequest,
}

/// <summary>
/// The bytes to send for one static request, in order: the first <see cref="HeadLength"/> bytes
/// of the scratch span given to <see cref="StaticContent.Serve"/>, then <see cref="Cached"/>.
/// Either part may be empty; nothing is copied out of the cache and nothing is allocated.
/// </summary>
internal readonly struct StaticReply
{
    public StaticReply(StaticReplyKind kind, int headLength, ReadOnlyMemory<byte> cached)
    {
        Kind = kind;
        HeadLength = headLength;
        Cached = cached;
    }

    public StaticReplyKind Kind { get; }

    public bool IsStatic => Kind != StaticReplyKind.NotStatic;

    /// <summary>Bytes at the start of the scratch span to send first (a head built for this request).</summary>
    public int HeadLength { get; }

    /// <summary>
    /// Cached bytes to send after them: a whole response, a head, a body slice or a constant
    /// answer. Shared with other requests: send it, never change it.
    /// </summary>
    public ReadOnlyMemory<byte> Cached { get; }

    /// <summary>
    /// For <see cref="StaticReplyKind.Whole"/>, the cached array itself (what NetCoreServer hands to
    /// OnReceivedCachedRequest); otherwise null.
    /// </summary>
    public byte[]? Content => Kind == StaticReplyKind.Whole && MemoryMarshal.TryGetArray(Cached, out var whole) ? whole.Array : null;

    /// <summary>The status code sent (0 when not static; 200 for <see cref="StaticReplyKind.Whole"/>, whatever an opaque value holds).</summary>
    public int Status => Kind switch
    {
        StaticReplyKind.Whole or StaticReplyKind.Head => 200,
        StaticReplyKind.NotModified => 304,
        StaticReplyKind.Partial => 206,
        StaticReplyKind.RangeNotSatisfiable => 416,
        StaticReplyKind.PreconditionFailed => 412,
        StaticReplyKind.Redirect => 301,
        StaticReplyKind.BadRequest => 400,
        _ => 0,
    };
}
