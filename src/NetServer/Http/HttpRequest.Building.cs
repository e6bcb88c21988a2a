using NetServer.Http;

namespace NetServer;

// The builder: each call appends to Cache, so the request is ready to send as soon as its body is set.
public partial class HttpRequest
{
    private const string TextContentType = "text/plain; charset=UTF-8";

    /// <summary>Empties the request; storage above 64 KiB goes back to the pool.</summary>
    /// <returns>This request.</returns>
    public HttpRequest Clear()
    {
        _store.Reset();
        return this;
    }

    /// <summary>Starts the request anew with its request line: "<paramref name="method"/> <paramref name="url"/> <paramref name="protocol"/>".</summary>
    /// <param name="method">The method: a token such as "GET".</param>
    /// <param name="url">The request target, without spaces or control characters.</param>
    /// <param name="protocol">The protocol version.</param>
    /// <returns>This request.</returns>
    public HttpRequest SetBegin(string method, string url, string protocol = "HTTP/1.1")
    {
        _store.StartRequest(method, url, protocol);
        return this;
    }

    /// <summary>
    /// Appends a header field. A Content-Length of the application's replaces the one
    /// <c>SetBody</c> writes; "Transfer-Encoding: chunked" makes <c>SetBody</c> write the body as a chunk.
    /// </summary>
    /// <param name="key">The field name: a token.</param>
    /// <param name="value">The value, without control characters but tab.</param>
    /// <returns>This request.</returns>
    public HttpRequest SetHeader(string key, string value)
    {
        _store.AppendHeader(key, value, nameof(key), nameof(value));
        return this;
    }

    /// <summary>Appends a Cookie header field with one cookie.</summary>
    /// <param name="name">The cookie's name.</param>
    /// <param name="value">The cookie's value (no ';' or control characters).</param>
    /// <returns>This request.</returns>
    public HttpRequest SetCookie(string name, string value)
    {
        CheckCookie(name, value);
        _store.AppendHeader("Cookie", string.Concat(name, "=", value), nameof(name), nameof(value));
        return this;
    }

    /// <summary>Adds a cookie to the Cookie header field just set (a new field when the last one is not a Cookie field).</summary>
    /// <param name="name">The cookie's name.</param>
    /// <param name="value">The cookie's value (no ';' or control characters).</param>
    /// <returns>This request.</returns>
    public HttpRequest AddCookie(string name, string value)
    {
        _store.AppendRequestCookie(name, value);
        return this;
    }

    /// <summary>Ends the head with a Content-Length and appends <paramref name="body"/> as UTF-8.</summary>
    /// <param name="body">The body text.</param>
    /// <returns>This request.</returns>
    public HttpRequest SetBody(string body = "")
    {
        if (body is null)
            ThrowHelper.ThrowArgumentNull(nameof(body));
        _store.SetBody(body.AsSpan(), body);
        return this;
    }

    /// <summary>Ends the head with a Content-Length and appends <paramref name="body"/> as UTF-8.</summary>
    /// <param name="body">The body text.</param>
    /// <returns>This request.</returns>
    public HttpRequest SetBody(ReadOnlySpan<char> body)
    {
        _store.SetBody(body, null);
        return this;
    }

    /// <summary>Ends the head with a Content-Length and appends <paramref name="body"/>.</summary>
    /// <param name="body">The body bytes.</param>
    /// <returns>This request.</returns>
    public HttpRequest SetBody(byte[] body)
    {
        if (body is null)
            ThrowHelper.ThrowArgumentNull(nameof(body));
        return SetBody(new ReadOnlySpan<byte>(body));
    }

    /// <summary>Ends the head with a Content-Length and appends <paramref name="body"/>.</summary>
    /// <param name="body">The body bytes.</param>
    /// <returns>This request.</returns>
    public HttpRequest SetBody(ReadOnlySpan<byte> body)
    {
        _store.SetBody(body, null);
        return this;
    }

    /// <summary>Ends the head with "Content-Length: <paramref name="length"/>"; the body is sent afterwards (<c>SendRequestBody</c>).</summary>
    /// <param name="length">The body's length in bytes.</param>
    /// <returns>This request.</returns>
    public HttpRequest SetBodyLength(int length)
    {
        _store.SetBodyLength(length);
        return this;
    }

    /// <summary>Makes "HEAD <paramref name="url"/> HTTP/1.1" with an empty body.</summary>
    /// <param name="url">The request target.</param>
    /// <returns>This request.</returns>
    public HttpRequest MakeHeadRequest(string url) => MakeEmpty("HEAD", url);

    /// <summary>Makes "GET <paramref name="url"/> HTTP/1.1" with an empty body.</summary>
    /// <param name="url">The request target.</param>
    /// <returns>This request.</returns>
    public HttpRequest MakeGetRequest(string url) => MakeEmpty("GET", url);

    /// <summary>Makes "DELETE <paramref name="url"/> HTTP/1.1" with an empty body.</summary>
    /// <param name="url">The request target.</param>
    /// <returns>This request.</returns>
    public HttpRequest MakeDeleteRequest(string url) => MakeEmpty("DELETE", url);

    /// <summary>Makes "OPTIONS <paramref name="url"/> HTTP/1.1" with an empty body.</summary>
    /// <param name="url">The request target.</param>
    /// <returns>This request.</returns>
    public HttpRequest MakeOptionsRequest(string url) => MakeEmpty("OPTIONS", url);

    /// <summary>Makes "TRACE <paramref name="url"/> HTTP/1.1" with an empty body.</summary>
    /// <param name="url">The request target.</param>
    /// <returns>This request.</returns>
    public HttpRequest MakeTraceRequest(string url) => MakeEmpty("TRACE", url);

    /// <summary>Makes a POST request with a text body.</summary>
    /// <param name="url">The request target.</param>
    /// <param name="content">The body text (sent as UTF-8).</param>
    /// <param name="contentType">The Content-Type value; "" for none.</param>
    /// <returns>This request.</returns>
    public HttpRequest MakePostRequest(string url, string content, string contentType = TextContentType) => MakeWithText("POST", url, content, contentType);

    /// <inheritdoc cref="MakePostRequest(string, string, string)"/>
    public HttpRequest MakePostRequest(string url, ReadOnlySpan<char> content, string contentType = TextContentType) => MakeWithText("POST", url, content, contentType);

    /// <summary>Makes a POST request with a binary body.</summary>
    /// <param name="url">The request target.</param>
    /// <param name="content">The body bytes.</param>
    /// <param name="contentType">The Content-Type value; "" for none.</param>
    /// <returns>This request.</returns>
    public HttpRequest MakePostRequest(string url, byte[] content, string contentType = "") => MakeWithBytes("POST", url, Bytes(content), contentType);

    /// <inheritdoc cref="MakePostRequest(string, byte[], string)"/>
    public HttpRequest MakePostRequest(string url, ReadOnlySpan<byte> content, string contentType = "") => MakeWithBytes("POST", url, content, contentType);

    /// <summary>Makes a PUT request with a text body.</summary>
    /// <param name="url">The request target.</param>
    /// <param name="content">The body text (sent as UTF-8).</param>
    /// <param name="contentType">The Content-Type value; "" for none.</param>
    /// <returns>This request.</returns>
    public HttpRequest MakePutRequest(string url, string content, string contentType = TextContentType) => MakeWithText("PUT", url, content, contentType);

    /// <inheritdoc cref="MakePutRequest(string, string, string)"/>
    public HttpRequest MakePutRequest(string url, ReadOnlySpan<char> content, string contentType = TextContentType) => MakeWithText("PUT", url, content, contentType);

    /// <summary>Makes a PUT request with a binary body.</summary>
    /// <param name="url">The request target.</param>
    /// <param name="content">The body bytes.</param>
    /// <param name="contentType">The Content-Type value; "" for none.</param>
    /// <returns>This request.</returns>
    public HttpRequest MakePutRequest(string url, byte[] content, string contentType = "") => MakeWithBytes("PUT", url, Bytes(content), contentType);

    /// <inheritdoc cref="MakePutRequest(string, byte[], string)"/>
    public HttpRequest MakePutRequest(string url, ReadOnlySpan<byte> content, string contentType = "") => MakeWithBytes("PUT", url, content, contentType);

    private static ReadOnlySpan<byte> Bytes(byte[] content)
    {
        if (content is null)
            ThrowHelper.ThrowArgumentNull(nameof(content));
        return content;
    }

    private static void CheckCookie(string name, string value)
    {
        HttpSyntax.CheckCookiePart(name, nameof(name), name: true);
        HttpSyntax.CheckCookiePart(value, nameof(value));
    }

    private HttpRequest MakeEmpty(string method, string url)
    {
        _store.StartRequest(method, url, "HTTP/1.1");
        _store.SetBody(ReadOnlySpan<byte>.Empty, string.Empty);
        return this;
    }

    private HttpRequest MakeWithText(string method, string url, string content, string contentType)
    {
        if (content is null)
            ThrowHelper.ThrowArgumentNull(nameof(content));
        StartWithType(method, url, contentType);
        _store.SetBody(content.AsSpan(), content);
        return this;
    }

    private HttpRequest MakeWithText(string method, string url, ReadOnlySpan<char> content, string contentType)
    {
        StartWithType(method, url, contentType);
        _store.SetBody(content, null);
        return this;
    }

    private HttpRequest MakeWithBytes(string method, string url, ReadOnlySpan<byte> content, string contentType)
    {
        StartWithType(method, url, contentType);
        _store.SetBody(content, null);
        return this;
    }

    private void StartWithType(string method, string url, string contentType)
    {
        _store.StartRequest(method, url, "HTTP/1.1");
        if (!string.IsNullOrEmpty(contentType))
            _store.AppendHeader("Content-Type", contentType, "Content-Type", nameof(contentType));
    }
}
