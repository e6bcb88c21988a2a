using NetServer.Http;

namespace NetServer;

/// <summary>
/// An HTTP/1.1 client over TCP whose requests are awaited: <c>await client.SendGetRequest(url)</c>.
/// It connects when needed, keeps the connection alive between requests, sends one request at a
/// time, and fails a request that takes longer than its timeout with <see cref="TimeoutException"/>.
/// The response returned is the client's response object, valid until the next request.
/// </summary>
public partial class HttpClientEx : HttpClient
{
        /// <summary>A client of <paramref name="address"/>:<paramref name="port"/>.</summary>
    public HttpClientEx(IPAddress address, int port)
        : base(address, port) => Runner = new HttpRequestRunner(this, Http);

    /// <summary>A client of an IP address or host name given as text.</summary>
    public HttpClientEx(string address, int port)
        : base(address, port) => Runner = new HttpRequestRunner(this, Http);

    /// <summary>A client of the host <paramref name="endpoint"/> names.</summary>
    public HttpClientEx(DnsEndPoint endpoint)
        : base(endpoint) => Runner = new HttpRequestRunner(this, Http);

    /// <summary>A client of <paramref name="endpoint"/>.</summary>
    public HttpClientEx(IPEndPoint endpoint)
        : base(endpoint) => Runner = new HttpRequestRunner(this, Http);
}
