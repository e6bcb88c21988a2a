using NetServer.Http;

namespace NetServer;

// What HttpSession (TCP, Unix sockets) and HttpsSession (TLS) have in common: the HTTP surface, forwarded to the HttpServerProtocol each hosts.
// Not compiled as it is: SharedMembersGenerator (src/NetServer.Generators) copies this class's
// members into a partial declaration of each class named below.
[SharedMembers("HttpSession", "HttpsSession")]
internal partial class HttpSessionMembers
{
    /// <summary>The server's static content cache.</summary>
    public FileCache Cache => Server.Cache;

    /// <summary>The request being received or answered (one object reused for every request of the connection).</summary>
    protected HttpRequest Request => _http.Request;

    /// <summary>The session's response object: fill it (<c>MakeGetResponse</c>, ...) and send it.</summary>
    public HttpResponse Response => _http.Response;

    /// <summary>The body limit of the current request: from the server's <c>Limits</c>, changeable in <see cref="OnReceivedRequestHeader"/> (null: none).</summary>
    protected long? MaxRequestBodySize
    {
        get => _http.MaxRequestBodySize;
        set => _http.MaxRequestBodySize = value;
    }

    FileCache? IHttpSessionHandler.Cache => Server.Cache;

    IHttpUpgradeHandler? IHttpSessionHandler.Upgrade => Upgrade;

    /// <summary>What takes upgrade requests before the hooks (a WebSocket session sets its handshake here).</summary>
    private protected IHttpUpgradeHandler? Upgrade { get; set; }

    /// <summary>The HTTP protocol this session hosts until an upgrade replaces it.</summary>
    internal HttpServerProtocol Http => _http;

    /// <summary>Sends <see cref="Response"/> and waits until the bytes are taken; returns the bytes sent.</summary>
    public long SendResponse() => SendResponse(Response);

    /// <summary>Sends <paramref name="response"/> as the answer to the current request and waits until the bytes are taken.</summary>
    public long SendResponse(HttpResponse response) => _http.SendResponse(response, blocking: true);

    /// <summary>Sends body bytes of a response whose head was sent alone (see docs/http.md), waiting until they are taken.</summary>
    public long SendResponseBody(byte[] buffer) => _http.SendBody(buffer, blocking: true);

    /// <inheritdoc cref="SendResponseBody(byte[])"/>
    public long SendResponseBody(byte[] buffer, long offset, long size) => _http.SendBody(buffer, offset, size, blocking: true);

    /// <inheritdoc cref="SendResponseBody(byte[])"/>
    public long SendResponseBody(ReadOnlySpan<byte> buffer) => _http.SendBody(buffer, blocking: true);

    /// <inheritdoc cref="SendResponseBody(byte[])"/>
    public long SendResponseBody(string text) => _http.SendBodyText(text, blocking: true);

    /// <inheritdoc cref="SendResponseBody(byte[])"/>
    public long SendResponseBody(ReadOnlySpan<char> text) => _http.SendBodyText(text, blocking: true);

    /// <summary>Sends <see cref="Response"/> without waiting.</summary>
    public bool SendResponseAsync() => SendResponseAsync(Response);

    /// <summary>Sends <paramref name="response"/> as the answer to the current request without waiting (queued; false if not connected or refused).</summary>
    public bool SendResponseAsync(HttpResponse response) => _http.SendResponse(response, blocking: false) > 0;

    /// <summary>Sends body bytes of a response whose head was sent alone, without waiting; with chunked coding each call is one chunk.</summary>
    public bool SendResponseBodyAsync(byte[] buffer) => _http.SendBody(buffer, blocking: false) > 0;

    /// <inheritdoc cref="SendResponseBodyAsync(byte[])"/>
    public bool SendResponseBodyAsync(byte[] buffer, long offset, long size) => _http.SendBody(buffer, offset, size, blocking: false) > 0;

    /// <inheritdoc cref="SendResponseBodyAsync(byte[])"/>
    public bool SendResponseBodyAsync(ReadOnlySpan<byte> buffer) => _http.SendBody(buffer, blocking: false) > 0;

    /// <inheritdoc cref="SendResponseBodyAsync(byte[])"/>
    public bool SendResponseBodyAsync(string text) => _http.SendBodyText(text, blocking: false) > 0;

    /// <inheritdoc cref="SendResponseBodyAsync(byte[])"/>
    public bool SendResponseBodyAsync(ReadOnlySpan<char> text) => _http.SendBodyText(text, blocking: false) > 0;

    /// <summary>Ends a chunked response body sent part by part (the last chunk): the answer is complete.</summary>
    public bool SendResponseBodyEnd() => _http.EndBody();

    /// <summary>
    /// Called from <see cref="OnReceivedRequestHeader"/> to take this request's body in parts
    /// (<see cref="OnReceivedRequestBodyPart"/>) instead of whole in <see cref="HttpMessage.Body"/>:
    /// uploads larger than memory. <c>PauseReceiving</c>/<c>ResumeReceiving</c> hold the peer back.
    /// </summary>
    protected void ReceiveRequestBodyInParts() => _http.StreamRequestBody();

    /// <summary>Called when a request's head arrived (its body, if any, follows).</summary>
    protected virtual void OnReceivedRequestHeader(HttpRequest request)
    {
    }

    /// <summary>Called with each part of a body taken in parts (see <see cref="ReceiveRequestBodyInParts"/>); the span is valid only during the call.</summary>
    protected virtual void OnReceivedRequestBodyPart(HttpRequest request, ReadOnlySpan<byte> part)
    {
    }

    /// <summary>Called with each whole, valid request; answer it here or later with <see cref="SendResponseAsync(HttpResponse)"/>.</summary>
    protected virtual void OnReceivedRequest(HttpRequest request)
    {
    }

    /// <summary>Called for a request answered from the static content cache with <paramref name="content"/> (the whole cached response); the default sends it.</summary>
    protected virtual void OnReceivedCachedRequest(HttpRequest request, byte[] content) => _http.SendCachedResponse(content);

    /// <summary>Called when a request broke a rule or a limit: <paramref name="error"/> says which (with the status the client gets); the connection closes after that answer.</summary>
    protected virtual void OnReceivedRequestError(HttpRequest request, string error)
    {
    }

    void IHttpSessionHandler.ReceivedRequestHeader(HttpRequest request) => OnReceivedRequestHeader(request);

    void IHttpSessionHandler.ReceivedRequestBodyPart(HttpRequest request, ReadOnlySpan<byte> part) => OnReceivedRequestBodyPart(request, part);

    void IHttpSessionHandler.ReceivedRequest(HttpRequest request) => OnReceivedRequest(request);

    void IHttpSessionHandler.ReceivedCachedRequest(HttpRequest request, byte[] content) => OnReceivedCachedRequest(request, content);

    void IHttpSessionHandler.ReceivedRequestError(HttpRequest request, string error) => OnReceivedRequestError(request, error);
}
