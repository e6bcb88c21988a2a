namespace NetServer;

/// <summary>
/// An HTTP/1.1 server over TCP: each connection is an <see cref="HttpSession"/> (override
/// <see cref="CreateSession"/> to return your own), static files are served from <see cref="Cache"/>
/// (<see cref="AddStaticContent"/>), and every request is held to <see cref="Limits"/>. See docs/http.md.
/// </summary>
public partial class HttpServer : TcpServer
{
    /// <summary>A server on <paramref name="address"/>:<paramref name="port"/> (port 0 picks a free port).</summary>
    public HttpServer(IPAddress address, int port)
        : base(address, port)
    {
    }

    /// <summary>A server on an IP address or host name given as text.</summary>
    public HttpServer(string address, int port)
        : base(address, port)
    {
    }

    /// <summary>A server on the address <paramref name="endpoint"/> resolves to.</summary>
    public HttpServer(DnsEndPoint endpoint)
        : base(endpoint)
    {
    }

    /// <summary>A server on <paramref name="endpoint"/>.</summary>
    public HttpServer(IPEndPoint endpoint)
        : base(endpoint)
    {
    }

    /// <inheritdoc/>
    protected override TcpSession CreateSession() => new HttpSession(this);
}
