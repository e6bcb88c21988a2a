using NetServer.Http;

namespace NetServer;

// What HttpClient (TCP, Unix sockets) and HttpsClient (TLS) have in common: the HTTP surface, forwarded to the HttpClientProtocol each hosts.
// Not compiled as it is: SharedMembersGenerator (src/NetServer.Generators) copies this class's
// members into a partial declaration of each class named below.
[SharedMembers("HttpClient", "HttpsClient")]
internal partial class HttpClientMembers
{
    /// <summary>The client's request object: fill it (<c>MakeGetRequest</c>, ...) and send it.</summary>
    public HttpRequest Request { get; protected set; } = new();

    /// <summary>The response being received, or the last one (one object reused for every response).</summary>
    protected HttpResponse Response => _http.Response;

    /// <summary>The largest response body accepted (default 64 MiB); a longer one closes the connection with <see cref="OnReceivedResponseError"/>.</summary>
    public long OptionMaxResponseBodySize
    {
        get => _http.MaxResponseBodySize;
        set => _http.MaxResponseBodySize = value;
    }

    internal HttpClientProtocol Http => _http;

    /// <summary>Sends <see cref="Request"/> and waits until the bytes are taken.</summary>
    public long SendRequest() => SendRequest(Request);

    /// <summary>Sends <paramref name="request"/> and waits until the bytes are taken; returns the bytes sent (0 when not connected).</summary>
    public long SendRequest(HttpRequest request) => _http.SendRequest(request, blocking: true);

    /// <summary>Sends body bytes of a request whose head was sent alone; with chunked coding each call is one chunk.</summary>
    public long SendRequestBody(byte[] buffer) => _http.SendBody(buffer, blocking: true);

    /// <inheritdoc cref="SendRequestBody(byte[])"/>
    public long SendRequestBody(byte[] buffer, long offset, long size)
    {
        ThrowHelper.ValidateRange(buffer, offset, size, out var start, out var count);
        return _http.SendBody(new ReadOnlySpan<byte>(buffer, start, count), blocking: true);
    }

    /// <inheritdoc cref="SendRequestBody(byte[])"/>
    public long SendRequestBody(ReadOnlySpan<byte> buffer) => _http.SendBody(buffer, blocking: true);

    /// <inheritdoc cref="SendRequestBody(byte[])"/>
    public long SendRequestBody(string text) => _http.SendBody(TextEncoding.Utf8.GetBytes(text), blocking: true);

    /// <inheritdoc cref="SendRequestBody(byte[])"/>
    public long SendRequestBody(ReadOnlySpan<char> text) => SendRequestBody(text.ToString());

    /// <summary>Sends <see cref="Request"/> without waiting.</summary>
    public bool SendRequestAsync() => SendRequestAsync(Request);

    /// <summary>Sends <paramref name="request"/> without waiting (queued); false when not connected or refused.</summary>
    public bool SendRequestAsync(HttpRequest request) => _http.SendRequest(request, blocking: false) > 0;

    /// <summary>Sends body bytes of a request whose head was sent alone, without waiting.</summary>
    public bool SendRequestBodyAsync(byte[] buffer) => _http.SendBody(buffer, blocking: false) > 0;

    /// <inheritdoc cref="SendRequestBodyAsync(byte[])"/>
    public bool SendRequestBodyAsync(byte[] buffer, long offset, long size)
    {
        ThrowHelper.ValidateRange(buffer, offset, size, out var start, out var count);
        return _http.SendBody(new ReadOnlySpan<byte>(buffer, start, count), blocking: false) > 0;
    }

    /// <inheritdoc cref="SendRequestBodyAsync(byte[])"/>
    public bool SendRequestBodyAsync(ReadOnlySpan<byte> buffer) => _http.SendBody(buffer, blocking: false) > 0;

    /// <inheritdoc cref="SendRequestBodyAsync(byte[])"/>
    public bool SendRequestBodyAsync(string text) => _http.SendBody(TextEncoding.Utf8.GetBytes(text), blocking: false) > 0;

    /// <inheritdoc cref="SendRequestBodyAsync(byte[])"/>
    public bool SendRequestBodyAsync(ReadOnlySpan<char> text) => SendRequestBodyAsync(text.ToString());

    /// <summary>Ends a chunked request body sent part by part (the last chunk).</summary>
    public bool SendRequestBodyEnd() => _http.EndBody();

    /// <summary>Called when a response's head arrived (its body, if any, follows).</summary>
    protected virtual void OnReceivedResponseHeader(HttpResponse response)
    {
    }

    /// <summary>Called with each whole response, in the order the requests were sent.</summary>
    protected virtual void OnReceivedResponse(HttpResponse response)
    {
    }

    /// <summary>Called when a response is malformed, over a limit or cut short; the connection closes.</summary>
    protected virtual void OnReceivedResponseError(HttpResponse response, string error)
    {
    }

    void IHttpClientHandler.ReceivedResponseHeader(HttpResponse response) => OnReceivedResponseHeader(response);

    void IHttpClientHandler.ReceivedResponse(HttpResponse response)
    {
        if (Upgrade?.ReceivedResponse(response) == true)
            return; // the answer to a WebSocket upgrade
        try
        {
            OnReceivedResponse(response);
        }
        finally
        {
            Runner?.Received(response); // whatever an override does, an awaited request completes
        }
    }

    void IHttpClientHandler.ReceivedResponseError(HttpResponse response, string error)
    {
        if (Upgrade?.ReceivedResponseError(error) == true)
            return;
        try
        {
            OnReceivedResponseError(response, error);
        }
        finally
        {
            Runner?.Failed(error);
        }
    }

    void IHttpClientHandler.Closed()
    {
        Upgrade?.Closed();
        Runner?.Disconnected();
    }

    /// <summary>The WebSocket handshake that takes the answer to an upgrade request (null for a plain HTTP client).</summary>
    private protected IHttpClientUpgrade? Upgrade { get; set; }

    /// <summary>The awaitable requests of <c>HttpClientEx</c> or <c>HttpsClientEx</c> (null for the callback client).</summary>
    private protected HttpRequestRunner? Runner { get; set; }
}
