namespace NetServer;

/// <summary>
/// An HTTP/1.1 server over TLS (HTTPS): each connection is an <see cref="HttpsSession"/> (override
/// <see cref="CreateSession"/> to return your own), static files are served from <see cref="Cache"/>
/// (<see cref="AddStaticContent"/>), and every request is held to <see cref="Limits"/>. See docs/http.md.
/// </summary>
public partial class HttpsServer : SslServer
{
    /// <summary>A server on <paramref name="address"/>:<paramref name="port"/> (port 0 picks a free port).</summary>
    public HttpsServer(SslContext context, IPAddress address, int port)
        : base(context, address, port)
    {
    }

    /// <summary>A server on an IP address or host name given as text.</summary>
    public HttpsServer(SslContext context, string address, int port)
        : base(context, address, port)
    {
    }

    /// <summary>A server on the address <paramref name="endpoint"/> resolves to.</summary>
    public HttpsServer(SslContext context, DnsEndPoint endpoint)
        : base(context, endpoint)
    {
    }

    /// <summary>A server on <paramref name="endpoint"/>.</summary>
    public HttpsServer(SslContext context, IPEndPoint endpoint)
        : base(context, endpoint)
    {
    }

    /// <inheritdoc/>
    protected override SslSession CreateSession() => new HttpsSession(this);
}
