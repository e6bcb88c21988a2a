using System;
using System.Collections.Concurrent;
using System.Collections.Generic;
using System.Diagnostics;
using System.Net;
using System.Net.Sockets;
using System.Threading;
using System.Threading.Tasks;
using NetServer.Buffers;
using NetServer.Internal;
using NetServer.Streams;
using NetServer.Transport;

namespace NetServer;

/// <summary>
/// A server that accepts stream connections (TCP or Unix domain sockets) and keeps one
/// <typeparamref name="TSession"/> per connection. Derive from <see cref="TcpServer"/> or
/// <see cref="UdsServer"/>, override <c>CreateSession</c> and the hooks you need.
/// </summary>
/// <typeparam name="TSession">The session type this server creates.</typeparam>
public abstract partial class StreamServer<TSession> : IDisposable, IAsyncDisposable, ISessionHost
    where TSession : StreamSession
{
    private static readonly WaitCallback s_startSession = static state =>
    {
        var (server, socket, generation) = ((StreamServer<TSession>, Socket, int))state!;
        server.StartSession(socket, generation);
    };

    private const int LifecycleStopped = 0;
    private const int LifecycleStarting = 1;
    private const int LifecycleStarted = 2;
    private const int LifecycleStopping = 3;

    private int _lifecycle;
    private readonly SessionRegistry<TSession> _registry = new();
    private Socket? _listener;
    private int _generation;
    private long _connectedSessions;
    private long _bytesPending;
    private long _bytesSent;
    private long _bytesReceived;
    private int _acceptorBacklog = 1024;
    private int _receiveBufferSize = 8192;
    private int _sendBufferSize = 8192;
    private bool _receiveBufferSizeSet;
    private bool _sendBufferSizeSet;
    private volatile bool _isStarted;
    private volatile bool _isAccepting;

    /// <summary>The sessions currently connected, by <see cref="StreamConnection.Id"/>.</summary>
#pragma warning disable CA1051 // A protected field, as in NetCoreServer's API.
    protected readonly ConcurrentDictionary<Guid, TSession> Sessions = new();
#pragma warning restore CA1051

    private protected StreamServer(EndPoint endpoint)
    {
        if (endpoint is null)
            ThrowHelper.ThrowArgumentNull(nameof(endpoint));
        Id = Guid.NewGuid();
        Endpoint = endpoint;
    }

    /// <summary>Identifier of this server.</summary>
    public Guid Id { get; }

    /// <summary>The endpoint the server listens on; after <see cref="Start"/> it is the bound endpoint (port 0 becomes the real port).</summary>
    public EndPoint Endpoint { get; private set; }

    /// <summary>Number of sessions currently connected.</summary>
    public long ConnectedSessions => Interlocked.Read(ref _connectedSessions);

    /// <summary>Bytes accepted by sends of all sessions and not yet handed to the operating system (the sum of the sessions' <c>BytesPending</c>).</summary>
    public long BytesPending => Interlocked.Read(ref _bytesPending);

    /// <summary>Bytes sent by all sessions since the server started.</summary>
    public long BytesSent => Interlocked.Read(ref _bytesSent);

    /// <summary>Bytes received by all sessions since the server started.</summary>
    public long BytesReceived => Interlocked.Read(ref _bytesReceived);

    /// <summary>True between a successful <see cref="Start"/> and <see cref="Stop"/>.</summary>
    public bool IsStarted => _isStarted;

    /// <summary>True while the server accepts new connections.</summary>
    public bool IsAccepting => _isAccepting;

    /// <summary>Length of the listen backlog (default 1024).</summary>
    public int OptionAcceptorBacklog
    {
        get => _acceptorBacklog;
        set => _acceptorBacklog = ThrowHelper.ValidateOption(value, zeroAllowed: false, nameof(OptionAcceptorBacklog));
    }

    /// <summary>
    /// SO_RCVBUF for accepted sockets (default 8192, as in NetCoreServer). It is applied only when
    /// set explicitly: by default the kernel sizes and auto-tunes the buffer, which is much faster.
    /// </summary>
    public int OptionReceiveBufferSize
    {
        get => _receiveBufferSize;
        set
        {
            _receiveBufferSize = ThrowHelper.ValidateOption(value, zeroAllowed: false, nameof(OptionReceiveBufferSize));
            _receiveBufferSizeSet = true;
        }
    }

    /// <summary>SO_SNDBUF for accepted sockets (default 8192); applied only when set explicitly, like <see cref="OptionReceiveBufferSize"/>.</summary>
    public int OptionSendBufferSize
    {
        get => _sendBufferSize;
        set
        {
            _sendBufferSize = ThrowHelper.ValidateOption(value, zeroAllowed: false, nameof(OptionSendBufferSize));
            _sendBufferSizeSet = true;
        }
    }

    /// <summary>The pool every buffer of this server and its sessions comes from (tests swap in a leak-checking pool).</summary>
    internal BufferPool BufferPool { get; set; } = BufferPool.Shared;

    BufferPool ISessionHost.BufferPool => BufferPool;

    // --- Start / stop ---

    /// <summary>Creates the listening socket; override to prepare a special socket.</summary>
    protected virtual Socket CreateSocket() =>
        new(Endpoint.AddressFamily, SocketType.Stream, Endpoint.AddressFamily == AddressFamily.Unix ? ProtocolType.Unspecified : ProtocolType.Tcp);

    /// <summary>Creates the session object for a new connection.</summary>
    protected abstract TSession CreateSession();

    /// <summary>Binds, listens and starts accepting.</summary>
    /// <returns>True if started; false if already started (or being started or stopped).</returns>
    /// <exception cref="SocketException">The endpoint cannot be bound (for example, it is in use).</exception>
    public virtual bool Start()
    {
        // The lifecycle moves by compare-and-swap, so no lock is held while the hooks run.
        if (Interlocked.CompareExchange(ref _lifecycle, LifecycleStarting, LifecycleStopped) != LifecycleStopped)
            return false;

        try
        {
            OnStarting();
            Endpoint = ResolveEndpoint(Endpoint);
            var listener = CreateSocket();
            try
            {
                ConfigureListener(listener);
                if (_receiveBufferSizeSet)
                    listener.ReceiveBufferSize = _receiveBufferSize;
                if (_sendBufferSizeSet)
                    listener.SendBufferSize = _sendBufferSize;
                BeforeBind(Endpoint);
                listener.Bind(Endpoint);
                listener.Listen(_acceptorBacklog);
            }
            catch
            {
                listener.Dispose();
                throw;
            }

            Endpoint = listener.LocalEndPoint ?? Endpoint;
            Interlocked.Exchange(ref _bytesSent, 0);
            Interlocked.Exchange(ref _bytesReceived, 0);
            _listener = listener;
            var generation = Interlocked.Increment(ref _generation);
            _isStarted = true;
            _isAccepting = true;
            Volatile.Write(ref _lifecycle, LifecycleStarted);
            _ = AcceptLoopAsync(listener, generation);
        }
        catch
        {
            Volatile.Write(ref _lifecycle, LifecycleStopped);
            throw;
        }

        OnStarted();
        return true;
    }

    /// <summary>
    /// Stops accepting, closes every session at once (queued bytes are dropped, reason
    /// <see cref="DisconnectReason.ServerStopped"/>) and returns after their OnDisconnected hooks have
    /// run, then raises OnStopped. From inside a NetServer hook it does not wait for the sessions.
    /// </summary>
    /// <returns>True if stopped; false if not started.</returns>
    public virtual bool Stop()
    {
        if (!BeginStop())
            return false;

        // Sessions accepted while the stop began close themselves; the second pass waits for them.
        var deadline = DateTime.UtcNow + StreamConnection.BlockingWaitTimeout;
        for (var pass = 0; pass < 2; pass++)
        {
            foreach (var session in Sessions.Values)
            {
                var left = deadline - DateTime.UtcNow;
                if (session.CurrentConnection is { } connection && !connection.WaitForFinish(left > TimeSpan.Zero ? left : TimeSpan.Zero))
                    break;
            }
        }

        EndStop();
        return true;
    }

    /// <summary>Stops like <see cref="Stop"/> without blocking: completes after every session's OnDisconnected and OnStopped.</summary>
    /// <returns>True if stopped; false if not started.</returns>
    public async Task<bool> StopAsync()
    {
        if (!BeginStop())
            return false;
        for (var pass = 0; pass < 2; pass++)
        {
            var waits = new List<Task>();
            foreach (var session in Sessions.Values)
            {
                if (session.CurrentConnection is { } connection)
                    waits.Add(connection.WhenFinished());
            }

            await Task.WhenAll(waits).ConfigureAwait(false);
        }

        EndStop();
        return true;
    }

    /// <summary>Stops accepting and aborts every session; false if the server was not started.</summary>
    private bool BeginStop()
    {
        if (Interlocked.CompareExchange(ref _lifecycle, LifecycleStopping, LifecycleStarted) != LifecycleStarted)
            return false;

        _isAccepting = false;
        OnStopping();

        var listener = _listener!;
        _listener = null;
        listener.Dispose();
        AfterListenerClosed(Endpoint);

        foreach (var session in Sessions.Values)
            session.CurrentConnection?.Abort(DisconnectReason.ServerStopped);
        return true;
    }

    private void EndStop()
    {
        _isStarted = false;
        Volatile.Write(ref _lifecycle, LifecycleStopped);
        OnStopped();
    }

    /// <summary>Stops, then starts again.</summary>
    /// <returns>True if the server was started again.</returns>
    public virtual bool Restart() => Stop() && Start();

    /// <summary>
    /// Disconnects every session gracefully (each sends what it has queued, then closes) and, from
    /// outside a NetServer hook, returns after their OnDisconnected hooks have run.
    /// </summary>
    /// <returns>False if the server is not started.</returns>
    public virtual bool DisconnectAll()
    {
        if (!_isStarted)
            return false;
        var closing = new List<Connection>();
        foreach (var session in Sessions.Values)
        {
            if (session.CurrentConnection is { } connection && connection.Close(DisconnectReason.ServerStopped))
                closing.Add(connection);
        }

        var deadline = DateTime.UtcNow + StreamConnection.BlockingWaitTimeout;
        foreach (var connection in closing)
        {
            var left = deadline - DateTime.UtcNow;
            if (!connection.WaitForFinish(left > TimeSpan.Zero ? left : TimeSpan.Zero))
                break;
        }

        return true;
    }

    /// <summary>The session with the given id, or null if it is not connected.</summary>
    public TSession? FindSession(Guid id) => Sessions.TryGetValue(id, out var session) ? session : null;

    // --- Accepting ---

    private async Task AcceptLoopAsync(Socket listener, int generation)
    {
        using var args = new SocketAwaitableEventArgs();
        while (true)
        {
            SocketResult result;
            try
            {
                result = await args.AcceptAsync(listener).ConfigureAwait(false);
            }
            catch (ObjectDisposedException)
            {
                return; // Stop closed the listener before the accept was issued.
            }

            if (result.IsSuccess)
            {
                var socket = args.AcceptSocket!;
                args.AcceptSocket = null;

                // Set up the session off the accept loop, so a slow OnConnected never delays accepting.
                ThreadPool.UnsafeQueueUserWorkItem(s_startSession, (this, socket, generation));
                continue;
            }

            if (!_isAccepting || generation != Volatile.Read(ref _generation))
                return; // Stop closed the listener.

            if (!SocketErrors.IsDisconnect(result.Error))
                ReportError(result.Error);

            // Out of descriptors or buffers: accepting again at once would only fail again.
            if (SocketErrors.IsResourceExhaustion(result.Error))
                await Task.Delay(50).ConfigureAwait(false);
        }
    }

    private void StartSession(Socket socket, int generation)
    {
        try
        {
            ConfigureAcceptedSocket(socket);
        }
        catch (SocketException e)
        {
            // A peer that reset before set-up is an ordinary disconnect; an option the system
            // refuses is not, and is reported.
            socket.Dispose();
            if (!SocketErrors.IsDisconnect(e.SocketErrorCode))
                ReportError(e.SocketErrorCode);
            return;
        }

        TSession session;
        try
        {
            session = CreateSession();
            if (session?.Host != this)
                throw new InvalidOperationException("CreateSession() must return a new session created for this server.");
        }
        catch (Exception e)
        {
            // Reported before the close, so whoever sees the connection end can find the reason.
            try
            {
                ReportException(e);
            }
            finally
            {
                socket.Dispose();
            }

            return;
        }

        // The connection starts held: a disconnect inside the connect hooks cannot raise
        // OnDisconnected before they have all returned.
        var connection = session.Attach(socket, BufferPool, reads: true);
        try
        {
            Sessions[session.Id] = session;
            Interlocked.Increment(ref _connectedSessions);

            // A Stop that ran between the accept and the registration above did not see this session.
            if (!_isAccepting || generation != Volatile.Read(ref _generation))
                connection.Abort(DisconnectReason.ServerStopped);

            RunConnectHook(connection, static s => s.RaiseConnecting(), session);
            RunConnectHook(connection, static s => s.RaiseConnected(), session);

            // Multicasts reach a session once it is ready (connected, and handshaked over TLS),
            // so none overtakes its OnConnected or fills the queue of a handshake that never ends.
            connection.Open(startReceiving: true);
        }
        finally
        {
            connection.Release();
        }
    }

    private static void RunConnectHook(Connection connection, Action<TSession> hook, TSession session)
    {
        if (!connection.IsOpen)
            return;
        CallbackScope.Enter();
        try
        {
            hook(session);
        }
        catch (Exception e)
        {
            connection.Abort(DisconnectReason.HandlerException, e);
        }
        finally
        {
            CallbackScope.Exit();
        }
    }

    // --- Extension points for the concrete servers ---

    /// <summary>Turns the configured endpoint into one that can be bound (TCP: resolves a host name).</summary>
    private protected virtual EndPoint ResolveEndpoint(EndPoint endpoint) => endpoint;

    /// <summary>Applies listener options before bind (TCP: dual mode, address reuse).</summary>
    private protected virtual void ConfigureListener(Socket listener)
    {
    }

    /// <summary>Applies per-connection options to an accepted socket (TCP: no-delay, keep-alive).</summary>
    private protected virtual void ConfigureAcceptedSocket(Socket socket)
    {
    }

    /// <summary>Runs just before bind (Unix sockets: remove a stale socket file).</summary>
    private protected virtual void BeforeBind(EndPoint endpoint)
    {
    }

    /// <summary>Runs after the listener is closed (Unix sockets: remove the socket file).</summary>
    private protected virtual void AfterListenerClosed(EndPoint endpoint)
    {
    }

    // --- ISessionHost ---

    void ISessionHost.CountSent(long bytes) => Interlocked.Add(ref _bytesSent, bytes);

    void ISessionHost.CountReceived(long bytes) => Interlocked.Add(ref _bytesReceived, bytes);

    void ISessionHost.CountPending(long delta) => Interlocked.Add(ref _bytesPending, delta);

    void ISessionHost.SessionConnecting(StreamSession session) => OnConnecting((TSession)session);

    void ISessionHost.SessionConnected(StreamSession session) => OnConnected((TSession)session);

    void ISessionHost.SessionDisconnecting(StreamSession session) => OnDisconnecting((TSession)session);

    void ISessionHost.SessionReady(StreamSession session) => _registry.Add((TSession)session);

    void ISessionHost.SessionDisconnected(StreamSession session)
    {
        var typed = (TSession)session;
        if (Sessions.TryRemove(typed.Id, out _))
            Interlocked.Decrement(ref _connectedSessions);
        _registry.Remove(typed);

        CallbackScope.Enter();
        try
        {
            typed.RaiseDisconnected(typed.DisconnectReason);
            OnDisconnected(typed);
        }
        finally
        {
            CallbackScope.Exit();
        }
    }

    private void ReportError(SocketError error)
    {
        CallbackScope.Enter();
        try
        {
            OnError(error);
        }
        catch (Exception e)
        {
            ReportException(e);
        }
        finally
        {
            CallbackScope.Exit();
        }
    }

    private void ReportException(Exception exception)
    {
        CallbackScope.Enter();
        try
        {
            OnError(exception);
        }
        catch (Exception e)
        {
            // The handler for failures failed as well: the trace is the last place left to report both.
            Trace.TraceError("NetServer: {0} failed while handling {1}", e, exception);
        }
        finally
        {
            CallbackScope.Exit();
        }
    }

    // --- Hooks ---

    /// <summary>Called at the start of <see cref="Start"/>.</summary>
    protected virtual void OnStarting()
    {
    }

    /// <summary>Called once the server listens.</summary>
    protected virtual void OnStarted()
    {
    }

    /// <summary>Called at the start of <see cref="Stop"/>.</summary>
    protected virtual void OnStopping()
    {
    }

    /// <summary>Called when the server has stopped and (outside hooks) every session has disconnected.</summary>
    protected virtual void OnStopped()
    {
    }

    /// <summary>Called when a session is being set up (after the session's own OnConnecting).</summary>
    protected virtual void OnConnecting(TSession session)
    {
    }

    /// <summary>Called when a session is connected (after the session's own OnConnected), before it receives anything.</summary>
    protected virtual void OnConnected(TSession session)
    {
    }

    /// <summary>Called when a session starts to close (after the session's own OnDisconnecting).</summary>
    protected virtual void OnDisconnecting(TSession session)
    {
    }

    /// <summary>Called once per session, last (after the session's own OnDisconnected); the session is already removed from <see cref="Sessions"/>.</summary>
    protected virtual void OnDisconnected(TSession session)
    {
    }

    /// <summary>Called on accept errors other than ordinary disconnects (for example, out of file descriptors).</summary>
    protected virtual void OnError(SocketError error)
    {
    }

    /// <summary>
    /// Called when application code that the server runs outside any session throws:
    /// <c>CreateSession</c>, or <see cref="OnError(SocketError)"/>. The connection being set up is
    /// closed and the server keeps accepting. The default writes the exception to
    /// <see cref="Trace"/>. (A hook of a session that throws closes that session instead, with
    /// <see cref="DisconnectReason.HandlerException"/>.)
    /// </summary>
    protected virtual void OnError(Exception exception) => Trace.TraceError("NetServer: {0}", exception);

    // --- Dispose ---

    /// <summary>True once disposed.</summary>
    public bool IsDisposed { get; private set; }

    /// <summary>True when there is no listening socket.</summary>
    public bool IsSocketDisposed => Volatile.Read(ref _listener) is null;

    /// <summary>Stops the server (as <see cref="Stop"/>).</summary>
    public void Dispose()
    {
        Dispose(true);
        GC.SuppressFinalize(this);
    }

    /// <summary>Stops the server when <paramref name="disposingManagedResources"/> is true.</summary>
    protected virtual void Dispose(bool disposingManagedResources)
    {
        if (IsDisposed)
            return;
        IsDisposed = true;
        if (disposingManagedResources)
            Stop();
    }

    /// <summary>Stops the server (as <see cref="StopAsync"/>).</summary>
    public async ValueTask DisposeAsync()
    {
        if (!IsDisposed)
        {
            IsDisposed = true;
            await StopAsync().ConfigureAwait(false);
        }

        GC.SuppressFinalize(this);
    }
}
