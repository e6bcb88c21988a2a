namespace NetServer.Service;

/// <summary>
/// A client's TCP connect whose completion a loop's poller reports: a non-blocking <c>connect</c>,
/// then a wait until the socket is writable. A socket connected through the runtime's async
/// engine (<c>ConnectAsync</c>) stays registered with that engine for good, so every later event
/// of a connection pinned to a loop would also wake the runtime's socket thread and a thread-pool
/// worker; connected this way, the socket only ever meets the loop's poller.
/// </summary>
internal sealed class LoopConnect : IPollOwner
{
    private static readonly Action<object?> s_writable = static state => ((LoopConnect)state!)._done.TrySetResult(true);

    private readonly IoLoop _loop;
    private TaskCompletionSource<bool> _done = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private PollRegistration? _registration;
    private int _aborted;

    private LoopConnect(IoLoop loop) => _loop = loop;

    /// <summary>The loop whose poller waits for the connect (the connection is then pinned to it).</summary>
    public IoLoop Loop => _loop;

    /// <summary>A connect through <paramref name="loop"/> when it can take one to <paramref name="endpoint"/> (an IP endpoint, a loop that polls sockets); else null.</summary>
    public static LoopConnect? TryCreate(IoLoop loop, EndPoint endpoint) =>
        endpoint.AddressFamily is AddressFamily.InterNetwork or AddressFamily.InterNetworkV6 && loop.PollsSockets ? new LoopConnect(loop) : null;

    /// <summary>
    /// Connects <paramref name="socket"/> (left blocking, as a connected socket of the default
    /// transport is); the result says how it ended. <see cref="Abort"/> ends the wait with
    /// <see cref="SocketError.OperationAborted"/> (the caller disposes the socket).
    /// </summary>
    public async ValueTask<SocketResult> ConnectAsync(Socket socket, EndPoint endpoint)
    {
        if (Volatile.Read(ref _aborted) != 0)
            return new SocketResult(0, SocketError.OperationAborted); // cancelled before it began
        socket.Blocking = false;
        try
        {
            socket.Connect(endpoint);
            return Connected(socket);
        }
        catch (SocketException e) when (e.SocketErrorCode is SocketError.WouldBlock or SocketError.InProgress)
        {
            // Under way. A nearby peer (loopback, a LAN) has usually answered by now: then the
            // connect ends here, without a registration and two thread hops for the poller's signal.
            // Writable (or failed) first: SO_ERROR read while the connect is under way says 0, and a
            // reset landing after that read would leave the socket writable, taken for connected.
            if ((socket.Poll(0, SelectMode.SelectWrite) || socket.Poll(0, SelectMode.SelectError)) && Ended(socket) is { } early)
                return Volatile.Read(ref _aborted) != 0 ? new SocketResult(0, SocketError.OperationAborted) : early;
        }
        catch (SocketException e)
        {
            return new SocketResult(0, e.SocketErrorCode);
        }

        var registration = _loop.Register(socket, this, inline: false);
        if (registration is null)
            return new SocketResult(0, SocketError.OperationAborted); // the loop stopped meanwhile
        try
        {
            // Published before the abort flag is read (full fences both sides): an Abort, or a stop
            // of the service, either sees the registration or is seen here.
            Interlocked.Exchange(ref _registration, registration);
            if (Volatile.Read(ref _aborted) != 0 || !_loop.PollsSockets)
                registration.Close();
            while (true)
            {
                if (registration.WaitWritable(s_writable, this))
                    await _done.Task.ConfigureAwait(false);
                if (registration.IsClosed)
                    return new SocketResult(0, SocketError.OperationAborted);

                if (Ended(socket) is { } ended)
                    return ended;
                _done = new TaskCompletionSource<bool>(TaskCreationOptions.RunContinuationsAsynchronously); // writable before the end (not expected): again
            }
        }
        finally
        {
            IoLoop.Unregister(registration);
        }
    }

    /// <summary>Ends the connect (a Disconnect, a cancellation): its wait completes as aborted.</summary>
    public void Abort()
    {
        Interlocked.Exchange(ref _aborted, 1);
        Volatile.Read(ref _registration)?.Close();
    }

    /// <summary>The service stopped while connecting: the wait ends (aborted).</summary>
    void IPollOwner.Abandon() => Abort();

    /// <summary>How the connect ended (an error, or connected), or null while it is under way.</summary>
    private static SocketResult? Ended(Socket socket)
    {
        var error = (SocketError)(int)socket.GetSocketOption(SocketOptionLevel.Socket, SocketOptionName.Error)!;
        if (error != SocketError.Success)
            return new SocketResult(0, error);
        if (socket.Connected) // also brings the runtime's view of the socket up to date
            return Connected(socket);
        return null;
    }

    private static SocketResult Connected(Socket socket)
    {
        socket.Blocking = true;
        return new SocketResult(0, SocketError.Success);
    }
}
