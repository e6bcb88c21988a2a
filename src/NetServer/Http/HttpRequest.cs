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
/// <see cref="HttpMessage.Cache"/> holds the request as it goes on the wire (head, then body); a
/// client sends it in one write. A received request's strings are made on first use and reused
/// (see <see cref="HttpMessage"/>); <see cref="Method"/> returns constants for the standard
/// methods. Code on a hot path can read the bytes without making strings at all:
/// <see cref="MethodBytes"/>, <see cref="TargetBytes"/>,
/// <see cref="HttpMessage.TryGetHeader(ReadOnlySpan{byte}, out ReadOnlySpan{byte})"/>, <see cref="BodySpan"/>.
/// </para>
/// <para>
/// Differences from NetCoreServer: names and values with CR, LF, NUL or other control characters
/// throw <see cref="ArgumentException"/> (they would let data rewrite the request); a header after
/// the body, or a second body, throws <see cref="InvalidOperationException"/>; <see cref="AddCookie"/>
/// extends the Cookie header line instead of writing after its end.
/// </para>
/// </remarks>
public partial class HttpRequest : HttpMessage
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
        : this(new HttpMessageStore(pool, isResponse: false))
    {
    }

    private HttpRequest(HttpMessageStore store)
        : base(store)
    {
        _store = store;
    }

    /// <summary>The method ("GET", "POST", ...); the standard ones are string constants, so comparing them costs nothing.</summary>
    public string Method => _store.MethodText;

    /// <summary>The request target as sent (not decoded): "/path?query". See <see cref="TryGetPath"/> and <see cref="TryGetQuery"/>.</summary>
    public string Url => _store.TargetText;

    /// <summary>The body in place, valid until the request changes.</summary>
    public Span<byte> BodySpan => _store.Body;

    /// <summary>The method's bytes, without making a string.</summary>
    public ReadOnlySpan<byte> MethodBytes => _store.MethodBytes;

    /// <summary>The request target's bytes as sent, without making a string.</summary>
    public ReadOnlySpan<byte> TargetBytes => _store.TargetBytes;

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
}
