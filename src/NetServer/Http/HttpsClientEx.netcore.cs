using NetServer.Http;

namespace NetServer;

/// <summary>
/// An HTTPS client (HTTP/1.1 over TLS) whose requests are awaited: <c>await client.SendGetRequest(url)</c>.
/// It connects when needed, keeps the connection alive between requests, sends one request at a
/// time, and fails a request that takes longer than its timeout with <see cref="TimeoutException"/>.
/// The response returned is the client's response object, valid until the next request.
/// </summary>
public partial class HttpsClientEx : HttpsClient
{
        /// <summary>A client of <paramref name="address"/>:<paramref name="port"/>.</summary>
    public HttpsClientEx(SslContext context, IPAddress address, int port)
        : base(context, address, port) => Runner = new HttpRequestRunner(this, Http, "https");

    /// <summary>A client of an IP address or host name given as text.</summary>
    public HttpsClientEx(SslContext context, string address, int port)
        : base(context, address, port) => Runner = new HttpRequestRunner(this, Http, "https");

    /// <summary>A client of the host <paramref name="endpoint"/> names.</summary>
    public HttpsClientEx(SslContext context, DnsEndPoint endpoint)
        : base(context, endpoint) => Runner = new HttpRequestRunner(this, Http, "https");

    /// <summary>A client of <paramref name="endpoint"/>.</summary>
    public HttpsClientEx(SslContext context, IPEndPoint endpoint)
        : base(context, endpoint) => Runner = new HttpRequestRunner(this, Http, "https");
}
