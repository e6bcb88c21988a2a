using System.Collections.Concurrent;
using System.Collections.Generic;

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
    private const int LifecycleStopped = 0;
    private const int LifecycleStarting = 1;
    private const int LifecycleStarted = 2;
    private const int LifecycleStopping = 3;

    private int _lifecycle;
    private readonly SessionRegistry<TSession> _registry = new();
    private Socket? _listener;
    private int _generation;
    // Every session of the server updates these from its own thread: each on a cache line of its own.
    private PaddedCounter _connectedSessions;
    private PaddedCounter _bytesPending;
    private PaddedCounter _bytesSent;
    private PaddedCounter _bytesReceived;
    private long _admittedSessions; // accepted and not yet finished (counts sessions still being set up)
    private long _rejectedSessions;
    private int _maxSessions;
    private int _acceptorBacklog = DefaultAcceptorBacklog;
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

    /// <summary>
    /// Receives the operational events of this server and its sessions (see <see cref="Diagnostics.NetServerEventListener"/>);
    /// null, the default, for none. Set it before <c>Start</c>.
    /// </summary>
    public Diagnostics.NetServerEventListener? EventListener { get; set; }

    /// <summary>The endpoint the server listens on; after <see cref="Start"/> it is the bound endpoint (port 0 becomes the real port).</summary>
    public EndPoint Endpoint { get; private set; }

    /// <summary>Number of sessions currently connected.</summary>
    public long ConnectedSessions => _connectedSessions.Read();

    /// <summary>Bytes accepted by sends of all sessions and not yet handed to the operating system (the sum of the sessions' <c>BytesPending</c>).</summary>
    public long BytesPending => _bytesPending.Read();

    /// <summary>Bytes sent by all sessions since the server started.</summary>
    public long BytesSent => _bytesSent.Read();

    /// <summary>Bytes received by all sessions since the server started.</summary>
    public long BytesReceived => _bytesReceived.Read();

    /// <summary>True between a successful <see cref="Start"/> and <see cref="Stop"/>.</summary>
    public bool IsStarted => _isStarted;

    /// <summary>True while the server accepts new connections.</summary>
    public bool IsAccepting => _isAccepting;

    /// <summary>Default for <see cref="OptionAcceptorBacklog"/>: 4096 (Linux caps it at <c>net.core.somaxconn</c>, 4096 by default).</summary>
    public const int DefaultAcceptorBacklog = 4096;

    /// <summary>
    /// Connections the server refused because it was at <see cref="OptionMaxSessions"/> since it started.
    /// </summary>
    public long RejectedSessions => Interlocked.Read(ref _rejectedSessions);

    /// <summary>
    /// Most sessions at once (default 0: no limit). A connection accepted beyond it is closed at once,
    /// before any session is created for it; <see cref="RejectedSessions"/> counts it and
    /// <see cref="OnError(SocketError)"/> reports <see cref="SocketError.TooManyOpenSockets"/>.
    /// Sessions still being set up count towards the limit.
    /// </summary>
    public int OptionMaxSessions
    {
        get => _maxSessions;
        set => _maxSessions = ThrowHelper.ValidateOption(value, zeroAllowed: true, nameof(OptionMaxSessions));
    }

    /// <summary>
    /// Length of the kernel's queue of connections waiting to be accepted (default
    /// <see cref="DefaultAcceptorBacklog"/>; NetCoreServer's was 1024). A connect storm larger than the
    /// queue makes the kernel drop connection attempts, which clients retry only after a second.
    /// </summary>
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
            PrepareProxyProtocol(Endpoint);
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
            _bytesSent.Reset();
            _bytesReceived.Reset();
            _listener = listener;
            var generation = Interlocked.Increment(ref _generation);
            _isStarted = true;
            _isAccepting = true;
            var onLoops = StartLoopAccept(listener, generation); // before a Stop can see the server started
            Volatile.Write(ref _lifecycle, LifecycleStarted);
            DiagnoseStarted();
            if (!onLoops)
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

        // Sessions accepted while the stop began finish their set-up (and then close themselves):
        // wait for the set-ups first, then for every session.
        var deadline = DateTime.UtcNow + StreamConnection.BlockingWaitTimeout;
        // Not from a hook, nor from a loop's thread: a set-up may wait in that loop's queue, behind this very call.
        if (!CallbackScope.IsActive && IoLoop.Current is null)
            _startsWait.WaitUntil(this, static s => Volatile.Read(ref s._starting) == 0, StreamConnection.BlockingWaitTimeout);
        for (var pass = 0; pass < 2; pass++)
        {
            foreach (var session in Sessions.Values)
            {
                var left = deadline - DateTime.UtcNow;
                if (session.CurrentConnection is { } connection && !connection.WaitForFinish(left > TimeSpan.Zero ? left : TimeSpan.Zero))
                    break;
            }
        }

        WaitForFinishingSessions(deadline);
        EndStop();
        return true;
    }

    /// <summary>Stops like <see cref="Stop"/> without blocking: completes after every session's OnDisconnected and OnStopped.</summary>
    /// <returns>True if stopped; false if not started.</returns>
    public async Task<bool> StopAsync()
    {
        if (!BeginStop())
            return false;
        await Volatile.Read(ref _startsDrained)!.Task.ConfigureAwait(false);
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

        // A session that left Sessions before the loops above looked may still be in its hooks.
        if (Volatile.Read(ref _sessionsFinishing) != 0)
        {
            var drained = new TaskCompletionSource<bool>(TaskCreationOptions.RunContinuationsAsynchronously);
            Interlocked.Exchange(ref _finishingDrained, drained);
            if (Volatile.Read(ref _sessionsFinishing) == 0)
                drained.TrySetResult(true);
            await drained.Task.ConfigureAwait(false);
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
        StopAccepting();
        OnStopping();

        var listener = _listener!;
        _listener = null;
        StopLoopAccept();
        listener.Dispose();
        AfterListenerClosed(Endpoint);

        AbortProxyPending();
        foreach (var session in Sessions.Values)
            session.CurrentConnection?.Abort(DisconnectReason.ServerStopped);
        return true;
    }

    private void EndStop()
    {
        _isStarted = false;
        DiagnoseStopped();
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

        WaitForFinishingSessions(deadline);
        return true;
    }

    /// <summary>
    /// Outside a hook, blocks until no session is between leaving <see cref="Sessions"/> and the
    /// end of its OnDisconnected hooks (one that left before a stop looked for it), or the deadline.
    /// </summary>
    private void WaitForFinishingSessions(DateTime deadline)
    {
        if (CallbackScope.IsActive)
            return;
        var left = deadline - DateTime.UtcNow;
        _finishingWait.WaitUntil(this, static s => Volatile.Read(ref s._sessionsFinishing) == 0, left > TimeSpan.Zero ? left : TimeSpan.Zero);
    }

    /// <summary>The session with the given id, or null if it is not connected.</summary>
    public TSession? FindSession(Guid id) => Sessions.TryGetValue(id, out var session) ? session : null;
}
