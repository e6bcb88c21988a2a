using NetServer.Diagnostics;
using System.Diagnostics;

namespace NetServer;

/// <summary>What the sessions ask of their server, the extension points of the concrete servers, and the server's hooks.</summary>
public abstract partial class StreamServer<TSession>
{
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

    void ISessionHost.CountSent(long bytes) => _bytesSent.Add(bytes);

    void ISessionHost.CountReceived(long bytes) => _bytesReceived.Add(bytes);

    void ISessionHost.CountMessagesReceived(int kind, long count)
    {
        if (kind == MessageMetrics.WebSocket)
            _wsMessagesReceived.Add(count);
        else
            _messagesReceived.Add(count);
    }

    void ISessionHost.CountMessagesSent(int kind, long count)
    {
        if (kind == MessageMetrics.WebSocket)
            _wsMessagesSent.Add(count);
        else
            _messagesSent.Add(count);
    }

    void ISessionHost.CountPending(long delta) => _bytesPending.Add(delta);

    void ISessionHost.SessionConnecting(StreamSession session) => OnConnecting((TSession)session);

    void ISessionHost.SessionConnected(StreamSession session) => OnConnected((TSession)session);

    void ISessionHost.SessionDisconnecting(StreamSession session) => OnDisconnecting((TSession)session);

    bool ISessionHost.JoinMulticast(StreamSession session) => _registry.Add((TSession)session);

    bool ISessionHost.LeaveMulticast(StreamSession session) => _registry.Remove((TSession)session, forever: false);

    void ISessionHost.SessionDisconnected(StreamSession session)
    {
        var typed = (TSession)session;

        // Counted before the session leaves Sessions: a Stop that no longer finds it there waits
        // for its hooks through this count instead.
        Interlocked.Increment(ref _sessionsFinishing);
        try
        {
            if (Sessions.TryRemove(typed.Id, out _))
                _connectedSessions.Decrement();
            _registry.Remove(typed, forever: true);
            SessionLeft();

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
        finally
        {
            if (Interlocked.Decrement(ref _sessionsFinishing) == 0)
            {
                _finishingWait.PulseAll();
                Volatile.Read(ref _finishingDrained)?.TrySetResult(true);
            }
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
