using System.Net.WebSockets;
using NetServer.WebSockets;

namespace NetServer;

// What WsClient (TCP, Unix sockets) and WssClient (TLS) have in common: the connect that performs the
// handshake, the client's settings and its CloseAsync forms, forwarded to WsClientUpgrade and WebSocketProtocol.
// Not compiled as it is: SharedMembersGenerator (src/NetServer.Generators) copies this class's
// members into a partial declaration of each class named below.
[SharedMembers("WsClient", "WssClient")]
internal partial class WsClientMembers
{
    /// <summary>The WebSocket settings (read at each connect): message size, timeouts, subprotocols to offer, permessage-deflate.</summary>
    public WsOptions WsOptions { get; } = new();

    /// <summary>The 16 random bytes of this connect's Sec-WebSocket-Key (new for every connect).</summary>
    public byte[] WsNonce => _upgrade.Nonce;

    /// <summary>
    /// The most bytes of received messages queued for <see cref="ReceiveMessageAsync"/> before the
    /// client stops reading (default 4 MiB; a larger message still fits alone).
    /// </summary>
    public long OptionReceiveQueueLimit
    {
        get => _ws.ReceiveQueueLimit;
        set => _ws.ReceiveQueueLimit = value > 0 ? value : throw new ArgumentOutOfRangeException(nameof(OptionReceiveQueueLimit), "The receive queue limit must be positive.");
    }

    /// <summary>
    /// Connects, performs the WebSocket handshake and returns once it is over (within
    /// <see cref="WsOptions.HandshakeTimeout"/>), blocking the caller. Unlike a plain TCP client's,
    /// the receive loop runs afterwards (frames are read as they come).
    /// </summary>
    /// <returns>True once upgraded; false if already connected or connecting, or if the connect or the handshake failed.</returns>
    public override bool Connect()
    {
        if (!base.Connect())
            return false;
        if (CallbackScope.IsActive)
        {
            ReceiveAsync(); // inside a hook it cannot wait: the handshake completes on its own
            return true;
        }

        ReceiveAsync();
        if (_upgrade.WaitUpgraded(WsOptions.HandshakeTimeout))
            return true;
        DisconnectAsync();
        return false;
    }

    /// <summary>Connects and performs the WebSocket handshake; completes once the server accepted the upgrade.</summary>
    /// <returns>True once upgraded; false if already connected or connecting.</returns>
    /// <exception cref="SocketException">The connect failed.</exception>
    /// <exception cref="WebSocketException">The server refused the upgrade or answered it wrongly (the message says how), or the connection closed during the handshake.</exception>
    /// <exception cref="TimeoutException">No answer within <see cref="WsOptions.HandshakeTimeout"/>.</exception>
    /// <exception cref="OperationCanceledException"><paramref name="cancellationToken"/> fired first.</exception>
    public new Task<bool> ConnectAsync(CancellationToken cancellationToken) => _upgrade.ConnectAsync(base.ConnectAsync(cancellationToken), cancellationToken);

    /// <summary>Starts the close handshake with 1000 (normal closure): a close frame, then the connection closes once the peer answers, or after <see cref="WsOptions.CloseTimeout"/>; false if not upgraded or closing already.</summary>
    public bool CloseAsync() => _ws.Close(WsCloseStatus.Normal, ReadOnlySpan<byte>.Empty);

    /// <summary>Starts the close handshake with <paramref name="status"/> (see <see cref="WsCloseStatus"/>).</summary>
    public bool CloseAsync(int status) => _ws.Close(status, ReadOnlySpan<byte>.Empty);

    /// <summary>Starts the close handshake with <paramref name="status"/> and a reason (UTF-8, at most 123 bytes).</summary>
    public bool CloseAsync(int status, byte[] buffer) => _ws.Close(status, (ReadOnlySpan<byte>)buffer);

    /// <inheritdoc cref="CloseAsync(int, byte[])"/>
    public bool CloseAsync(int status, byte[] buffer, long offset, long size) => _ws.Close(status, WebSocketProtocol.Slice(buffer, offset, size));

    /// <inheritdoc cref="CloseAsync(int, byte[])"/>
    public bool CloseAsync(int status, ReadOnlySpan<byte> buffer) => _ws.Close(status, buffer);

    /// <inheritdoc cref="CloseAsync(int, byte[])"/>
    public bool CloseAsync(int status, string text) => _ws.Close(status, WebSocketProtocol.Utf8(text.AsSpan(), stackalloc byte[3 * WebSocketProtocol.MaxCloseReasonChars]));

    /// <inheritdoc cref="CloseAsync(int, byte[])"/>
    public bool CloseAsync(int status, ReadOnlySpan<char> text) => _ws.Close(status, WebSocketProtocol.Utf8(text, stackalloc byte[3 * WebSocketProtocol.MaxCloseReasonChars]));

    internal override void InvokeConnecting()
    {
        _upgrade.Prepare();
        base.InvokeConnecting();
    }

    internal override void InvokeReady()
    {
        base.InvokeReady();
        _upgrade.SendRequest();
    }

    private WsClientUpgrade Attach(out WebSocketProtocol ws)
    {
        ws = new WebSocketProtocol(this, isServer: false) { QueueMessages = true };
        var upgrade = new WsClientUpgrade(this, Http, ws, this, WsOptions, () => Request);
        Upgrade = upgrade;
        return upgrade;
    }
}
