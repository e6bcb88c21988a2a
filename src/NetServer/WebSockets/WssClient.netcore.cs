using NetServer.WebSockets;

namespace NetServer;

/// <summary>
/// A WebSocket client over TLS (WebSocket secure): every connect performs the opening handshake (RFC 6455), then
/// messages flow both ways. Override the <c>OnWs*</c> hooks (<see cref="OnWsReceived(byte[], long, long)"/>
/// for messages), or leave the receive hooks alone and await messages with
/// <see cref="ReceiveMessageAsync"/>. Send with <c>SendText</c>, <c>SendBinary</c> and their
/// <c>Async</c> forms, or <see cref="SendMessageAsync(ReadOnlyMemory{byte}, System.Net.WebSockets.WebSocketMessageType, bool, CancellationToken)"/>
/// with backpressure. See docs/websocket.md.
/// </summary>
/// <remarks>
/// The WebSocket logic is not in this class: it forwards to the protocol every WebSocket connection
/// hosts, the same for <see cref="WsClient"/> over TCP. <see cref="Connect"/> and <see cref="ConnectAsync(CancellationToken)"/>
/// return once the server accepted the upgrade; <see cref="StreamClient.ConnectAsync()"/> returns at
/// once and <see cref="OnWsConnected(HttpResponse)"/> follows.
/// </remarks>
public partial class WssClient : HttpsClient, IWebSocket, IWsEndpoint
{
    private readonly WebSocketProtocol _ws;
    private readonly WsClientUpgrade _upgrade;

    /// <summary>A client of <paramref name="address"/>:<paramref name="port"/>.</summary>
    public WssClient(SslContext context, IPAddress address, int port)
        : base(context, address, port) => _upgrade = Attach(out _ws);

    /// <summary>A client of an IP address or host name given as text.</summary>
    public WssClient(SslContext context, string address, int port)
        : base(context, address, port) => _upgrade = Attach(out _ws);

    /// <summary>A client of the host <paramref name="endpoint"/> names.</summary>
    public WssClient(SslContext context, DnsEndPoint endpoint)
        : base(context, endpoint) => _upgrade = Attach(out _ws);

    /// <summary>A client of <paramref name="endpoint"/>.</summary>
    public WssClient(SslContext context, IPEndPoint endpoint)
        : base(context, endpoint) => _upgrade = Attach(out _ws);
}
