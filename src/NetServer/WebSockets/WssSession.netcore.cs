using NetServer.WebSockets;

namespace NetServer;

/// <summary>
/// One connection of a WssServer (WebSocket over TLS): plain HTTP until the client asks for a WebSocket (a GET with
/// "Upgrade: websocket"), then WebSocket frames (RFC 6455). Override the <c>OnWs*</c> hooks
/// (<see cref="OnWsReceived(byte[], long, long)"/> for messages) and send with <c>SendText</c>,
/// <c>SendBinary</c> and their <c>Async</c> forms; other requests reach the HTTP hooks (and the
/// static content) as in HttpsSession. See docs/websocket.md.
/// </summary>
/// <remarks>
/// The WebSocket logic is not in this class: it forwards to the protocol every WebSocket connection
/// hosts, the same for <see cref="WsSession"/> over TCP. A session receives the server's multicasts once
/// upgraded, not before. A frame that breaks the protocol closes the connection with the status
/// that names the fault (1002, 1007, 1009...) after <see cref="OnWsError(string)"/>.
/// </remarks>
public partial class WssSession : HttpsSession, IWebSocket, IWsEndpoint
{
    private readonly WebSocketProtocol _ws;

    /// <summary>A session of <paramref name="server"/>.</summary>
    public WssSession(WssServer server)
        : base(server)
    {
        Server = server;
        AutoJoinMulticast = false; // joins at the upgrade: an HTTP request must not receive WebSocket frames
        _ws = new WebSocketProtocol(this, isServer: true);
        Upgrade = new WsServerUpgrade(this, Http, _ws, this, server.WsOptions);
    }

    /// <summary>The server this session belongs to.</summary>
    public new WssServer Server { get; }
}
