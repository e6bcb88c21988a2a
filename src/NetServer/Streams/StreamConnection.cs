
namespace NetServer;

/// <summary>
/// What every connected stream endpoint has in common, server sessions and clients alike: the
/// sends, the receive hooks, the limits and the statistics. Derive from <see cref="TcpSession"/>,
/// <see cref="TcpClient"/>, <see cref="UdsSession"/> or <see cref="UdsClient"/> and override the
/// <c>On*</c> hooks.
/// </summary>
/// <remarks>
/// <para>Guarantees: <see cref="OnConnected"/> runs before any <see cref="OnReceived(byte[], long, long)"/>;
/// OnReceived never runs concurrently with itself; <see cref="OnDisconnected(DisconnectReason)"/> runs exactly
/// once per connection and after every other hook of that connection; sends are thread-safe and the bytes
/// of one send are never interleaved with another's; counters are exact.</para>
/// <para>Buffers passed to <c>OnReceived</c> are pooled: copy what you keep beyond the call.</para>
/// </remarks>
public abstract partial class StreamConnection : IDisposable, IAsyncDisposable
{
    /// <summary>Default for <see cref="OptionSendBufferLimit"/>: 4 MiB per connection.</summary>
    public const int DefaultSendBufferLimit = 4 * 1024 * 1024;

    /// <summary>Default for <see cref="OptionSendHighWaterMark"/>: 1 MiB.</summary>
    public const int DefaultSendHighWaterMark = 1024 * 1024;

    /// <summary>Default for <see cref="OptionSendStallTimeout"/>: 60 seconds.</summary>
    public static readonly TimeSpan DefaultSendStallTimeout = TimeSpan.FromSeconds(60);

    /// <summary>Default for <see cref="OptionSendLowWaterMark"/>: 256 KiB.</summary>
    public const int DefaultSendLowWaterMark = 256 * 1024;

    /// <summary>How long the blocking calls (<see cref="Disconnect"/>, <c>Stop</c>, <c>Dispose</c>) wait for the engine before returning.</summary>
    internal static readonly TimeSpan BlockingWaitTimeout = TimeSpan.FromSeconds(30);

    private Connection? _connection;
    private long _bytesSent;
    private long _bytesReceived;
    private int _receiveBufferLimit;
    private int _receiveBufferSize = 8192;
    private int _sendBufferLimit = DefaultSendBufferLimit;
    private int _sendBufferSize = 8192;
    private TimeSpan _disconnectTimeout = TimeSpan.FromSeconds(5);
    private int _sendHighWaterMark = DefaultSendHighWaterMark;
    private int _sendLowWaterMark = DefaultSendLowWaterMark;
    private TimeSpan _idleTimeout = Timeout.InfiniteTimeSpan;
    private TimeSpan _sendStallTimeout = DefaultSendStallTimeout;
    private DisconnectReason _lastReason;
    private Exception? _lastException;

    private protected StreamConnection() => Id = Guid.NewGuid();

    /// <summary>Identifier of this session or client.</summary>
    public Guid Id { get; }

    /// <summary>The socket of the current (or last) connection; null before the first connect.</summary>
    public Socket? Socket { get; private set; }

    /// <summary>Bytes accepted by sends and not yet handed to the operating system.</summary>
    public long BytesPending => _connection?.BytesPending ?? 0;

    /// <summary>Bytes inside an asynchronous socket send right now (a part of <see cref="BytesPending"/>).</summary>
    public long BytesSending => _connection?.BytesSending ?? 0;

    /// <summary>Bytes handed to the operating system since the connection started.</summary>
    public long BytesSent => Volatile.Read(ref _bytesSent);

    /// <summary>Bytes received since the connection started.</summary>
    public long BytesReceived => Volatile.Read(ref _bytesReceived);

    /// <summary>True while connected: sends are accepted and received bytes are delivered.</summary>
    public bool IsConnected => _connection?.IsOpen == true;

    /// <summary>Why the last connection ended (<see cref="NetServer.DisconnectReason.None"/> while it lasts).</summary>
    public DisconnectReason DisconnectReason => _connection?.Reason ?? _lastReason;

    /// <summary>
    /// The exception behind the end of the last connection: the one a hook threw
    /// (<see cref="NetServer.DisconnectReason.HandlerException"/>), the handshake failure
    /// (<see cref="NetServer.DisconnectReason.HandshakeFailed"/>), or the stream error of a TLS
    /// connection (<see cref="NetServer.DisconnectReason.SocketError"/>); null otherwise.
    /// </summary>
    public Exception? DisconnectException => _connection?.Exception ?? _lastException;

    /// <summary>
    /// Largest single read, in bytes (0, the default, means 64 KiB or <see cref="OptionReceiveBufferSize"/> if larger).
    /// OnReceived is never handed more than this at once; a slow OnReceived slows reading and TCP
    /// flow control pushes back on the peer, so received bytes never pile up in memory.
    /// </summary>
    public int OptionReceiveBufferLimit
    {
        get => _receiveBufferLimit;
        set => _receiveBufferLimit = ThrowHelper.ValidateOption(value, zeroAllowed: true, nameof(OptionReceiveBufferLimit));
    }

    /// <summary>
    /// What <see cref="OptionReceiveBufferLimit"/> amounts to now: the most received bytes the
    /// receive buffer holds, so the most a protocol may leave unconsumed at once (the option, or
    /// when it is 0 the larger of 64 KiB and <see cref="OptionReceiveBufferSize"/>). A protocol whose
    /// frame is longer consumes it in parts.
    /// </summary>
    public int ReceiveRetentionLimit =>
        _receiveBufferLimit > 0 ? _receiveBufferLimit : Math.Max(Math.Max(1, OptionReceiveBufferSize), Connection.DefaultMaxReadSize);

    /// <summary>
    /// Size of the first read of a burst, in bytes (default 8192); reads double while they fill the
    /// buffer. Setting it on a client before connecting also sets the socket's SO_RCVBUF, as in NetCoreServer.
    /// </summary>
    public int OptionReceiveBufferSize
    {
        get => _receiveBufferSize;
        set
        {
            _receiveBufferSize = ThrowHelper.ValidateOption(value, zeroAllowed: false, nameof(OptionReceiveBufferSize));
            ReceiveBufferSizeSet = true;
        }
    }

    /// <summary>
    /// Most bytes that may wait in the send queue (default <see cref="DefaultSendBufferLimit"/>; 0 = no limit).
    /// A send that does not fit is refused: <c>SendAsync</c> returns false and OnError reports
    /// <see cref="SocketError.NoBufferSpaceAvailable"/>; the awaitable send waits for room instead;
    /// a multicast disconnects the session with <see cref="NetServer.DisconnectReason.SendBufferFull"/>.
    /// One message larger than the limit is still accepted into an empty queue.
    /// </summary>
    public int OptionSendBufferLimit
    {
        get => _sendBufferLimit;
        set => _sendBufferLimit = ThrowHelper.ValidateOption(value, zeroAllowed: true, nameof(OptionSendBufferLimit));
    }

    /// <summary>
    /// Size of the pooled chunks small queued sends are copied into (default 8192). Setting it on a
    /// client before connecting also sets the socket's SO_SNDBUF, as in NetCoreServer.
    /// </summary>
    public int OptionSendBufferSize
    {
        get => _sendBufferSize;
        set
        {
            _sendBufferSize = ThrowHelper.ValidateOption(value, zeroAllowed: false, nameof(OptionSendBufferSize));
            SendBufferSizeSet = true;
        }
    }

    /// <summary>
    /// How long a graceful close (<see cref="Disconnect"/>, or the peer closing its side) may spend
    /// sending bytes still queued before the socket is closed anyway (default 5 s; <see cref="Timeout.InfiniteTimeSpan"/> = no limit).
    /// </summary>
    public TimeSpan OptionDisconnectTimeout
    {
        get => _disconnectTimeout;
        set
        {
            if (value < TimeSpan.Zero && value != Timeout.InfiniteTimeSpan)
                ThrowHelper.ThrowArgumentOutOfRange(nameof(OptionDisconnectTimeout), "The timeout must be positive or infinite.");
            _disconnectTimeout = value;
        }
    }

    /// <summary>
    /// A connection that answers what it receives (its OnReceived, or its protocol, sent something)
    /// stops receiving while more than this many bytes wait in its send queue (default
    /// <see cref="DefaultSendHighWaterMark"/>; 0 = never), and resumes once they drained to
    /// <see cref="OptionSendLowWaterMark"/>. An echo, a proxy, a request/response protocol thus
    /// slows its peer down through TCP instead of piling up replies for a peer that does not read:
    /// nothing is lost and memory stays bounded. A connection whose backlog comes from sends made
    /// outside its receive hook (a client streaming an upload) keeps reading, so it never stops
    /// reading the replies its peer waits to send. The send limit (<see cref="OptionSendBufferLimit"/>)
    /// stays the last guard; a high-water mark above it acts as the limit.
    /// </summary>
    public int OptionSendHighWaterMark
    {
        get => _sendHighWaterMark;
        set => _sendHighWaterMark = ThrowHelper.ValidateOption(value, zeroAllowed: true, nameof(OptionSendHighWaterMark));
    }

    /// <summary>
    /// Receiving paused by <see cref="OptionSendHighWaterMark"/> resumes once the send queue holds
    /// no more than this many bytes (default <see cref="DefaultSendLowWaterMark"/>; at most the high-water mark).
    /// </summary>
    public int OptionSendLowWaterMark
    {
        get => _sendLowWaterMark;
        set => _sendLowWaterMark = ThrowHelper.ValidateOption(value, zeroAllowed: true, nameof(OptionSendLowWaterMark));
    }

    /// <summary>
    /// Closes a connection on which no byte moved either way for this long, with
    /// <see cref="NetServer.DisconnectReason.IdleTimeout"/> (default <see cref="Timeout.InfiniteTimeSpan"/>: never).
    /// Checked on the process's shared clock (no timer per connection); set it before the connection
    /// starts or in OnConnected (a session: in its constructor or OnConnected).
    /// </summary>
    public TimeSpan OptionIdleTimeout
    {
        get => _idleTimeout;
        set
        {
            if (value <= TimeSpan.Zero && value != Timeout.InfiniteTimeSpan)
                ThrowHelper.ThrowArgumentOutOfRange(nameof(OptionIdleTimeout), "The timeout must be positive or infinite.");
            _idleTimeout = value;
        }
    }

    /// <summary>
    /// Closes a connection whose send backlog has held its receiving (see
    /// <see cref="OptionSendHighWaterMark"/>) while the peer took no byte of it for this long, with
    /// <see cref="NetServer.DisconnectReason.TimedOut"/> (default <see cref="DefaultSendStallTimeout"/>:
    /// 60 s; <see cref="Timeout.InfiniteTimeSpan"/>: never). A peer that sends and never reads
    /// would otherwise hold its connection, and the high-water mark's worth of memory, for ever. A
    /// slow reader is not cut off as long as the kernel completes one of the connection's sends
    /// (each up to the queued bytes, so up to about a high-water mark's worth) within the timeout.
    /// Checked on the process's shared clock; set it before the backlog builds (a session: in its
    /// constructor or OnConnected).
    /// </summary>
    public TimeSpan OptionSendStallTimeout
    {
        get => _sendStallTimeout;
        set
        {
            if (value <= TimeSpan.Zero && value != Timeout.InfiniteTimeSpan)
                ThrowHelper.ThrowArgumentOutOfRange(nameof(OptionSendStallTimeout), "The timeout must be positive or infinite.");
            _sendStallTimeout = value;
        }
    }

    /// <summary>The high-water mark in force: the option, capped by the send limit; 0 when off.</summary>
    internal long EffectiveHighWaterMark => _sendHighWaterMark == 0 ? 0 : Math.Min(_sendHighWaterMark, EffectiveSendLimit);

    /// <summary>The low-water mark in force (never above the high-water mark).</summary>
    internal long EffectiveLowWaterMark => Math.Min(_sendLowWaterMark, EffectiveHighWaterMark);

    internal bool ReceiveBufferSizeSet { get; private set; }

    internal bool SendBufferSizeSet { get; private set; }

    internal long EffectiveSendLimit => _sendBufferLimit == 0 ? long.MaxValue : _sendBufferLimit;

    /// <summary>The engine of the current connection, if any.</summary>
    internal Connection? CurrentConnection => Volatile.Read(ref _connection);

    // --- Disconnect ---

    /// <summary>
    /// Disconnects: stops delivering received data, refuses new sends, sends what is already queued
    /// (for at most <see cref="OptionDisconnectTimeout"/>), then closes the socket. Called from outside
    /// a NetServer hook, it returns after OnDisconnected has run; from inside a hook it returns at once
    /// and OnDisconnected follows when the hook returns.
    /// </summary>
    /// <returns>True if this call started the disconnect; false if not connected.</returns>
    public virtual bool Disconnect()
    {
        FlushProtocol();
        var connection = CurrentConnection;
        if (connection is null)
            return false;
        var started = connection.Close(DisconnectReason.LocalDisconnect);

        // Also when another call started the close: return after OnDisconnected, as documented.
        connection.WaitForFinish(BlockingWaitTimeout);
        return started;
    }

    /// <summary>
    /// Starts a graceful disconnect and returns at once, from any thread (for protocols: a
    /// <c>Connection: close</c> answer sent from outside a hook, a deadline on the thread pool).
    /// Unlike <see cref="Disconnect"/> it never waits for the peer's end of stream, which a peer
    /// that keeps its socket open only sends after <see cref="OptionDisconnectTimeout"/>.
    /// </summary>
    /// <returns>True if this call started the disconnect; false if not connected or already closing.</returns>
    internal bool StartDisconnect()
    {
        FlushProtocol();
        return CurrentConnection?.Close(DisconnectReason.LocalDisconnect) == true;
    }

    /// <summary>
    /// Closes the connection because its peer broke the protocol (for protocol authors: a length
    /// over the maximum, a malformed frame). Nothing more is delivered; what is already queued (an
    /// error reply sent just before) still goes out within <see cref="OptionDisconnectTimeout"/>.
    /// The connection ends with <see cref="DisconnectReason.ProtocolError"/> and
    /// <see cref="DisconnectException"/> is a <see cref="ProtocolViolationException"/> carrying
    /// <paramref name="description"/>. Returns at once, also from inside a hook.
    /// </summary>
    /// <returns>True if this call started the disconnect; false if not connected or already closing.</returns>
    public bool DisconnectOnProtocolError(string description)
    {
        FlushProtocol();
        var connection = CurrentConnection;
        if (connection is null || !connection.Close(NetServer.DisconnectReason.ProtocolError, new ProtocolViolationException(description)))
            return false;
        Diagnostics.ListenerEvents.ProtocolError(this, connection, Protocol?.DiagnosticName ?? "Custom", description);
        return true;
    }

    /// <summary>
    /// Disconnects gracefully and completes after OnDisconnected has run. If
    /// <paramref name="cancellationToken"/> fires while queued bytes are still being sent, the
    /// connection is closed at once instead (the task still completes normally).
    /// </summary>
    /// <returns>True if this call started the disconnect; false if not connected.</returns>
    public async Task<bool> DisconnectAsync(CancellationToken cancellationToken = default)
    {
        FlushProtocol();
        var connection = CurrentConnection;
        if (connection is null || !connection.Close(DisconnectReason.LocalDisconnect))
            return false;
        using (cancellationToken.Register(static state => ((Connection)state!).Abort(NetServer.DisconnectReason.LocalDisconnect), connection))
            await connection.WhenFinished().ConfigureAwait(false);
        return true;
    }

    // --- Engine attachment ---

    /// <summary>
    /// Starts a new connection on a connected socket. It is created held: the caller raises the
    /// connect hooks, then calls <see cref="Connection.Release"/>. <paramref name="reads"/> says
    /// whether the caller will start the receive loop; <paramref name="loop"/>, the loop to pin it
    /// to when the service's next one is not wanted (the loop a client connected through).
    /// </summary>
    internal Connection Attach(Socket socket, BufferPool pool, bool reads, IoLoop? loop = null)
    {
        Volatile.Write(ref _bytesSent, 0);
        Volatile.Write(ref _bytesReceived, 0);
        var layer = CreateSecureLayer();
        var connection = new Connection(this, socket, pool, held: true, reads, layer);

        // A synchronous connect (reads false) of a secure client blocks this thread until its
        // handshake is over; on a thread of the service's loops that handshake would wait for the
        // loop this thread is: such a connection keeps the default transport.
        if (LoopService is { } service && (layer is null || reads || service.CurrentLoop is null))
            connection.PinTo(loop ?? service.NextLoop(), HooksOnLoop);
        Socket = socket;
        Volatile.Write(ref _connection, connection);
        if (Listener is not null)
            _ = connection.PeerEndPoint; // read now: once closed, the socket no longer says
        Diagnostics.ConnectionMetrics.Opened(this, connection);
        return connection;
    }

    /// <summary>The service whose loops new connections are pinned to (the server's for a session), or null.</summary>
    private protected abstract IoService? LoopService { get; }

    /// <summary>With a <see cref="LoopService"/>: receive hooks on the loop (true) or on the thread pool.</summary>
    private protected abstract bool HooksOnLoop { get; }

    /// <summary>
    /// The loop of an <see cref="IoService"/> the current connection is pinned to, or null (the
    /// default transport). Work posted to it runs on the thread that runs this connection's receive
    /// hooks (when they run on the loop), so it never runs concurrently with them.
    /// </summary>
    public IoLoop? Loop => CurrentConnection?.Loop;

    /// <summary>The layer a new connection runs over its socket (TLS sessions and clients), or null for plain bytes.</summary>
    private protected virtual SecureLayer? CreateSecureLayer() => null;

    /// <summary>A client's connect attempt failed: there is no connection, and the reason says why.</summary>
    internal void RecordConnectFailure(DisconnectReason reason, Exception? exception)
    {
        Volatile.Write(ref _connection, null);
        _lastReason = reason;
        _lastException = exception;
    }

    /// <summary>Called by the engine exactly once per connection, after everything else of it.</summary>
    internal void OnConnectionFinished(Connection connection)
    {
        _lastReason = connection.Reason;
        _lastException = connection.Exception;
        Diagnostics.ConnectionMetrics.Closed(this, connection);
        Diagnostics.ListenerEvents.ConnectionClosed(this, connection);
        NotifyProtocolDisconnected(connection.Reason);
        try
        {
            NotifyDisconnected(connection);
        }
        catch (Exception e)
        {
            // Nothing is left to close; keep the failure visible where the reason is.
            _lastException ??= e;
        }
    }

    /// <summary>Raises the final disconnect hooks; sessions also tell their server.</summary>
    private protected virtual void NotifyDisconnected(Connection connection) =>
        RunHook(static (self, reason) => self.OnDisconnected(reason), this, connection.Reason);

    /// <summary>Runs a hook outside the engine's loops (connect and disconnect notifications).</summary>
    private protected static void RunHook<TState>(Action<StreamConnection, TState> hook, StreamConnection target, TState state)
    {
        CallbackScope.Enter();
        try
        {
            hook(target, state);
        }
        finally
        {
            CallbackScope.Exit();
        }
    }

    // --- Diagnostics ---

    /// <summary>Where this connection's events go: its server's listener for a session, its own for a client.</summary>
    internal abstract Diagnostics.NetServerEventListener? Listener { get; }

    /// <summary>The <c>source</c> of its events: the server for a session, the client itself.</summary>
    internal abstract object DiagnosticSource { get; }

    /// <summary>The endpoint tags of its metrics: its server's for a session, the server it connects to for a client.</summary>
    internal abstract Diagnostics.EndpointTags? MetricTags { get; }

    // --- Statistics (the server adds its own totals) ---

    internal virtual void CountSent(long bytes) => Interlocked.Add(ref _bytesSent, bytes);

    internal virtual void CountReceived(long bytes) => Interlocked.Add(ref _bytesReceived, bytes);

    /// <summary>Whole messages its protocol delivered in one read (a session adds them to its server's totals; a client keeps none).</summary>
    internal virtual void CountMessagesReceived(int kind, long count)
    {
    }

    /// <summary>
    /// Whole messages of <paramref name="kind"/> its protocol is about to hand to the send queue (a session
    /// passes them to its server's totals at its next flush; a client keeps none).
    /// </summary>
    internal virtual void CountMessagesSent(int kind, long count)
    {
    }

    internal virtual void CountPending(long delta)
    {
    }

    // --- Dispose ---

    /// <summary>True once disposed.</summary>
    public bool IsDisposed { get; private set; }

    /// <summary>True when there is no open socket.</summary>
    public bool IsSocketDisposed => CurrentConnection is not { IsSocketClosed: false };

    /// <summary>Closes the connection at once (queued bytes are dropped) and waits for OnDisconnected, as <see cref="Disconnect"/> does.</summary>
    public void Dispose()
    {
        Dispose(true);
        GC.SuppressFinalize(this);
    }

    /// <summary>Closes the connection when <paramref name="disposingManagedResources"/> is true.</summary>
    protected virtual void Dispose(bool disposingManagedResources)
    {
        if (IsDisposed)
            return;
        IsDisposed = true;
        if (disposingManagedResources && CurrentConnection is { } connection)
        {
            connection.Abort(NetServer.DisconnectReason.Disposed);
            connection.WaitForFinish(BlockingWaitTimeout);
        }
    }

    /// <summary>Closes the connection at once and completes after OnDisconnected has run.</summary>
    public async ValueTask DisposeAsync()
    {
        var connection = CurrentConnection;
        if (!IsDisposed && connection is not null)
        {
            connection.Abort(NetServer.DisconnectReason.Disposed);
            await connection.WhenFinished().ConfigureAwait(false);
        }
        Dispose(true);
        GC.SuppressFinalize(this);
    }
}
