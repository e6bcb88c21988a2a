using NetServer.Http;

namespace NetServer;

/// <summary>
/// An HTTPS client (HTTP/1.1 over TLS, the same protocol as <see cref="HttpClient"/>) with callbacks: send requests with <see cref="SendRequestAsync(HttpRequest)"/>
/// (they may be pipelined), get each response whole in <see cref="OnReceivedResponse"/>, in order.
/// <see cref="HttpsClientEx"/> adds awaitable requests. See docs/http.md.
/// </summary>
public partial class HttpsClient : SslClient, IHttpClientHandler
{
    private readonly HttpClientProtocol _http;

    /// <summary>A client of <paramref name="address"/>:<paramref name="port"/>.</summary>
    public HttpsClient(SslContext context, IPAddress address, int port)
        : base(context, address, port) => _http = HttpClient.Attach(this);

    /// <summary>A client of an IP address or host name given as text.</summary>
    public HttpsClient(SslContext context, string address, int port)
        : base(context, address, port) => _http = HttpClient.Attach(this);

    /// <summary>A client of the host <paramref name="endpoint"/> names.</summary>
    public HttpsClient(SslContext context, DnsEndPoint endpoint)
        : base(context, endpoint) => _http = HttpClient.Attach(this);

    /// <summary>A client of <paramref name="endpoint"/>.</summary>
    public HttpsClient(SslContext context, IPEndPoint endpoint)
        : base(context, endpoint) => _http = HttpClient.Attach(this);
}
