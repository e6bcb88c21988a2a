
using NetServer.Service;

namespace NetServer.Udp;

/// <summary>
/// The engine behind one open UDP socket, from bind to close: one receive loop, one send queue
/// drained by one flusher at a time, limits and statistics. <see cref="UdpPeer"/> (servers and
/// clients) owns one per Start/Connect, so a restart begins with a fresh engine and a late
/// callback of the old one cannot touch the new one.
/// </summary>
/// <remarks>
/// Lifetime is reference counted, as for stream connections: the open socket, the running receive
/// loop and the active flusher each hold a reference. <see cref="Close"/> drops the socket's; the
/// loops drop theirs when they notice. Whoever drops the last runs <see cref="Finish"/>, which
/// raises the owner's final hook (OnStopped, OnDisconnected) after every other hook of this socket
/// has returned.
/// </remarks>
#pragma warning disable CA1001 // Not IDisposable on purpose: the last reference runs Finish, which frees everything.
internal sealed partial class DatagramChannel
#pragma warning restore CA1001
{
    private const int Opening = 0;
    private const int Opened = 1;
    private const int AbandonedWhileOpening = 2;

    private readonly UdpPeer _owner;
    private readonly Socket _socket;
    private readonly BufferPool _pool;
    private readonly DatagramTransport _transport;
    private readonly bool _dedicatedThread;
    private readonly PollRegistration? _registration; // the loop that polls the socket, or null (the default or dedicated-thread mode)
    private int _closed;
    private int _opened; // Opening, Opened, or AbandonedWhileOpening: see FinishOpening
    private int _references = 1; // the open socket
    private volatile bool _finished;
    private TaskCompletionSource<bool>? _whenFinished;

    /// <param name="owner">The server or client.</param>
    /// <param name="socket">The bound (and, for a client, possibly connected) socket; the channel owns it from now on.</param>
    /// <param name="pool">Where the channel's buffers come from.</param>
    public DatagramChannel(UdpPeer owner, Socket socket, BufferPool pool)
    {
        _owner = owner;
        _socket = socket;
        _pool = pool;
        _transport = new DatagramTransport(socket);
        _queue = new DatagramQueue(pool);
        _waiters = new WaiterQueue(_sendLock);

        // Fixed for the socket's life: one asynchronous call would switch the runtime's socket to its
        // non-blocking emulation, which makes every blocking call as slow as an asynchronous one.
        _dedicatedThread = owner.OptionDedicatedThread;
        _registration = PinToLoop(owner, socket);
    }

    public Socket Socket => _socket;

    public bool IsOpen => Volatile.Read(ref _closed) == 0;

    public bool IsFinished => _finished;

    /// <summary>True on the thread of the loop that runs this socket: a queued send leaves from this very thread later, so it cannot be waited for here.</summary>
    public bool IsOnOwnLoop => _registration is { } registration && registration.Loop.IsCurrent;

    /// <summary>Whether a loop of an <see cref="IoService"/> polls this socket.</summary>
    public bool IsPolledByLoop => _registration is not null;

    /// <summary>
    /// The owner has stored the channel and raised its start hook (OnStarted, OnConnected): a loop
    /// that stops from now on closes the socket at once, and one that stopped before (its stop
    /// raced the registration, made before the owner even held the channel) closes it now. Closed
    /// during the start, the socket would leave the owner's lifecycle half way, or, closed before
    /// the registration was stored, never leave the poller, whose reference on the handle keeps the
    /// socket's close (and the loop's stop with it) waiting.
    /// </summary>
    public void FinishOpening()
    {
        if (Interlocked.CompareExchange(ref _opened, Opened, Opening) == AbandonedWhileOpening)
            Close();
    }

    /// <summary>
    /// Closes the socket: the receive loop and a pending send end with an abort, queued datagrams
    /// are dropped, parked senders are refused. Returns false if the channel was already closed.
    /// </summary>
    public bool Close()
    {
        if (Interlocked.Exchange(ref _closed, 1) != 0)
            return false;
        if (_registration is { } registration)
            IoLoop.Unregister(registration); // first: a registered socket's dispose would wait for the loop to let go of it
        _socket.Dispose(); // also wakes a dedicated thread blocked in a receive or a send
        WakeReceiveThread();
        FailRoomWaiters();
        ReleaseReference();
        return true;
    }

    // --- Lifetime ---

    /// <summary>Takes a reference unless the channel has already finished.</summary>
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

    private void ReleaseReference()
    {
        if (Interlocked.Decrement(ref _references) == 0)
            Finish();
    }

    /// <summary>Runs once, after the socket is closed and both loops have let go.</summary>
    private void Finish()
    {
        _transport.Dispose();
        FreeLoopResources();
        DropQueue();
        _owner.OnChannelFinished(this);

        lock (this)
        {
            _finished = true;
            Monitor.PulseAll(this);
        }

        Volatile.Read(ref _whenFinished)?.TrySetResult(true);
    }

    /// <summary>
    /// Blocks until <see cref="Finish"/> has run or <paramref name="timeout"/> passes. Inside a
    /// NetServer hook, or on the thread of the loop that polls the socket, it does not wait (that may be what the channel waits for) and returns false.
    /// </summary>
    public bool WaitForFinish(TimeSpan timeout)
    {
        if (_finished)
            return true;
        if (CallbackScope.IsActive || IsOnOwnLoop)
            return false; // a hook, or other work on the socket's loop: what the channel waits for may be queued behind it

        var deadline = DateTime.UtcNow + timeout;
        lock (this)
        {
            while (!_finished)
            {
                var left = deadline - DateTime.UtcNow;
                if (left <= TimeSpan.Zero || !Monitor.Wait(this, left))
                    return _finished;
            }
        }

        return true;
    }

    /// <summary>Completes after <see cref="Finish"/> has run.</summary>
    public Task WhenFinished()
    {
        if (_finished)
            return Task.CompletedTask;
        var completion = Volatile.Read(ref _whenFinished);
        if (completion is null)
        {
            completion = new TaskCompletionSource<bool>(TaskCreationOptions.RunContinuationsAsynchronously);
            completion = Interlocked.CompareExchange(ref _whenFinished, completion, null) ?? completion;
        }

        // Finish may have run between the check and the publication above.
        if (_finished)
            completion.TrySetResult(true);
        return completion.Task;
    }

    // --- Hooks: every user hook runs inside a callback scope; one that throws is reported, and the socket goes on. ---

    private void RaiseError(SocketError error)
    {
        CallbackScope.Enter();
        try
        {
            _owner.InvokeError(error);
        }
        catch (Exception e)
        {
            _owner.ReportHandlerFailure(e);
        }
        finally
        {
            CallbackScope.Exit();
        }
    }

    /// <summary>
    /// Reports an error found by a sender (a datagram refused for lack of room, or too large to
    /// send) through OnError, unless the channel has already finished: the reference held meanwhile
    /// keeps the final hook from overtaking the report.
    /// </summary>
    public void ReportError(SocketError error)
    {
        if (!TryAddReference())
            return;
        try
        {
            RaiseError(error);
        }
        finally
        {
            ReleaseReference();
        }
    }
}
