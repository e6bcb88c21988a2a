using NetServer.Http;

namespace NetServer;

/// <summary>
/// One HTTP/1.1 connection of an <see cref="HttpsServer"/> (HTTP over TLS: the same protocol as <see cref="HttpSession"/>, hosted by a TLS session). Override
/// <see cref="OnReceivedRequest"/> and answer with <see cref="SendResponseAsync(HttpResponse)"/>
/// (from the hook or later, from any thread); requests are handed over one at a time and answered
/// in order, also when the client pipelines them. See docs/http.md.
/// </summary>
/// <remarks>
/// The HTTP logic is not in this class: it forwards to the protocol every HTTP session hosts, the
/// same for <see cref="HttpSession"/> over TCP. A request that breaks a rule or a limit never reaches
/// <see cref="OnReceivedRequest"/>: <see cref="OnReceivedRequestError"/> is told, the client gets
/// the status (400, 408, 413, 414, 431, 505...) and the connection closes.
/// </remarks>
public partial class HttpsSession : SslSession, IHttpSessionHandler
{
    private readonly HttpServerProtocol _http;

    /// <summary>A session of <paramref name="server"/>.</summary>
    public HttpsSession(HttpsServer server)
        : base(server)
    {
        Server = server;
        _http = new HttpServerProtocol(this, server.Limits);
        Protocol = _http;
    }

    /// <summary>The server this session belongs to.</summary>
    public new HttpsServer Server { get; }
}
