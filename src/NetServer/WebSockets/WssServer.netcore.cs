namespace NetServer;

/// <summary>
/// A WebSocket server over TLS (WebSocket secure): each connection is a WssSession (override <see cref="CreateSession"/>
/// to return your own), HTTP until it upgrades (static content and requests keep working), then
/// WebSocket. <see cref="WsOptions"/> holds the WebSocket settings, <see cref="HttpsServer.Limits"/>
/// the HTTP ones. <c>Multicast*</c> reaches the upgraded sessions only. See docs/websocket.md.
/// </summary>
public partial class WssServer : HttpsServer
{
    /// <summary>A server on <paramref name="address"/>:<paramref name="port"/> (port 0 picks a free port).</summary>
    public WssServer(SslContext context, IPAddress address, int port)
        : base(context, address, port)
    {
    }

    /// <summary>A server on an IP address or host name given as text.</summary>
    public WssServer(SslContext context, string address, int port)
        : base(context, address, port)
    {
    }

    /// <summary>A server on the address <paramref name="endpoint"/> resolves to.</summary>
    public WssServer(SslContext context, DnsEndPoint endpoint)
        : base(context, endpoint)
    {
    }

    /// <summary>A server on <paramref name="endpoint"/>.</summary>
    public WssServer(SslContext context, IPEndPoint endpoint)
        : base(context, endpoint)
    {
    }

    /// <inheritdoc/>
    protected override SslSession CreateSession() => new WssSession(this);
}
