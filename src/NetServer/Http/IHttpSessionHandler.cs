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

    void ReceivedRequestHeader(HttpRequest request);

    void ReceivedRequestBodyPart(HttpRequest request, ReadOnlySpan<byte> part);

    void ReceivedRequest(HttpRequest request);

    void ReceivedCachedRequest(HttpRequest request, byte[] content);

    void ReceivedRequestError(HttpRequest request, string error);
}
