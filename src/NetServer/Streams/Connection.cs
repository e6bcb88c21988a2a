using NetServer.Tls;
using System;
using System.Net.Sockets;
using System.Threading;
using System.Threading.Tasks;
using NetServer.Buffers;
using NetServer.Internal;

namespace NetServer.Streams;

/// <summary>
/// The engine behind one connected stream socket (TCP or Unix domain), from attach to close:
/// one receive loop, one send queue drained by one flusher at a time, limits, statistics, and
/// the close protocol. <see cref="StreamConnection"/> (sessions and clients) owns one per
/// connection, so a client that reconnects starts from a fresh engine and a late callback of the
/// old one cannot touch the new one.
/// </summary>
/// <remarks>
/// Lifetime is reference counted: the open socket, the running receive loop and the active
/// flusher each hold a reference. Closing the socket drops the first; the loops drop theirs when
/// they notice. Whoever drops the last runs <see cref="Finish"/>, which raises the final
/// <c>OnDisconnected</c> exactly once, after every other hook of this connection has returned.
/// </remarks>
#pragma warning disable CA1001 // Not IDisposable on purpose: the last reference runs Finish, which frees everything.
internal sealed partial class Connection
#pragma warning restore CA1001
{
    private const int StateOpen = 0;     // sends accepted, received bytes delivered
    private const int StateClosing = 1;  // graceful close: no new sends, queued bytes still flushing
    private const int StateClosed = 2;   // socket closed; waiting for the loops to let go
    private const int StateFinished = 3; // OnDisconnected has run

    private static readonly TimerCallback s_lingerExpired = static state =>
        ((Connection)state!).BeginClose(DisconnectReason.TimedOut, graceful: false, exception: null, lingerExpired: true);

    private readonly StreamConnection _owner;
    private readonly Socket _socket;
    private readonly BufferPool _pool;
    private int _state;
    private int _references;
    private bool _detached;    // Finish has started: the connection touches its owner no more, hooks aside
    private int _queueDrained; // a graceful close has sent everything queued
    private int _sideEnded;    // ... and ended our side (over TLS: after close_notify)
    private int _peerEnded;    // the peer's end of stream (or an error) has been read
    private volatile bool _reads; // a receive loop runs (or will): it can read the peer's end of stream
    private int _reason;
    private Exception? _exception;
    private Timer? _lingerTimer;
    private TaskCompletionSource<bool>? _finished;

    /// <param name="owner">The session or client.</param>
    /// <param name="socket">The connected socket; the connection owns it from now on.</param>
    /// <param name="pool">Where the connection's buffers come from.</param>
    /// <param name="held">
    /// Start with a hold (see <see cref="Release"/>): the creator raises the connect hooks before
    /// anything else may finish the connection.
    /// </param>
    /// <param name="reads">
    /// The creator will start the receive loop (sessions, asynchronously connected clients); a
    /// graceful close then waits for it to read the peer's end of stream.
    /// </param>
    /// <param name="layer">A layer (TLS) to run over the socket after a handshake, or null for plain bytes.</param>
    public Connection(StreamConnection owner, Socket socket, BufferPool pool, bool held, bool reads, SecureLayer? layer = null)
    {
        _references = held ? 2 : 1;
        _reads = reads;
        _owner = owner;
        _socket = socket;
        _pool = pool;
        _queue = new SendQueue(pool);
        _receiveBuffer = new PooledBuffer(pool, int.MaxValue);
        _layer = layer;

        // Opening holds the flusher role (and a reference) until Open: sends made in the connect
        // hooks (and, over TLS, during the handshake) only queue, so nothing reaches the peer
        // before the session is registered for multicasts; a client that sees the first bytes
        // is sure to get every later multicast.
        _flushing = true;
        _references++;
        if (layer is null)
        {
            // Every engine call on this socket is non-blocking; waits happen in async operations.
            socket.Blocking = false;
        }
        else
        {
            // The socket stays blocking because the stream over it (NetworkStream) refuses a
            // non-blocking socket; its async calls never block.
            _handshake = new TaskCompletionSource<bool>(TaskCreationOptions.RunContinuationsAsynchronously);
            _gate = new ReadGate();
        }
    }

    public Socket Socket => _socket;

    public bool IsOpen => Volatile.Read(ref _state) == StateOpen;

    public bool IsFinished => Volatile.Read(ref _state) == StateFinished;

    /// <summary>
    /// True once the connection has let go of everything (socket, loops, buffers) and only its
    /// final hooks remain, so a client may start its next connection (even from OnDisconnected).
    /// </summary>
    public bool IsDetached => Volatile.Read(ref _detached);

    public bool IsSocketClosed => Volatile.Read(ref _state) >= StateClosed;

    public DisconnectReason Reason => (DisconnectReason)Volatile.Read(ref _reason);

    public Exception? Exception => Volatile.Read(ref _exception);

    // --- Closing ---

    /// <summary>
    /// Graceful close: stop delivering received bytes and refuse new sends, send what is already
    /// queued, end our side, and read (discarding) until the peer ends its side, then close. The
    /// whole close takes at most <see cref="StreamConnection.OptionDisconnectTimeout"/>. Closing only
    /// once the peer is done keeps the kernel from resetting the connection under bytes we sent
    /// and it has not read yet, which would happen if we closed with its bytes unread.
    /// Returns false if the connection was already closing.
    /// </summary>
    public bool Close(DisconnectReason reason) => BeginClose(reason, graceful: true, exception: null);

    /// <summary>Closes the socket now; queued bytes are dropped. Returns false if already closed.</summary>
    public bool Abort(DisconnectReason reason, Exception? exception = null) => BeginClose(reason, graceful: false, exception);

    /// <param name="reason">Why; the first reason recorded wins.</param>
    /// <param name="graceful">Flush what is queued before closing.</param>
    /// <param name="exception">The hook exception behind a <see cref="DisconnectReason.HandlerException"/>.</param>
    /// <param name="lingerExpired">
    /// The graceful close ran out of time: only then is the earlier reason replaced (by
    /// <see cref="DisconnectReason.TimedOut"/>), because queued bytes are now dropped.
    /// </param>
    private bool BeginClose(DisconnectReason reason, bool graceful, Exception? exception, bool lingerExpired = false)
    {
        // Hold the connection from before the state changes until OnDisconnecting has run and the
        // reason is recorded: once the state says closing, the loops may finish the close at once,
        // and OnDisconnected must neither overtake OnDisconnecting nor miss the reason.
        if (!TryAddReference())
            return false;

        int previous;
        do
        {
            previous = Volatile.Read(ref _state);
            if (previous >= StateClosed || (previous == StateClosing && graceful) || (lingerExpired && previous != StateClosing))
            {
                ReleaseReference();
                return false;
            }
        }
        while (Interlocked.CompareExchange(ref _state, graceful ? StateClosing : StateClosed, previous) != previous);

        if (lingerExpired && Volatile.Read(ref _queueDrained) == 0)
            Volatile.Write(ref _reason, (int)reason); // queued bytes are being dropped: say so
        else if (Interlocked.CompareExchange(ref _reason, (int)reason, (int)DisconnectReason.None) == (int)DisconnectReason.PeerClosed
            && reason == DisconnectReason.ConnectionReset && previous == StateClosing && Volatile.Read(ref _queueDrained) == 0)
        {
            // An end of stream followed by a reset while we still flush was a reset all along: the
            // kernel hands a reset's error to one call only (send or receive, whichever asks
            // first), and the other sees a plain end of stream. What we still owed is lost: say so.
            Interlocked.CompareExchange(ref _reason, (int)DisconnectReason.ConnectionReset, (int)DisconnectReason.PeerClosed);
        }
        if (exception is not null)
            Interlocked.CompareExchange(ref _exception, exception, null);

        try
        {
            if (previous == StateOpen)
                RaiseDisconnecting();

            if (!graceful)
            {
                CloseSocket();
            }
            else if (_layer is not null && !IsSecured && !HasQueuedBytes())
            {
                // Before the handshake succeeds nothing has reached the peer; with nothing queued
                // for it either, closing the socket abandons the handshake at once. (With bytes
                // queued, the handshake goes on, raising no hook, so they still go out as over
                // TCP.) Read after the state changed: a handshake that succeeded before that saw
                // the close and raised no OnHandshaked, and then this close flushes as usual.
                CompleteGracefulClose();
            }
            else
            {
                if (FailRoomWaitersAndCheckDrained())
                    QueueDrained();

                // Still waiting for the queue or for the peer: bound the wait.
                var timeout = _owner.OptionDisconnectTimeout;
                if (Volatile.Read(ref _state) == StateClosing && timeout != Timeout.InfiniteTimeSpan)
                    Interlocked.CompareExchange(ref _lingerTimer, new Timer(s_lingerExpired, this, timeout, Timeout.InfiniteTimeSpan), null);
            }
        }
        finally
        {
            ReleaseReference();
        }

        return true;
    }

    /// <summary>
    /// A graceful close has sent everything queued (called by the flusher giving up its role, or by
    /// <see cref="BeginClose"/> when nothing was queued): end our side, then close once the peer has
    /// ended its side too, at once if no receive loop is there to read it.
    /// </summary>
    private void QueueDrained()
    {
        if (Interlocked.Exchange(ref _queueDrained, 1) != 0 || Volatile.Read(ref _state) != StateClosing)
            return;
        if (_stream is not null)
        {
            StartLayerShutdown(); // ends the layer's side first (TLS close_notify), then continues below
            return;
        }

        EndOurSide();
    }

    /// <summary>Shuts down the socket's send side; closes at once if the peer's side has ended too (or nobody reads it).</summary>
    private void EndOurSide()
    {
        try
        {
            _socket.Shutdown(SocketShutdown.Send);
        }
        catch (SocketException)
        {
            // The peer already reset the connection: the close below finds nothing left to end.
        }
        catch (ObjectDisposedException)
        {
            // Closed meanwhile by an abort, which also finished the close.
        }

        Interlocked.Exchange(ref _sideEnded, 1);
        if (Volatile.Read(ref _peerEnded) != 0 || !_reads)
            CompleteGracefulClose();
    }

    /// <summary>The receive loop read the peer's end of stream (or an error): close if our side is done too.</summary>
    private void PeerEnded()
    {
        Interlocked.Exchange(ref _peerEnded, 1);
        if (Volatile.Read(ref _sideEnded) != 0)
            CompleteGracefulClose();
    }

    /// <summary>Closing → Closed (whoever gets here first).</summary>
    private void CompleteGracefulClose()
    {
        if (Interlocked.CompareExchange(ref _state, StateClosed, StateClosing) == StateClosing)
            CloseSocket();
    }

    /// <summary>Shuts the socket down and closes it; releases the reference the open socket held.</summary>
    private void CloseSocket()
    {
        try
        {
            _socket.Shutdown(SocketShutdown.Both);
        }
        catch (SocketException)
        {
            // Expected when the peer already reset the connection: there is nothing left to shut down.
        }
        catch (ObjectDisposedException)
        {
            // A socket closed by the runtime under us is already as closed as it gets.
        }

        _socket.Dispose();
        FailAllWaiters();
        ReleaseReference();
    }

    // --- Lifetime ---

    /// <summary>Takes a reference unless the connection has already finished.</summary>
    private bool TryAddReference()
    {
        while (true)
        {
            var current = Volatile.Read(ref _references);
            if (current == 0)
                return false;
            if (Interlocked.CompareExchange(ref _references, current + 1, current) == current)
                return true;
        }
    }

    /// <summary>Ends the hold a connection is created with (see the constructor).</summary>
    public void Release() => ReleaseReference();

    private void ReleaseReference()
    {
        if (Interlocked.Decrement(ref _references) == 0)
            Finish();
    }

    /// <summary>Runs once, after the socket is closed and both loops have let go.</summary>
    private void Finish()
    {
        _lingerTimer?.Dispose();
        _receiveBuffer.Dispose();
        _receiver?.Dispose();
        _receiver = null;
        _stream?.Dispose();
        ReturnBlockingBuffer();
        ReturnAsyncSender();
        long dropped;
        lock (_sendLock)
            dropped = _queue.Clear();
        if (dropped != 0)
            AccountUnsent(-dropped);

        Volatile.Write(ref _detached, true);
        _owner.OnConnectionFinished(this);

        lock (this)
        {
            Volatile.Write(ref _state, StateFinished);
            Monitor.PulseAll(this);
        }

        _finished?.TrySetResult(true);
    }

    /// <summary>
    /// Blocks until <see cref="Finish"/> has run or <paramref name="timeout"/> passes. Callers inside a
    /// NetServer hook must not wait (see <see cref="CallbackScope"/>); they get false at once.
    /// </summary>
    public bool WaitForFinish(TimeSpan timeout) => WaitUntil(static c => c.IsFinished, timeout);

    /// <summary>
    /// Blocks until <paramref name="done"/> holds (whatever makes it true pulses this object) or
    /// <paramref name="timeout"/> passes; inside a NetServer hook it does not wait.
    /// </summary>
    private bool WaitUntil(Func<Connection, bool> done, TimeSpan timeout)
    {
        if (done(this))
            return true;
        if (CallbackScope.IsActive)
            return false;

        var deadline = DateTime.UtcNow + timeout;
        lock (this)
        {
            while (!done(this))
            {
                var left = deadline - DateTime.UtcNow;
                if (left <= TimeSpan.Zero || !Monitor.Wait(this, left))
                    return done(this);
            }
        }

        return true;
    }

    /// <summary>Completes after <see cref="Finish"/> has run.</summary>
    public Task WhenFinished()
    {
        if (IsFinished)
            return Task.CompletedTask;
        var completion = Volatile.Read(ref _finished);
        if (completion is null)
        {
            completion = new TaskCompletionSource<bool>(TaskCreationOptions.RunContinuationsAsynchronously);
            completion = Interlocked.CompareExchange(ref _finished, completion, null) ?? completion;
        }

        // Finish may have run between the check and the publication above.
        if (IsFinished)
            completion.TrySetResult(true);
        return completion.Task;
    }

    // --- Hooks: every user hook runs inside a callback scope; one that throws ends the connection. ---

    private void HandlerFailed(Exception exception) => Abort(DisconnectReason.HandlerException, exception);

    private void RaiseDisconnecting()
    {
        CallbackScope.Enter();
        try
        {
            _owner.InvokeDisconnecting();
        }
        catch (Exception e)
        {
            Interlocked.CompareExchange(ref _exception, e, null);
        }
        finally
        {
            CallbackScope.Exit();
        }
    }

    /// <summary>
    /// Reports a send refused for lack of room through OnError, unless the connection has already
    /// finished: the reference held meanwhile keeps OnDisconnected from overtaking the report.
    /// </summary>
    public void ReportSendRefused()
    {
        if (!TryAddReference())
            return;
        try
        {
            RaiseError(SocketError.NoBufferSpaceAvailable);
        }
        finally
        {
            ReleaseReference();
        }
    }

    private void RaiseError(SocketError error)
    {
        CallbackScope.Enter();
        try
        {
            _owner.InvokeError(error);
        }
        catch (Exception e)
        {
            HandlerFailed(e);
        }
        finally
        {
            CallbackScope.Exit();
        }
    }

    /// <summary>Ends the connection because of a socket error; unexpected errors are reported through OnError first.</summary>
    private void Fail(SocketError error)
    {
        if (SocketErrors.IsDisconnect(error) || IsSocketClosed)
        {
            Abort(SocketErrors.ToReason(error));
            return;
        }

        RaiseError(error);
        Abort(SocketErrors.ToReason(error));
    }
}
