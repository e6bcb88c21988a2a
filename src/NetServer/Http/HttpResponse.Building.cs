using NetServer.Http;

namespace NetServer;

// The builder: each call appends to Cache, so the response is ready to send as soon as its body is set.
public partial class HttpResponse
{
    private const string TextContentType = "text/plain; charset=UTF-8";
    private const string DefaultAllow = "HEAD,GET,POST,PUT,DELETE,OPTIONS,TRACE";

    /// <summary>Empties the response; storage above 64 KiB goes back to the pool.</summary>
    /// <returns>This response.</returns>
    public HttpResponse Clear()
    {
        _store.Reset();
        return this;
    }

    /// <summary>Starts the response anew with its status line and the standard reason phrase ("Unknown" for an unregistered code).</summary>
    /// <param name="status">The status code, 100 to 999.</param>
    /// <param name="protocol">The protocol version.</param>
    /// <returns>This response.</returns>
    public HttpResponse SetBegin(int status, string protocol = "HTTP/1.1")
    {
        if (protocol == HttpStatusPhrases.Http11)
            _store.StartResponse(status);
        else
            _store.StartResponse(status, HttpStatusPhrases.Get(status), protocol);
        return this;
    }

    /// <summary>Starts the response anew with its status line: "<paramref name="protocol"/> <paramref name="status"/> <paramref name="statusPhrase"/>".</summary>
    /// <param name="status">The status code, 100 to 999.</param>
    /// <param name="statusPhrase">The reason phrase, without control characters but tab.</param>
    /// <param name="protocol">The protocol version.</param>
    /// <returns>This response.</returns>
    public HttpResponse SetBegin(int status, string statusPhrase, string protocol)
    {
        _store.StartResponse(status, statusPhrase, protocol);
        return this;
    }

    /// <summary>
    /// Appends a Content-Type field for a file extension ("html" or ".html", any case); nothing
    /// when the extension is not known. Covers NetCoreServer's table plus the common web types
    /// (htm, mjs, txt, ico, webp, avif, wasm, woff, woff2, otf, webm, wav, webmanifest, ...).
    /// </summary>
    /// <param name="extension">The file extension.</param>
    /// <returns>This response.</returns>
    public HttpResponse SetContentType(string extension)
    {
        if (HttpContentTypes.TryGet(extension, out var type))
            _store.AppendHeader("Content-Type", type, nameof(extension), nameof(extension));
        return this;
    }

    /// <summary>
    /// Appends a header field. A Content-Length of the application's replaces the one
    /// <c>SetBody</c> writes; "Transfer-Encoding: chunked" makes <c>SetBody</c> write the body as a chunk.
    /// </summary>
    /// <param name="key">The field name: a token.</param>
    /// <param name="value">The value, without control characters but tab.</param>
    /// <returns>This response.</returns>
    public HttpResponse SetHeader(string key, string value)
    {
        _store.AppendHeader(key, value, nameof(key), nameof(value));
        return this;
    }

    /// <summary>Appends a Set-Cookie field: "name=value; Max-Age=...; Domain=...; Path=...; Secure; SameSite=Strict; HttpOnly".</summary>
    /// <param name="name">The cookie's name.</param>
    /// <param name="value">The cookie's value (no ';' or control characters).</param>
    /// <param name="maxAge">Seconds until it expires.</param>
    /// <param name="path">The Path attribute; "" for none.</param>
    /// <param name="domain">The Domain attribute; "" for none.</param>
    /// <param name="secure">Adds Secure.</param>
    /// <param name="strict">Adds SameSite=Strict.</param>
    /// <param name="httpOnly">Adds HttpOnly.</param>
    /// <returns>This response.</returns>
    public HttpResponse SetCookie(string name, string value, int maxAge = 86400, string path = "", string domain = "", bool secure = true, bool strict = true, bool httpOnly = true)
    {
        _store.AppendResponseCookie(name, value, maxAge, path, domain, secure, strict, httpOnly);
        return this;
    }

    /// <summary>Ends the head with a Content-Length and appends <paramref name="body"/> as UTF-8.</summary>
    /// <param name="body">The body text.</param>
    /// <returns>This response.</returns>
    public HttpResponse SetBody(string body = "")
    {
        if (body is null)
            ThrowHelper.ThrowArgumentNull(nameof(body));
        _store.SetBody(body.AsSpan(), body);
        return this;
    }

    /// <summary>Ends the head with a Content-Length and appends <paramref name="body"/> as UTF-8.</summary>
    /// <param name="body">The body text.</param>
    /// <returns>This response.</returns>
    public HttpResponse SetBody(ReadOnlySpan<char> body)
    {
        _store.SetBody(body, null);
        return this;
    }

    /// <summary>Ends the head with a Content-Length and appends <paramref name="body"/>.</summary>
    /// <param name="body">The body bytes.</param>
    /// <returns>This response.</returns>
    public HttpResponse SetBody(byte[] body) => SetBody(Bytes(body));

    /// <summary>Ends the head with a Content-Length and appends <paramref name="body"/>.</summary>
    /// <param name="body">The body bytes.</param>
    /// <returns>This response.</returns>
    public HttpResponse SetBody(ReadOnlySpan<byte> body)
    {
        _store.SetBody(body, null);
        return this;
    }

    /// <summary>Ends the head with "Content-Length: <paramref name="length"/>"; the body is sent afterwards (<c>SendResponseBody</c>).</summary>
    /// <param name="length">The body's length in bytes.</param>
    /// <returns>This response.</returns>
    public HttpResponse SetBodyLength(int length)
    {
        _store.SetBodyLength(length);
        return this;
    }

    /// <summary>Makes a response with <paramref name="status"/> and an empty body.</summary>
    /// <param name="status">The status code.</param>
    /// <returns>This response.</returns>
    public HttpResponse MakeOkResponse(int status = 200)
    {
        SetBegin(status);
        _store.SetBody(ReadOnlySpan<byte>.Empty, string.Empty);
        return this;
    }

    /// <summary>Makes a 500 Internal Server Error response with a text body.</summary>
    /// <param name="content">The body text.</param>
    /// <param name="contentType">The Content-Type value; "" for none.</param>
    /// <returns>This response.</returns>
    public HttpResponse MakeErrorResponse(string content = "", string contentType = TextContentType) => MakeErrorResponse(500, content, contentType);

    /// <summary>Makes an error response with <paramref name="status"/> and a text body.</summary>
    /// <param name="status">The status code.</param>
    /// <param name="content">The body text.</param>
    /// <param name="contentType">The Content-Type value; "" for none.</param>
    /// <returns>This response.</returns>
    public HttpResponse MakeErrorResponse(int status, string content = "", string contentType = TextContentType) => MakeWithText(status, content, contentType);

    /// <summary>Makes a 200 OK response with an empty body (the answer to a HEAD request).</summary>
    /// <returns>This response.</returns>
    public HttpResponse MakeHeadResponse() => MakeOkResponse();

    /// <summary>Makes a 200 OK response with a text body.</summary>
    /// <param name="content">The body text.</param>
    /// <param name="contentType">The Content-Type value; "" for none.</param>
    /// <returns>This response.</returns>
    public HttpResponse MakeGetResponse(string content = "", string contentType = TextContentType) => MakeWithText(200, content, contentType);

    /// <inheritdoc cref="MakeGetResponse(string, string)"/>
    public HttpResponse MakeGetResponse(ReadOnlySpan<char> content, string contentType = TextContentType)
    {
        StartWithType(200, contentType);
        _store.SetBody(content, null);
        return this;
    }

    /// <summary>Makes a 200 OK response with a binary body (copied after the head).</summary>
    /// <param name="content">The body bytes.</param>
    /// <param name="contentType">The Content-Type value; "" for none.</param>
    /// <returns>This response.</returns>
    public HttpResponse MakeGetResponse(byte[] content, string contentType = "") => MakeGetResponse(Bytes(content), contentType);

    /// <inheritdoc cref="MakeGetResponse(byte[], string)"/>
    public HttpResponse MakeGetResponse(ReadOnlySpan<byte> content, string contentType = "")
    {
        StartWithType(200, contentType);
        _store.SetBody(content, null);
        return this;
    }

    /// <summary>Makes a 200 OK response with "Allow: <paramref name="allow"/>" and an empty body.</summary>
    /// <param name="allow">The methods allowed.</param>
    /// <returns>This response.</returns>
    public HttpResponse MakeOptionsResponse(string allow = DefaultAllow)
    {
        SetBegin(200);
        _store.AppendHeader("Allow", allow, "Allow", nameof(allow));
        _store.SetBody(ReadOnlySpan<byte>.Empty, string.Empty);
        return this;
    }

    /// <summary>Makes a 200 OK "message/http" response whose body is the request text given.</summary>
    /// <param name="content">The request, as text.</param>
    /// <returns>This response.</returns>
    public HttpResponse MakeTraceResponse(string content)
    {
        if (content is null)
            ThrowHelper.ThrowArgumentNull(nameof(content));
        StartWithType(200, "message/http");
        _store.SetBody(content.AsSpan(), content);
        return this;
    }

    /// <inheritdoc cref="MakeTraceResponse(string)"/>
    public HttpResponse MakeTraceResponse(ReadOnlySpan<char> content)
    {
        StartWithType(200, "message/http");
        _store.SetBody(content, null);
        return this;
    }

    /// <summary>Makes a 200 OK "message/http" response whose body is the request bytes given.</summary>
    /// <param name="content">The request's bytes.</param>
    /// <returns>This response.</returns>
    public HttpResponse MakeTraceResponse(byte[] content) => MakeTraceResponse(Bytes(content));

    /// <inheritdoc cref="MakeTraceResponse(byte[])"/>
    public HttpResponse MakeTraceResponse(ReadOnlySpan<byte> content)
    {
        StartWithType(200, "message/http");
        _store.SetBody(content, null);
        return this;
    }

    /// <summary>Makes a 200 OK "message/http" response echoing <paramref name="request"/> as received (its head and body).</summary>
    /// <param name="request">The request to echo.</param>
    /// <returns>This response.</returns>
    public HttpResponse MakeTraceResponse(HttpRequest request)
    {
        if (request is null)
            ThrowHelper.ThrowArgumentNull(nameof(request));
        return MakeTraceResponse(request.Cache.Written);
    }

    private static ReadOnlySpan<byte> Bytes(byte[] content)
    {
        if (content is null)
            ThrowHelper.ThrowArgumentNull(nameof(content));
        return content;
    }

    private HttpResponse MakeWithText(int status, string content, string contentType)
    {
        if (content is null)
            ThrowHelper.ThrowArgumentNull(nameof(content));
        StartWithType(status, contentType);
        _store.SetBody(content.AsSpan(), content);
        return this;
    }

    private void StartWithType(int status, string contentType)
    {
        SetBegin(status);
        if (!string.IsNullOrEmpty(contentType))
            _store.AppendHeader("Content-Type", contentType, "Content-Type", nameof(contentType));
    }
}
