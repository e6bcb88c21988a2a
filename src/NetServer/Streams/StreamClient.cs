using NetServer.Service;

namespace NetServer;

/// <summary>
/// A client that connects to a stream server (TCP or Unix domain socket) and can reconnect.
/// Derive from <see cref="TcpClient"/> or <see cref="UdsClient"/> and override the <c>On*</c> hooks.
/// </summary>
/// <remarks>
/// Each connect attempt ends with exactly one OnDisconnected, also when the attempt fails
/// (after OnError for unexpected errors), so a reconnect loop in OnDisconnected works.
/// </remarks>
public abstract class StreamClient : StreamConnection
{
    private readonly object _connectLock = new(); // orders a connect's publication against Disconnect
    private int _connecting;
    private Socket? _connectingSocket;           // under the connect lock
    private LoopConnect? _loopConnect;   // under the connect lock: a connect waiting on a loop's poller

    private protected StreamClient(EndPoint endpoint)
    {
        if (endpoint is null)
            ThrowHelper.ThrowArgumentNull(nameof(endpoint));
        Endpoint = endpoint;
    }

    /// <summary>The server endpoint.</summary>
    public EndPoint Endpoint { get; }

    /// <summary>
    /// Receives this client's operational events (see <see cref="Diagnostics.NetServerEventListener"/>);
    /// null, the default, for none. Set it before <c>Connect</c>.
    /// </summary>
    public Diagnostics.NetServerEventListener? EventListener { get; set; }

    /// <summary>
    /// The I/O service whose loops this client's connections are pinned to (one loop per connect,
    /// round robin), or null (the default) for the thread-pool transport; set it before
    /// <c>Connect</c> and start the service first. See <see cref="StreamServer{TSession}.Service"/>.
    /// </summary>
    public IoService? Service { get; set; }

    /// <summary>With a <see cref="Service"/>: receive hooks on the loop's thread (true, the default) or on the thread pool (see <see cref="StreamServer{TSession}.OptionHooksOnLoop"/>).</summary>
    public bool OptionHooksOnLoop { get; set; } = true;

    private protected override IoService? LoopService => Service ?? IoService.Ambient;

    private protected override bool HooksOnLoop => OptionHooksOnLoop;

    private Diagnostics.EndpointTags? _metricTags;

    internal override Diagnostics.NetServerEventListener? Listener => EventListener;

    internal override object DiagnosticSource => this;

    // Worked out at the first connection that is measured: the server endpoint does not change.
    internal override Diagnostics.EndpointTags? MetricTags => _metricTags ??= Diagnostics.EndpointTags.For(Endpoint, datagrams: false);

    /// <summary>True while a connect is in progress.</summary>
    public bool IsConnecting => Volatile.Read(ref _connecting) != 0;

    /// <summary>The pool every buffer of this client comes from (tests swap in a leak-checking pool).</summary>
    internal BufferPool BufferPool { get; set; } = BufferPool.Shared;

    /// <summary>The endpoint of the current connect attempt (a resolved host name), for <see cref="CreateSocket"/>.</summary>
    private protected EndPoint ConnectEndpoint { get; private set; } = null!;

    /// <summary>A connect attempt starts: OnConnecting (a protocol that speaks first on every connection resets itself here too).</summary>
    internal virtual void InvokeConnecting() => OnConnecting();

    /// <summary>Creates the socket for a connect attempt; override to prepare a special socket.</summary>
    protected virtual Socket CreateSocket() =>
        new(ConnectEndpoint.AddressFamily, SocketType.Stream, ConnectEndpoint.AddressFamily == AddressFamily.Unix ? ProtocolType.Unspecified : ProtocolType.Tcp);

    /// <summary>
    /// Connects, blocking the caller. As in NetCoreServer, a synchronous connect does not start the
    /// asynchronous receive loop: use <c>Receive</c>, or call <see cref="StreamConnection.ReceiveAsync"/> to start it.
    /// If the previous connection is still closing, waits for its OnDisconnected first (inside
    /// another connection's hook it cannot wait, and returns false instead). A TLS client returns
    /// once its handshake is over, however long it takes (<c>SslContext.HandshakeTimeout</c> bounds
    /// it), also when called inside a hook such as OnDisconnected.
    /// </summary>
    /// <returns>True if connected; false if already connected or connecting, or if the connect (or the handshake) failed.</returns>
    public virtual bool Connect()
    {
        if (IsConnected || Interlocked.CompareExchange(ref _connecting, 1, 0) != 0)
            return false;
        if (CurrentConnection is { IsDetached: false } previous && !previous.WaitForFinish(BlockingWaitTimeout))
        {
            Volatile.Write(ref _connecting, 0);
            return false;
        }

        Socket? socket = null;
        Connection connection;
        try
        {
            RunHook(static (self, _) => ((StreamClient)self).InvokeConnecting(), this, 0);
            ConnectEndpoint = ResolveSync(Endpoint);
            socket = CreateSocket();
            lock (_connectLock)
                _connectingSocket = socket;
            ConfigureSocket(socket, connected: false);
            socket.Connect(ConnectEndpoint);
            ConfigureSocket(socket, connected: true);
            connection = Publish(socket, reads: false);
        }
        catch (Exception e) when (e is SocketException or ObjectDisposedException)
        {
            ConnectFailed(socket, SocketErrors.FromException(e));
            return false;
        }
        catch (Exception e)
        {
            HandlerFailedWhileConnecting(socket, e);
            throw;
        }

        // A secure connection is up once its handshake is over, however long that takes (the
        // handshake timeout bounds it): never false for a connection that then becomes connected.
        return Established(connection, startReceiving: false) && connection.WaitForHandshake() && connection.IsOpen;
    }

    /// <summary>Starts connecting and returns at once; OnConnected (or OnError and OnDisconnected) follows.</summary>
    /// <returns>True if the attempt started; false if already connected or connecting.</returns>
    public virtual bool ConnectAsync()
    {
        if (IsConnected || Interlocked.CompareExchange(ref _connecting, 1, 0) != 0)
            return false;
        _ = ConnectCoreAsync(throwOnFailure: false, CancellationToken.None);
        return true;
    }

    /// <summary>
    /// Connects and starts receiving; completes after OnConnected. The connect hooks run as for
    /// <see cref="ConnectAsync()"/>, including OnDisconnected when the attempt fails. If the previous
    /// connection is still closing, its OnDisconnected runs first.
    /// </summary>
    /// <returns>True if connected; false if already connected or connecting.</returns>
    /// <exception cref="SocketException">The connect failed.</exception>
    /// <exception cref="OperationCanceledException"><paramref name="cancellationToken"/> fired before the connection was up.</exception>
    public Task<bool> ConnectAsync(CancellationToken cancellationToken)
    {
        if (cancellationToken.IsCancellationRequested)
            return Task.FromCanceled<bool>(cancellationToken);
        if (IsConnected || Interlocked.CompareExchange(ref _connecting, 1, 0) != 0)
            return Task.FromResult(false);
        return ConnectCoreAsync(throwOnFailure: true, cancellationToken);
    }

    private async Task<bool> ConnectCoreAsync(bool throwOnFailure, CancellationToken cancellationToken)
    {
        // Called from a hook (typically a reconnect in OnDisconnected), leave that hook's stack
        // first: a connect that completes at once would otherwise run the next connection's hooks,
        // and possibly its OnDisconnected and the next reconnect, nested inside this one.
        if (CallbackScope.IsActive)
            await Task.Yield();

        Socket? socket = null;
        Connection connection;
        var args = SocketArgsPool.Rent();
        try
        {
            // One connection at a time: the previous one's OnDisconnected comes before this OnConnecting.
            if (CurrentConnection is { IsDetached: false } previous)
                await previous.WhenFinished().ConfigureAwait(false);

            RunHook(static (self, _) => ((StreamClient)self).InvokeConnecting(), this, 0);
            ConnectEndpoint = await ResolveAsync(Endpoint).ConfigureAwait(false);
            socket = CreateSocket();
            // On a loop that polls sockets, the connect waits there too (see LoopConnect).
            var loopConnect = LoopService is { } service ? LoopConnect.TryCreate(service.NextLoop(), ConnectEndpoint) : null;
            lock (_connectLock)
            {
                _connectingSocket = socket;
                _loopConnect = loopConnect;
            }

            ConfigureSocket(socket, connected: false);

            SocketResult result;
            using (cancellationToken.Register(static state => AbandonSocket(state!), (object?)loopConnect ?? socket))
            {
                result = loopConnect is null
                    ? await args.ConnectAsync(socket, ConnectEndpoint).ConfigureAwait(false)
                    : await loopConnect.ConnectAsync(socket, ConnectEndpoint).ConfigureAwait(false);
            }

            if (!result.IsSuccess)
                throw new SocketException((int)result.Error);
            ConfigureSocket(socket, connected: true);
            connection = Publish(socket, reads: true, loopConnect?.Loop); // pinned where it connected: one loop pick per connection
        }
        catch (Exception e) when (e is SocketException or ObjectDisposedException)
        {
            var error = SocketErrors.FromException(e);
            ConnectFailed(socket, error);
            cancellationToken.ThrowIfCancellationRequested();
            if (throwOnFailure)
                throw new SocketException((int)error);
            return false;
        }
        catch (Exception e)
        {
            HandlerFailedWhileConnecting(socket, e);
            throw;
        }
        finally
        {
            SocketArgsPool.Return(args);
        }

        // A handshake may fail before Established returns: its failure is still the caller's to see.
        var open = Established(connection, startReceiving: true);
        if (await connection.WhenHandshakeDone().ConfigureAwait(false) && open)
            return true;
        if (throwOnFailure && connection.Reason == NetServer.DisconnectReason.HandshakeFailed && connection.Exception is { } failure)
            System.Runtime.ExceptionServices.ExceptionDispatchInfo.Capture(failure).Throw();
        return false;
    }

    /// <summary>
    /// Publishes the connection of a socket that connected, in one step with forgetting the socket
    /// as "connecting": a <see cref="Disconnect"/> sees either the connecting socket (and abandons
    /// the attempt) or the connection (and closes it), never neither.
    /// </summary>
    /// <exception cref="ObjectDisposedException">A Disconnect abandoned the attempt meanwhile.</exception>
    private Connection Publish(Socket socket, bool reads, IoLoop? loop = null)
    {
        lock (_connectLock)
        {
            if (!ReferenceEquals(_connectingSocket, socket))
                throw new ObjectDisposedException(nameof(Socket), "The connect was abandoned by Disconnect.");
            _connectingSocket = null;
            _loopConnect = null;
            return Attach(socket, BufferPool, reads, loop);
        }
    }

    /// <summary>A cancelled connect: a loop's wait ends (the caller then disposes the socket), a runtime connect ends with its socket.</summary>
    private static void AbandonSocket(object state)
    {
        if (state is LoopConnect loopConnect)
            loopConnect.Abort();
        else
            ((Socket)state).Dispose();
    }

    /// <summary>Abandons a connect in progress; false if there is none.</summary>
    private bool AbandonConnect()
    {
        Socket? connecting;
        LoopConnect? loopConnect;
        lock (_connectLock)
        {
            connecting = _connectingSocket;
            loopConnect = _loopConnect;
            _connectingSocket = null;
            _loopConnect = null;
        }

        loopConnect?.Abort();
        connecting?.Dispose();
        return connecting is not null;
    }

    /// <summary>
    /// A new connection (created held): OnConnected, then <see cref="Connection.Open"/> (a secure
    /// connection's handshake, OnEmpty through the flusher, optionally the receive loop). Returns
    /// whether the connection was still open when OnConnected had returned.
    /// </summary>
    private bool Established(Connection connection, bool startReceiving)
    {
        try
        {
            Volatile.Write(ref _connecting, 0);
            CallbackScope.Enter();
            try
            {
                OnConnected();
            }
            catch (Exception e)
            {
                connection.Abort(NetServer.DisconnectReason.HandlerException, e);
            }
            finally
            {
                CallbackScope.Exit();
            }

            // Whether the connection survived OnConnected, read before Open: once Open has started
            // the receive loop (or the handshake), a peer that answers and closes at once could close
            // it before this line, and a connect that succeeded would be reported as failed.
            var open = connection.IsOpen;
            connection.Open(startReceiving);
            return open;
        }
        finally
        {
            connection.Release();
        }
    }

    /// <summary>A failed attempt: OnError for unexpected errors, then OnDisconnected, as for any connection end.</summary>
    private void ConnectFailed(Socket? socket, SocketError error)
    {
        lock (_connectLock)
        {
            if (ReferenceEquals(_connectingSocket, socket))
            {
                _connectingSocket = null;
                _loopConnect = null;
            }
        }

        socket?.Dispose();
        RecordConnectFailure(NetServer.DisconnectReason.ConnectFailed, null);
        Volatile.Write(ref _connecting, 0);
        if (!SocketErrors.IsDisconnect(error))
            RunHook(static (self, e) => ((StreamClient)self).OnError(e), this, error);
        RunHook(static (self, _) => ((StreamClient)self).OnDisconnected(NetServer.DisconnectReason.ConnectFailed), this, 0);
    }

    /// <summary>OnConnecting (or CreateSocket) threw: the attempt ends with OnDisconnected and the exception goes to the caller.</summary>
    private void HandlerFailedWhileConnecting(Socket? socket, Exception exception)
    {
        lock (_connectLock)
        {
            if (ReferenceEquals(_connectingSocket, socket))
            {
                _connectingSocket = null;
                _loopConnect = null;
            }
        }

        socket?.Dispose();
        RecordConnectFailure(NetServer.DisconnectReason.HandlerException, exception);
        Volatile.Write(ref _connecting, 0);
        RunHook(static (self, _) => ((StreamClient)self).OnDisconnected(NetServer.DisconnectReason.HandlerException), this, 0);
    }

    /// <summary>
    /// Disconnects (see <see cref="StreamConnection.Disconnect"/>); while a connect is in progress, abandons it.
    /// </summary>
    /// <returns>True if a connection or a connect attempt was ended.</returns>
    public override bool Disconnect() => AbandonConnect() || base.Disconnect();

    /// <summary>Starts a graceful disconnect and returns at once; OnDisconnected follows.</summary>
    /// <returns>True if a disconnect started; false if not connected.</returns>
    public virtual bool DisconnectAsync() =>
        AbandonConnect() || CurrentConnection?.Close(NetServer.DisconnectReason.LocalDisconnect) == true;

    /// <summary>Disconnects (waiting as <see cref="Disconnect"/> does), then connects synchronously.</summary>
    /// <returns>False if not connected, or if the new connect failed.</returns>
    public virtual bool Reconnect()
    {
        if (!Disconnect())
            return false;
        return Connect();
    }

    /// <summary>Starts a graceful disconnect and, once OnDisconnected has run, an asynchronous connect.</summary>
    /// <returns>False if not connected.</returns>
    public virtual bool ReconnectAsync()
    {
        var connection = CurrentConnection;
        if (connection is null || !connection.Close(NetServer.DisconnectReason.LocalDisconnect))
            return false;
        _ = ReconnectAfterAsync(connection);
        return true;
    }

    private async Task ReconnectAfterAsync(Connection previous)
    {
        await previous.WhenFinished().ConfigureAwait(false);
        ConnectAsync();
    }

    /// <summary>Socket options before the connect (<paramref name="connected"/> false) and after it.</summary>
    private protected virtual void ConfigureSocket(Socket socket, bool connected)
    {
        if (connected)
            return;
        if (ReceiveBufferSizeSet)
            socket.ReceiveBufferSize = OptionReceiveBufferSize;
        if (SendBufferSizeSet)
            socket.SendBufferSize = OptionSendBufferSize;
    }

    private protected virtual EndPoint ResolveSync(EndPoint endpoint) => endpoint;

    private protected virtual ValueTask<EndPoint> ResolveAsync(EndPoint endpoint) => new(endpoint);
}
