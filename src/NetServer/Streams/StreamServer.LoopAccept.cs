using NetServer.Service;

namespace NetServer;

/// <summary>
/// Accepting on the loops: a server whose service polls sockets (Linux, net10.0) has every loop
/// poll its listener and accept there (see <see cref="LoopAcceptor"/>); each connection then goes to
/// the next loop in turn, set up on that loop's thread when the hooks run on the loops, on the
/// thread pool when they do not. Elsewhere the runtime's engine accepts (AcceptLoopAsync).
/// </summary>
public abstract partial class StreamServer<TSession> : IAcceptHost
{
    private LoopAcceptor[]? _acceptors;

    /// <summary>False when no loop of the server's service polls sockets (the caller starts the runtime's accept loop).</summary>
    private bool StartLoopAccept(Socket listener, int generation)
    {
        if ((Service ?? IoService.Ambient) is not { } service)
            return false;
        _acceptors = LoopAcceptor.Start(service, listener, this, generation);
        return _acceptors is not null;
    }

    /// <summary>A stop: the loops let go of the listener.</summary>
    private void StopLoopAccept()
    {
        if (Interlocked.Exchange(ref _acceptors, null) is { } acceptors)
            LoopAcceptor.Stop(acceptors);
    }

    void IAcceptHost.Accepted(Socket socket, int generation)
    {
        if (!Admit(socket))
            return;
        Interlocked.Increment(ref _starting);
        var loop = OptionHooksOnLoop ? (Service ?? IoService.Ambient)?.NextLoop() : null;
        if (loop is not null && loop.IsCurrent)
            StartSessionOnLoop(socket, generation, loop);
        else if (loop is null || !loop.Post(new LoopSetUp(this, socket, generation, loop)))
            ThreadPool.UnsafeQueueUserWorkItem(s_startSession, (this, socket, generation)); // hooks on the thread pool, or the loop stopped
    }

    /// <summary>A set-up on a loop thread: a failure is reported, and the loop (its other connections, its accepting) goes on.</summary>
    private void StartSessionOnLoop(Socket socket, int generation, IoLoop loop)
    {
        try
        {
            StartSession(socket, generation, loop);
        }
        catch (Exception e)
        {
            ReportException(e);
        }
    }

    bool IAcceptHost.AcceptFailed(SocketError error, int generation)
    {
        if (!_isAccepting || generation != Volatile.Read(ref _generation))
            return false; // the server stopped
        if (!SocketErrors.IsDisconnect(error))
            ReportError(error);
        return true;
    }

    void IAcceptHost.LoopsAbandoned(Socket listener, int generation)
    {
        if (!_isAccepting || generation != Volatile.Read(ref _generation))
            return;
        try
        {
            listener.Blocking = true; // as the runtime's accepts expect (sockets accepted inherit it)
        }
        catch (ObjectDisposedException)
        {
            return; // stopped meanwhile
        }

        _ = AcceptLoopAsync(listener, generation);
    }

    /// <summary>A connection accepted on one loop and set up on another (its hooks run there).</summary>
    private sealed class LoopSetUp(StreamServer<TSession> server, Socket socket, int generation, IoLoop loop) : ILoopWork
    {
        public void Execute() => server.StartSessionOnLoop(socket, generation, loop);
    }
}
