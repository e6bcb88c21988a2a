using NetServer.Tls;

namespace NetServer.Streams;

/// <summary>
/// The engine behind one connected stream socket (TCP or Unix domain, plain or under a secure
/// layer), from attach to close: one receive loop, one send queue drained by one flusher at a
/// time, limits, statistics, and the close protocol. <see cref="StreamConnection"/> (sessions and
/// clients) owns one per connection, so a client that reconnects starts from a fresh engine and a
/// late callback of the old one cannot touch the new one.
/// </summary>
/// <remarks>
/// <para>Lifetime is reference counted: the open socket, the running receive loop and the active
/// flusher each hold a reference. Closing the socket drops the first; the loops drop theirs when
/// they notice. Whoever drops the last runs <see cref="Finish"/>, which raises the final
/// <c>OnDisconnected</c> exactly once, after every other hook of this connection has returned.</para>
/// <para>The parts: Close (the close protocol), Hooks (raising user hooks), Receive (the receive
/// loop, retained input, pause and resume), Send and Flush (the send queue and its flusher),
/// Handshake, LayerReceive and LayerSend (the same engine over a secure layer's stream), Idle (the
/// idle timeout on the shared clock).</para>
/// </remarks>
[System.Diagnostics.CodeAnalysis.SuppressMessage("Design", "CA1001", Justification = "Not IDisposable on purpose: the last reference runs Finish, which frees everything.")]
internal sealed partial class Connection
{
    private const int StateOpen = 0;     // sends accepted, received bytes delivered
    private const int StateClosing = 1;  // graceful close: no new sends, queued bytes still flushing
    private const int StateClosed = 2;   // socket closed; waiting for the loops to let go
    private const int StateFinished = 3; // OnDisconnected has run

    private readonly StreamConnection _owner;
    private readonly Socket _socket;
    private readonly BufferPool _pool;
    private int _state;
    private int _references;
    private bool _detached;    // Finish has started: the connection touches its owner no more, hooks aside
    private int _reason;
    private Exception? _exception;
    private TaskCompletionSource<bool>? _finished;
    private WaitPoint _finishWait;

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
            // The socket is blocking because the stream over it (NetworkStream) refuses a
            // non-blocking socket (its async calls never block); said here, since a socket
            // accepted from a listener the loops polled comes non-blocking. Pinned to a loop,
            // the loop's own stream takes it non-blocking again (PinTo).
            socket.Blocking = true;
            _handshake = new TaskCompletionSource<bool>(TaskCreationOptions.RunContinuationsAsynchronously);
            _gate = new ReadGate();
        }
    }

    public Socket Socket => _socket;

    public StreamConnection Owner => _owner;

    /// <summary>Where the connection's buffers come from.</summary>
    public BufferPool Pool => _pool;

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

    /// <summary>Ends the hold a connection is created with (see the constructor), or one taken with <see cref="TryHold"/>.</summary>
    public void Release() => ReleaseReference();

    /// <summary>Holds the connection (its OnDisconnected waits) while a hook runs outside the engine's loops; false once it finished.</summary>
    public bool TryHold() => TryAddReference();

    private void ReleaseReference()
    {
        if (Interlocked.Decrement(ref _references) == 0)
            Finish();
    }

    /// <summary>Runs once, after the socket is closed and both loops have let go.</summary>
    private void Finish()
    {
        StopTimers();
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

        Volatile.Write(ref _state, StateFinished);
        _finishWait.PulseAll();
        _finished?.TrySetResult(true);
    }

    /// <summary>
    /// Blocks until <see cref="Finish"/> has run or <paramref name="timeout"/> passes. Callers inside a
    /// NetServer hook, or on the connection's own loop, must not wait (see <see cref="MustNotWait"/>); they get false at once.
    /// </summary>
    public bool WaitForFinish(TimeSpan timeout)
    {
        if (IsFinished)
            return true;
        return !MustNotWait && _finishWait.WaitUntil(this, static c => c.IsFinished, timeout);
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
}
