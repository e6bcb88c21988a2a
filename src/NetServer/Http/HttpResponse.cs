using System.Text;
using NetServer.Http;

namespace NetServer;

/// <summary>
/// An HTTP response: built by a server session (<see cref="SetBegin(int, string)"/>,
/// <see cref="SetHeader"/>, <c>SetBody</c>, the <c>Make*Response</c> methods) or received by a
/// client. NetCoreServer's <c>HttpResponse</c>, with the same members.
/// </summary>
/// <remarks>
/// <para>
/// <see cref="Cache"/> holds the response as it goes on the wire (head, then body), so a session
/// sends it in one write. Building a response allocates nothing once its storage has grown to
/// size: <c>MakeGetResponse(cachedBytes)</c> copies the bytes after the head and writes the
/// Content-Length in place. A received response's strings are made on first use, once per
/// response (see <see cref="HttpRequest"/>).
/// </para>
/// <para>
/// Differences from NetCoreServer: names, values and phrases with CR, LF, NUL or other control
/// characters throw <see cref="ArgumentException"/> (response splitting); a header after the body,
/// or a second body, throws <see cref="InvalidOperationException"/>; a status outside 100 to 999
/// throws <see cref="ArgumentOutOfRangeException"/>; <see cref="IsEmpty"/> is true when the
/// response is empty (NetCoreServer's was inverted); reason phrases are RFC 9110's ("Content Too
/// Large" for 413). Not thread-safe; <see cref="Cache"/> is valid until the response is cleared or
/// rebuilt.
/// </para>
/// </remarks>
public partial class HttpResponse
{
    private readonly HttpMessageStore _store;

    /// <summary>Creates an empty response.</summary>
    public HttpResponse()
        : this(BufferPool.Shared)
    {
    }

    /// <summary>Creates a response and writes its status line with the standard phrase for <paramref name="status"/>.</summary>
    /// <param name="status">The status code, 100 to 999.</param>
    /// <param name="protocol">The protocol version.</param>
    public HttpResponse(int status, string protocol = "HTTP/1.1")
        : this(BufferPool.Shared)
    {
        SetBegin(status, protocol);
    }

    /// <summary>Creates a response and writes its status line.</summary>
    /// <param name="status">The status code, 100 to 999.</param>
    /// <param name="statusPhrase">The reason phrase.</param>
    /// <param name="protocol">The protocol version.</param>
    public HttpResponse(int status, string statusPhrase, string protocol)
        : this(BufferPool.Shared)
    {
        SetBegin(status, statusPhrase, protocol);
    }

    /// <summary>An empty response whose storage comes from <paramref name="pool"/> (a session's).</summary>
    internal HttpResponse(BufferPool pool)
    {
        _store = new HttpMessageStore(pool, isResponse: true);
    }

    /// <summary>True when the response holds nothing.</summary>
    public bool IsEmpty => _store.Cache.IsEmpty;

    /// <summary>True when the response was received malformed.</summary>
    public bool IsErrorSet
    {
        get => _store.IsErrorSet;
        internal set => _store.IsErrorSet = value;
    }

    /// <summary>The status code.</summary>
    public int Status => _store.Status;

    /// <summary>The reason phrase, such as "OK".</summary>
    public string StatusPhrase => _store.ReasonText;

    /// <summary>The protocol version, such as "HTTP/1.1".</summary>
    public string Protocol => _store.VersionText;

    /// <summary>The number of header fields.</summary>
    public long Headers => _store.HeaderCount;

    /// <summary>The number of cookies set (one per Set-Cookie header field).</summary>
    public long Cookies => _store.CookieCount;

    /// <summary>The body decoded as UTF-8.</summary>
    public string Body => _store.BodyText;

    /// <summary>A copy of the body (made once per response).</summary>
    public byte[] BodyBytes => _store.BodyBytes;

    /// <summary>The body in place, valid until the response changes.</summary>
    public ReadOnlySpan<byte> BodySpan => _store.Body;

    /// <summary>The body's length: the declared Content-Length (or <see cref="SetBodyLength"/>), or the bytes received for a chunked body.</summary>
    public long BodyLength => _store.BodyLength;

    /// <summary>The response's bytes as they go on the wire: the head, then the body.</summary>
    public Buffer Cache => _store.Cache;

    /// <summary>The number of trailer fields received after a chunked body.</summary>
    public long Trailers => _store.TrailerCount;

    internal HttpMessageStore Store => _store;

    /// <summary>The header field at <paramref name="i"/> as (name, value); ("", "") past the last one.</summary>
    /// <param name="i">The field's index, from 0.</param>
    /// <returns>The name and value.</returns>
    public (string, string) Header(int i) => _store.Header(i);

    /// <summary>The cookie at <paramref name="i"/> as (name, value), from the Set-Cookie fields; ("", "") past the last one.</summary>
    /// <param name="i">The cookie's index, from 0.</param>
    /// <returns>The name and value.</returns>
    public (string, string) Cookie(int i) => _store.Cookie(i);

    /// <summary>The trailer field at <paramref name="i"/> as (name, value); ("", "") past the last one.</summary>
    /// <param name="i">The field's index, from 0.</param>
    /// <returns>The name and value.</returns>
    public (string, string) Trailer(int i) => _store.Trailer(i);

    /// <inheritdoc cref="HttpRequest.TryGetHeader(string, out string)"/>
    public bool TryGetHeader(string name, out string value) => _store.TryGetHeader(name, out value);

    /// <inheritdoc cref="HttpRequest.TryGetHeader(ReadOnlySpan{byte}, out ReadOnlySpan{byte})"/>
    public bool TryGetHeader(ReadOnlySpan<byte> name, out ReadOnlySpan<byte> value) => _store.TryGetHeader(name, out value);

    /// <summary>A readable dump: the status line's parts, the headers and the body.</summary>
    /// <returns>The text.</returns>
    public override string ToString()
    {
        var text = new StringBuilder();
        text.Append("Status: ").Append(Status).AppendLine();
        text.Append("Status phrase: ").AppendLine(StatusPhrase);
        text.Append("Protocol: ").AppendLine(Protocol);
        text.Append("Headers: ").Append(Headers).AppendLine();
        for (var i = 0; i < Headers; i++)
        {
            var (name, value) = Header(i);
            text.Append(name).Append(" : ").AppendLine(value);
        }

        text.Append("Body: ").Append(BodyLength).AppendLine();
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
