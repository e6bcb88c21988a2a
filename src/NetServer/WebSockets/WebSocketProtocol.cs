using System.Net.WebSockets;
using NetServer.Messaging;

namespace NetServer.WebSockets;

/// <summary>
/// RFC 6455 over any stream connection (TCP, TLS, Unix sockets), after the opening handshake:
/// frames parsed in place from the retained receive buffer, messages reassembled and checked,
/// frames built in pooled send memory, ping/pong, the close handshake, keep-alive and close
/// deadlines on the shared clock, and permessage-deflate when it was negotiated. Written once for
/// the server side (<see cref="WsSession"/>, <c>WssSession</c>) and the client side
/// (<see cref="WsClient"/>, <c>WssClient</c>): those only forward here.
/// </summary>
/// <remarks>
/// A violation of the protocol fails the connection as RFC 6455 7.1.7 says: a close frame with the
/// status that names it (1002, 1007, 1009), <see cref="IWebSocket.OnWsError(string)"/>, and the
/// connection closed once that frame is out; nothing more is delivered.
/// </remarks>
internal sealed partial class WebSocketProtocol : StreamProtocol, IDisposable
{
    internal override string DiagnosticName => "WebSocket";

    private readonly IWebSocket _hooks;
    private readonly bool _isServer;
    private readonly WsDeadline _deadline;
    private readonly MessageInbox _inbox = new();
    private WsOptions _options = new();
    private int _closeState;        // CloseSent | CloseReceived | Failed flags
    private volatile bool _upgraded; // between the upgrade and the end of the connection

    public WebSocketProtocol(IWebSocket hooks, bool isServer)
    {
        _hooks = hooks;
        _isServer = isServer;
        _deadline = new WsDeadline(this);
        _message = new Buffers.PooledBuffer(BufferPool.Shared, WsOptions.DefaultMaxMessageSize);
    }

    [Flags]
    private enum CloseFlags
    {
        CloseSent = 1,
        CloseReceived = 2,
        Failed = 4,
    }

    /// <summary>The settings taken at the upgrade.</summary>
    public WsOptions Options => _options;

    /// <summary>The subprotocol agreed in the handshake, or null.</summary>
    public string? SubProtocol { get; private set; }

    /// <summary>True from the upgrade until the connection ends.</summary>
    public bool IsUpgraded => _upgraded;

    /// <summary>A close frame was sent (by either side's initiative): no data may follow it.</summary>
    public bool IsCloseSent => (Volatile.Read(ref _closeState) & (int)CloseFlags.CloseSent) != 0;

    /// <summary>Queue received messages for <c>ReceiveAsync</c> when the application does not override the receive hooks.</summary>
    public bool QueueMessages { get; set; }

    /// <summary>Bytes of queued messages before receiving pauses.</summary>
    public long ReceiveQueueLimit { get; set; } = 4 * 1024 * 1024;

    internal MessageInbox Inbox => _inbox;

    /// <summary>
    /// Sets the connection up for the frames that follow the 101 (before it is attached as the
    /// connection's protocol): the options' snapshot, the agreed subprotocol and extension.
    /// </summary>
    public void Start(WsOptions options, string? subProtocol, WsDeflateParameters? deflate)
    {
        _options = options;
        SubProtocol = subProtocol;
        _message.Limit = options.MaxMessageSize;
        ResetReceive();
        Volatile.Write(ref _closeState, 0);
        _sendingFragmented = false;
        StartDeflate(deflate);
        _inbox.Open();
        _upgraded = true;
    }

    protected internal override void OnConnected()
    {
        if (_options.KeepAliveInterval > TimeSpan.Zero)
            _deadline.ArmKeepAlive(_options.KeepAliveInterval);
    }

    protected internal override void OnDisconnected(DisconnectReason reason)
    {
        _deadline.Stop();
        var upgraded = _upgraded;
        _upgraded = false;
        try
        {
            if (upgraded)
                _hooks.OnWsDisconnected();
        }
        finally
        {
            _inbox.End(reason);
            ResetReceive();
            _message.Dispose();
            StopDeflate();
        }
    }

    /// <summary>The connection is about to close: the hook of an upgraded connection.</summary>
    public void Disconnecting()
    {
        if (_upgraded)
            _hooks.OnWsDisconnecting();
    }

    /// <summary>A socket error: the hook of an upgraded connection.</summary>
    public void Error(SocketError error)
    {
        if (_upgraded)
            _hooks.OnWsError(error);
    }

    /// <summary>Queues a copy of the message being delivered for <c>ReceiveAsync</c> (what the default receive hook does when queuing is on).</summary>
    public void Enqueue(byte[] buffer, long offset, long size)
    {
        if (!QueueMessages || Connection is not { } connection)
            return;
        ThrowHelper.ValidateRange(buffer, offset, size, out var start, out var count);
        _inbox.Add(new ReadOnlySpan<byte>(buffer, start, count), connection, ReceiveQueueLimit, _deliveringType == WebSocketMessageType.Text);
    }

    /// <summary>Gives back everything pooled: queued messages, message memory, the compression state (the host is disposed).</summary>
    public void Dispose()
    {
        _deadline.Stop();
        _inbox.End(DisconnectReason.Disposed);
        _inbox.Clear();
        _message.Dispose();
        StopDeflate();
    }
}
