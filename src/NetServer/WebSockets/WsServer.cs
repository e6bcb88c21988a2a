namespace NetServer;

/// <summary>
/// A WebSocket server over TCP: each connection is a WsSession (override <see cref="CreateSession"/>
/// to return your own), HTTP until it upgrades (static content and requests keep working), then
/// WebSocket. <see cref="WsOptions"/> holds the WebSocket settings, <see cref="HttpServer.Limits"/>
/// the HTTP ones. <c>Multicast*</c> reaches the upgraded sessions only. See docs/websocket.md.
/// </summary>
public partial class WsServer : HttpServer
{
    /// <summary>A server on <paramref name="address"/>:<paramref name="port"/> (port 0 picks a free port).</summary>
    public WsServer(IPAddress address, int port)
        : base(address, port)
    {
    }

    /// <summary>A server on an IP address or host name given as text.</summary>
    public WsServer(string address, int port)
        : base(address, port)
    {
    }

    /// <summary>A server on the address <paramref name="endpoint"/> resolves to.</summary>
    public WsServer(DnsEndPoint endpoint)
        : base(endpoint)
    {
    }

    /// <summary>A server on <paramref name="endpoint"/>.</summary>
    public WsServer(IPEndPoint endpoint)
        : base(endpoint)
    {
    }

    /// <inheritdoc/>
    protected override TcpSession CreateSession() => new WsSession(this);
}
