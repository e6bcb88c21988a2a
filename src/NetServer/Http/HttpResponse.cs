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
/// <see cref="HttpMessage.Cache"/> holds the response as it goes on the wire (head, then body), so
/// a session sends it in one write. Building a response allocates nothing once its storage has grown to
/// size: <c>MakeGetResponse(cachedBytes)</c> copies the bytes after the head and writes the
/// Content-Length in place. A received response's strings are made on first use, once per
/// response (see <see cref="HttpMessage"/>).
/// </para>
/// <para>
/// Differences from NetCoreServer: names, values and phrases with CR, LF, NUL or other control
/// characters throw <see cref="ArgumentException"/> (response splitting); a header after the body,
/// or a second body, throws <see cref="InvalidOperationException"/>; a status outside 100 to 999
/// throws <see cref="ArgumentOutOfRangeException"/>; <see cref="HttpMessage.IsEmpty"/> is true
/// when the response is empty (NetCoreServer's was inverted); reason phrases are RFC 9110's
/// ("Content Too Large" for 413).
/// </para>
/// </remarks>
public partial class HttpResponse : HttpMessage
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
        : this(new HttpMessageStore(pool, isResponse: true))
    {
    }

    private HttpResponse(HttpMessageStore store)
        : base(store)
    {
        _store = store;
    }

    /// <summary>The status code.</summary>
    public int Status => _store.Status;

    /// <summary>The reason phrase, such as "OK".</summary>
    public string StatusPhrase => _store.ReasonText;

    /// <summary>The body in place, valid until the response changes.</summary>
    public ReadOnlySpan<byte> BodySpan => _store.Body;

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
}
