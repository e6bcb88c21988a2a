
namespace NetServer;

/// <summary>
/// Accepting: one accept loop per listener hands each connection to the thread pool for its
/// set-up (so a slow OnConnected never delays accepting), under the session limit. A stop waits
/// for the set-ups already under way: no session starts, and no CreateSession runs, once
/// <see cref="Stop"/> has returned.
/// </summary>
public abstract partial class StreamServer<TSession>
{
    private static readonly WaitCallback s_startSession = static state =>
    {
        var (server, socket, generation) = ((StreamServer<TSession>, Socket, int))state!;
        server.StartSession(socket, generation);
    };

    private int _starting;                             // set-ups queued or running
    private WaitPoint _startsWait;                     // Stop waits here for _starting to reach 0
    private TaskCompletionSource<bool>? _startsDrained; // ... and StopAsync here
    private int _sessionsFinishing;                    // sessions out of Sessions whose OnDisconnected hooks still run
    private WaitPoint _finishingWait;                  // Stop waits here for _sessionsFinishing to reach 0
    private TaskCompletionSource<bool>? _finishingDrained; // ... and StopAsync here


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
                if (!Admit(socket))
                    continue;

                // Set up the session off the accept loop, so a slow OnConnected never delays accepting.
                Interlocked.Increment(ref _starting);
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

    private void StartSession(Socket socket, int generation, IoLoop? loop = null)
    {
        var admitted = true; // until a session owns the admission (it ends with the session)
        try
        {
            // A stop that began after the accept: no hooks, no CreateSession, only the socket closed.
            if (!_isAccepting || generation != Volatile.Read(ref _generation))
            {
                socket.Dispose();
                return;
            }

            if (StartSessionCore(socket, generation, loop))
                admitted = false;
        }
        finally
        {
            if (admitted)
                Interlocked.Decrement(ref _admittedSessions);
            if (Interlocked.Decrement(ref _starting) == 0)
                StartsDrained();
        }
    }

    /// <summary>Sets up the session of an accepted socket; false if none was created (the socket is closed).</summary>
    private bool StartSessionCore(Socket socket, int generation, IoLoop? loop)
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
            return false;
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

            return false;
        }

        // The connection starts held: a disconnect inside the connect hooks cannot raise
        // OnDisconnected before they have all returned.
        var connection = session.Attach(socket, BufferPool, reads: true, loop);
        if (ExpectsProxyHeader(connection, socket, out var refusal))
        {
            // The header comes first, read asynchronously; the set-up (and the hold) go with it.
            Interlocked.Increment(ref _starting);
            _ = ConnectBehindProxyAsync(connection, session, socket, generation);
            return true;
        }

        try
        {
            if (refusal is not null)
                RefuseProxy(connection, session, refusal);
            Connect(connection, session, generation);
        }
        finally
        {
            connection.Release();
        }

        return true;
    }

    /// <summary>
    /// Registers a session whose connection is still open, raises its connect hooks and opens it;
    /// the caller holds the connection and releases it afterwards.
    /// </summary>
    private void Connect(Connection connection, TSession session, int generation)
    {
        // A session takes multicasts from the moment it is in Sessions, its own and the server's
        // connect hooks included: what reaches it before it is ready (during those hooks; over
        // TLS, before the handshake ends) waits in its send queue, in order and under its send
        // limit, and leaves once it is ready. One refused before its hooks (PROXY) never enters.
        if (connection.IsOpen)
        {
            Sessions[session.Id] = session;
            if (session.AutoJoinMulticast)
                _registry.Add(session);
            _connectedSessions.Increment();
        }

        RunConnectHook(connection, static s => s.RaiseConnecting(), session);
        RunConnectHook(connection, static s => s.RaiseConnected(), session);

        // A stop that began during the set-up may have swept the sessions before this one was
        // among them: the session ends now, after its connect hooks, as if swept.
        if (!_isAccepting || generation != Volatile.Read(ref _generation))
            connection.Abort(DisconnectReason.ServerStopped);

        // The queue starts to flow: at once for a plain connection, after the handshake over TLS.
        connection.Open(startReceiving: true);
    }

    /// <summary>
    /// Takes a new connection in under <see cref="OptionMaxSessions"/>; one over it is closed at
    /// once, counted and reported.
    /// </summary>
    private bool Admit(Socket socket)
    {
        var admitted = Interlocked.Increment(ref _admittedSessions);
        var limit = _maxSessions;
        if (limit == 0 || admitted <= limit)
            return true;

        // Counted and reported before the close, so whoever sees the connection end can find why.
        Interlocked.Decrement(ref _admittedSessions);
        Interlocked.Increment(ref _rejectedSessions);
        try
        {
            DiagnoseRefused(socket, limit);
            ReportError(SocketError.TooManyOpenSockets);
        }
        finally
        {
            socket.Dispose();
        }

        return false;
    }

    /// <summary>A session ended: its admission frees a place under the limit.</summary>
    private void SessionLeft() => Interlocked.Decrement(ref _admittedSessions);

    /// <summary>A stop began: set-ups still under way are waited for (<see cref="Stop"/>, <see cref="StopAsync"/>).</summary>
    private void StopAccepting()
    {
        var drained = new TaskCompletionSource<bool>(TaskCreationOptions.RunContinuationsAsynchronously);
        Interlocked.Exchange(ref _startsDrained, drained);
        if (Volatile.Read(ref _starting) == 0)
            drained.TrySetResult(true);
    }

    private void StartsDrained()
    {
        _startsWait.PulseAll();
        Volatile.Read(ref _startsDrained)?.TrySetResult(true);
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
}
