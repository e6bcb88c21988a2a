using NetServer.Http;

namespace NetServer;

/// <summary>
/// An HTTP/1.1 client over TCP with callbacks: send requests with <see cref="SendRequestAsync(HttpRequest)"/>
/// (they may be pipelined), get each response whole in <see cref="OnReceivedResponse"/>, in order.
/// <see cref="HttpClientEx"/> adds awaitable requests. See docs/http.md.
/// </summary>
public partial class HttpClient : TcpClient, IHttpClientHandler
{
    private readonly HttpClientProtocol _http;

    /// <summary>A client of <paramref name="address"/>:<paramref name="port"/>.</summary>
    public HttpClient(IPAddress address, int port)
        : base(address, port) => _http = Attach(this);

    /// <summary>A client of an IP address or host name given as text.</summary>
    public HttpClient(string address, int port)
        : base(address, port) => _http = Attach(this);

    /// <summary>A client of the host <paramref name="endpoint"/> names.</summary>
    public HttpClient(DnsEndPoint endpoint)
        : base(endpoint) => _http = Attach(this);

    /// <summary>A client of <paramref name="endpoint"/>.</summary>
    public HttpClient(IPEndPoint endpoint)
        : base(endpoint) => _http = Attach(this);

    /// <summary>Hosts the HTTP client protocol on <paramref name="client"/> (this class and HttpsClient).</summary>
    internal static HttpClientProtocol Attach<TClient>(TClient client)
        where TClient : StreamClient, IHttpClientHandler
    {
        var http = new HttpClientProtocol(client, new HttpLimits());
        client.Protocol = http;
        return http;
    }
}
