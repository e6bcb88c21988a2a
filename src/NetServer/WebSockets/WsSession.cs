using NetServer.WebSockets;

namespace NetServer;

/// <summary>
/// One connection of a WsServer (over TCP or a Unix domain socket): plain HTTP until the client asks for a WebSocket (a GET with
/// "Upgrade: websocket"), then WebSocket frames (RFC 6455). Override the <c>OnWs*</c> hooks
/// (<see cref="OnWsReceived(byte[], long, long)"/> for messages) and send with <c>SendText</c>,
/// <c>SendBinary</c> and their <c>Async</c> forms; other requests reach the HTTP hooks (and the
/// static content) as in HttpSession. See docs/websocket.md.
/// </summary>
/// <remarks>
/// The WebSocket logic is not in this class: it forwards to the protocol every WebSocket connection
/// hosts, the same for <c>WssSession</c> over TLS. A session receives the server's multicasts once
/// upgraded, not before. A frame that breaks the protocol closes the connection with the status
/// that names the fault (1002, 1007, 1009...) after <see cref="OnWsError(string)"/>.
/// </remarks>
public partial class WsSession : HttpSession, IWebSocket, IWsEndpoint
{
    private readonly WebSocketProtocol _ws;

    /// <summary>A session of <paramref name="server"/>.</summary>
    public WsSession(WsServer server)
        : base(server)
    {
        Server = server;
        AutoJoinMulticast = false; // joins at the upgrade: an HTTP request must not receive WebSocket frames
        _ws = new WebSocketProtocol(this, isServer: true);
        Upgrade = new WsServerUpgrade(this, Http, _ws, this, server.WsOptions);
    }

    /// <summary>The server this session belongs to.</summary>
    public new WsServer Server { get; }
}
