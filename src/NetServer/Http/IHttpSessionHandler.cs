namespace NetServer.Http;

/// <summary>
/// What <see cref="HttpServerProtocol"/> calls on the session that hosts it (<see cref="HttpSession"/>
/// over TCP or Unix sockets, <c>HttpsSession</c> over TLS): the compatible hooks, so the protocol
/// is written once for both session families.
/// </summary>
internal interface IHttpSessionHandler
{
    /// <summary>The static content this session serves before its hooks see a request (null for none).</summary>
    FileCache? Cache { get; }

    /// <summary>What takes "Connection: upgrade" requests before the hooks see them (a WebSocket session's handshake), or null.</summary>
    IHttpUpgradeHandler? Upgrade { get; }

    void ReceivedRequestHeader(HttpRequest request);

    void ReceivedRequestBodyPart(HttpRequest request, ReadOnlySpan<byte> part);

    void ReceivedRequest(HttpRequest request);

    void ReceivedCachedRequest(HttpRequest request, byte[] content);

    void ReceivedRequestError(HttpRequest request, string error);
}

/// <summary>Takes an HTTP request that asks to switch protocols (RFC 9110 7.8), such as a WebSocket upgrade.</summary>
internal interface IHttpUpgradeHandler
{
    /// <summary>
    /// Answers <paramref name="request"/> if it is an upgrade this handler speaks (switching the
    /// connection's protocol, or refusing it with an error status); false leaves it to HTTP.
    /// </summary>
    bool TryUpgrade(HttpRequest request);
}
