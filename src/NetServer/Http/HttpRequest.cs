using System.Text;
using NetServer.Http;

namespace NetServer;

/// <summary>
/// An HTTP request: built by a client (<see cref="SetBegin"/>, <see cref="SetHeader"/>,
/// <c>SetBody</c>, the <c>Make*Request</c> methods) or received by a server session. NetCoreServer's
/// <c>HttpRequest</c>, with the same members.
/// </summary>
/// <remarks>
/// <para>
/// <see cref="Cache"/> holds the request as it goes on the wire (head, then body); a client sends
/// it in one write. A received request's strings (<see cref="Method"/>, <see cref="Url"/>,
/// <see cref="Header"/>, <see cref="Body"/>, ...) are made from those bytes the first time they are
/// asked for, once per request, and a string whose bytes repeat in the next request on the
/// connection is reused; <see cref="Method"/> returns constants for the standard methods. Code on a
/// hot path can read the bytes without making strings at all: <see cref="MethodBytes"/>,
/// <see cref="TargetBytes"/>, <see cref="TryGetHeader(ReadOnlySpan{byte}, out ReadOnlySpan{byte})"/>,
/// <see cref="BodySpan"/>.
/// </para>
/// <para>
/// Differences from NetCoreServer: names and values with CR, LF, NUL or other control characters
/// throw <see cref="ArgumentException"/> (they would let data rewrite the request); a header after
/// the body, or a second body, throws <see cref="InvalidOperationException"/>; <see cref="AddCookie"/>
/// extends the Cookie header line instead of writing after its end. Not thread-safe; a received
/// request and its <see cref="Cache"/> are valid until the session receives the next one.
/// </para>
/// </remarks>
public partial class HttpRequest
{
    private readonly HttpMessageStore _store;

    /// <summary>Creates an empty request.</summary>
    public HttpRequest()
        : this(BufferPool.Shared)
    {
    }

    /// <summary>Creates a request and writes its request line (see <see cref="SetBegin"/>).</summary>
    /// <param name="method">The method, such as "GET".</param>
    /// <param name="url">The request target, such as "/index.html?lang=en".</param>
    /// <param name="protocol">The protocol version.</param>
    public HttpRequest(string method, string url, string protocol = "HTTP/1.1")
        : this(BufferPool.Shared)
    {
        SetBegin(method, url, protocol);
    }

    /// <summary>An empty request whose storage comes from <paramref name="pool"/> (a session's).</summary>
    internal HttpRequest(BufferPool pool)
    {
        _store = new HttpMessageStore(pool, isResponse: false);
    }

    /// <summary>True when the request holds nothing.</summary>
    public bool IsEmpty => _store.Cache.IsEmpty;

    /// <summary>True when the request was received malformed.</summary>
    public bool IsErrorSet
    {
        get => _store.IsErrorSet;
        internal set => _store.IsErrorSet = value;
    }

    /// <summary>The method ("GET", "POST", ...); the standard ones are string constants, so comparing them costs nothing.</summary>
    public string Method => _store.MethodText;

    /// <summary>The request target as sent (not decoded): "/path?query". See <see cref="TryGetPath"/> and <see cref="TryGetQuery"/>.</summary>
    public string Url => _store.TargetText;

    /// <summary>The protocol version, such as "HTTP/1.1".</summary>
    public string Protocol => _store.VersionText;

    /// <summary>The number of header fields.</summary>
    public long Headers => _store.HeaderCount;

    /// <summary>The number of cookies in the Cookie header fields.</summary>
    public long Cookies => _store.CookieCount;

    /// <summary>The body decoded as UTF-8.</summary>
    public string Body => _store.BodyText;

    /// <summary>A copy of the body (made once per request).</summary>
    public byte[] BodyBytes => _store.BodyBytes;

    /// <summary>The body in place, valid until the request changes.</summary>
    public Span<byte> BodySpan => _store.Body;

    /// <summary>The body's length: the declared Content-Length, or the bytes received for a chunked body.</summary>
    public long BodyLength => _store.BodyLength;

    /// <summary>The request's bytes as they go on the wire: the head, then the body.</summary>
    public Buffer Cache => _store.Cache;

    /// <summary>The method's bytes, without making a string.</summary>
    public ReadOnlySpan<byte> MethodBytes => _store.MethodBytes;

    /// <summary>The request target's bytes as sent, without making a string.</summary>
    public ReadOnlySpan<byte> TargetBytes => _store.TargetBytes;

    /// <summary>The number of trailer fields received after a chunked body.</summary>
    public long Trailers => _store.TrailerCount;

    internal HttpMessageStore Store => _store;

    /// <summary>The header field at <paramref name="i"/> as (name, value); ("", "") past the last one.</summary>
    /// <param name="i">The field's index, from 0.</param>
    /// <returns>The name and value.</returns>
    public (string, string) Header(int i) => _store.Header(i);

    /// <summary>The cookie at <paramref name="i"/> as (name, value); ("", "") past the last one.</summary>
    /// <param name="i">The cookie's index, from 0.</param>
    /// <returns>The name and value.</returns>
    public (string, string) Cookie(int i) => _store.Cookie(i);

    /// <summary>The trailer field at <paramref name="i"/> as (name, value); ("", "") past the last one.</summary>
    /// <param name="i">The field's index, from 0.</param>
    /// <returns>The name and value.</returns>
    public (string, string) Trailer(int i) => _store.Trailer(i);

    /// <summary>The value of the first header field named <paramref name="name"/> (any case). Only the value's string is made, once per request.</summary>
    /// <param name="name">The field name.</param>
    /// <param name="value">The value, or "" when there is none.</param>
    /// <returns>True when the field is present.</returns>
    public bool TryGetHeader(string name, out string value) => _store.TryGetHeader(name, out value);

    /// <summary>The value of the first header field named <paramref name="name"/> (ASCII, any case), in place: no string is made.</summary>
    /// <param name="name">The field name's bytes.</param>
    /// <param name="value">The value's bytes (spaces around it removed), valid until the request changes.</param>
    /// <returns>True when the field is present.</returns>
    public bool TryGetHeader(ReadOnlySpan<byte> name, out ReadOnlySpan<byte> value) => _store.TryGetHeader(name, out value);

    /// <summary>
    /// The path of <see cref="Url"/> without its query, percent-decoded as UTF-8 ("%2F" becomes
    /// '/', '+' stays '+'); "/" for an absolute URL without a path. The path is not normalized: dot
    /// segments ("..") are kept.
    /// </summary>
    /// <param name="path">The decoded path, or "" when it cannot be decoded.</param>
    /// <returns>False when the encoding is invalid: a '%' without two hex digits, "%00", or bytes that are not UTF-8.</returns>
    public bool TryGetPath(out string path) => _store.TryGetPath(out path);

    /// <summary>The decoded value of the first query parameter named <paramref name="name"/> ('+' and "%20" are spaces).</summary>
    /// <param name="name">The parameter's decoded name (case-sensitive).</param>
    /// <param name="value">The decoded value ("" for "?name" without '='), or "" when there is none.</param>
    /// <returns>False when the parameter is absent or its value's encoding is invalid.</returns>
    public bool TryGetQuery(string name, out string value) => _store.TryGetQuery(name, out value);

    /// <summary>A readable dump: the request line's parts, the headers and the body.</summary>
    /// <returns>The text.</returns>
    public override string ToString()
    {
        var text = new StringBuilder();
        text.Append("Request method: ").AppendLine(Method);
        text.Append("Request URL: ").AppendLine(Url);
        text.Append("Request protocol: ").AppendLine(Protocol);
        text.Append("Request headers: ").Append(Headers).AppendLine();
        for (var i = 0; i < Headers; i++)
        {
            var (name, value) = Header(i);
            text.Append(name).Append(" : ").AppendLine(value);
        }

        text.Append("Request body: ").Append(BodyLength).AppendLine();
        text.AppendLine(Body);
        return text.ToString();
    }

    /// <inheritdoc cref="HttpMessageStore.LoadHead"/>
    internal void LoadHead(ReadOnlySpan<byte> headBytes, HttpHead head) => _store.LoadHead(headBytes, head);

    /// <inheritdoc cref="HttpMessageStore.AppendBody"/>
    internal bool AppendBody(ReadOnlySpan<byte> data, long limit) => _store.AppendBody(data, limit);

    /// <inheritdoc cref="HttpMessageStore.SetTrailers"/>
    internal void SetTrailers(ReadOnlySpan<byte> fields, ReadOnlySpan<HttpHeaderRange> ranges) => _store.SetTrailers(fields, ranges);

    /// <inheritdoc cref="HttpMessageStore.Release"/>
    internal void Release() => _store.Release();
}
