using NetServer.Http;

namespace NetServer;

/// <summary>
/// What <see cref="HttpRequest"/> and <see cref="HttpResponse"/> have in common: the header
/// fields, cookies, body and wire bytes of one message. Code that only reads a message (logging,
/// a header check) can take either through this type.
/// </summary>
/// <remarks>
/// <see cref="Cache"/> holds the message as it goes on the wire, head then body. A received
/// message's strings are made from those bytes the first time they are asked for, once per
/// message, and a string whose bytes repeat in the next message on the connection (the same Host,
/// User-Agent, URL) is reused, so a steady stream of alike requests allocates nothing. Not
/// thread-safe; a received message and its <see cref="Cache"/> are valid until the next one
/// arrives, a built one until it is cleared or rebuilt.
/// </remarks>
public abstract class HttpMessage
{
    private protected HttpMessage(HttpMessageStore store)
    {
        Store = store;
    }

    /// <summary>True when the message holds nothing.</summary>
    public bool IsEmpty => Store.Cache.IsEmpty;

    /// <summary>True when the message was received malformed.</summary>
    public bool IsErrorSet
    {
        get => Store.IsErrorSet;
        internal set => Store.IsErrorSet = value;
    }

    /// <summary>The protocol version, such as "HTTP/1.1".</summary>
    public string Protocol => Store.VersionText;

    /// <summary>The number of header fields.</summary>
    public long Headers => Store.HeaderCount;

    /// <summary>The number of cookies: the pairs of a request's Cookie fields, one per Set-Cookie field of a response.</summary>
    public long Cookies => Store.CookieCount;

    /// <summary>The body decoded as UTF-8.</summary>
    public string Body => Store.BodyText;

    /// <summary>A copy of the body (made once per message).</summary>
    public byte[] BodyBytes => Store.BodyBytes;

    /// <summary>The body's length: the declared Content-Length (or <c>SetBodyLength</c>), or the bytes received of a chunked body.</summary>
    public long BodyLength => Store.BodyLength;

    /// <summary>The message's bytes as they go on the wire: the head, then the body.</summary>
    public Buffer Cache => Store.Cache;

    /// <summary>The number of trailer fields received after a chunked body.</summary>
    public long Trailers => Store.TrailerCount;

    internal HttpMessageStore Store { get; }

    /// <summary>The header field at <paramref name="i"/> as (name, value); ("", "") past the last one.</summary>
    /// <param name="i">The field's index, from 0.</param>
    /// <returns>The name and value.</returns>
    public (string, string) Header(int i) => Store.Header(i);

    /// <summary>The cookie at <paramref name="i"/> as (name, value); ("", "") past the last one.</summary>
    /// <param name="i">The cookie's index, from 0.</param>
    /// <returns>The name and value.</returns>
    public (string, string) Cookie(int i) => Store.Cookie(i);

    /// <summary>The trailer field at <paramref name="i"/> as (name, value); ("", "") past the last one.</summary>
    /// <param name="i">The field's index, from 0.</param>
    /// <returns>The name and value.</returns>
    public (string, string) Trailer(int i) => Store.Trailer(i);

    /// <summary>The value of the first header field named <paramref name="name"/> (any case). Only the value's string is made, once per message.</summary>
    /// <param name="name">The field name.</param>
    /// <param name="value">The value, or "" when there is none.</param>
    /// <returns>True when the field is present.</returns>
    public bool TryGetHeader(string name, out string value) => Store.TryGetHeader(name, out value);

    /// <summary>The value of the first header field named <paramref name="name"/> (ASCII, any case), in place: no string is made.</summary>
    /// <param name="name">The field name's bytes.</param>
    /// <param name="value">The value's bytes (spaces around it removed), valid until the message changes.</param>
    /// <returns>True when the field is present.</returns>
    public bool TryGetHeader(ReadOnlySpan<byte> name, out ReadOnlySpan<byte> value) => Store.TryGetHeader(name, out value);

    /// <inheritdoc cref="HttpMessageStore.LoadHead"/>
    internal void LoadHead(ReadOnlySpan<byte> headBytes, HttpHead head) => Store.LoadHead(headBytes, head);

    /// <inheritdoc cref="HttpMessageStore.AppendBody"/>
    internal bool AppendBody(ReadOnlySpan<byte> data, long limit) => Store.AppendBody(data, limit);

    /// <inheritdoc cref="HttpMessageStore.SetTrailers"/>
    internal void SetTrailers(ReadOnlySpan<byte> fields, ReadOnlySpan<HttpHeaderRange> ranges) => Store.SetTrailers(fields, ranges);

    /// <inheritdoc cref="HttpMessageStore.Release"/>
    internal void Release() => Store.Release();
}
