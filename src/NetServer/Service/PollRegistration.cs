using System.Threading.Tasks.Sources;

namespace NetServer.Service;

/// <summary>What a socket registered with a loop's poller hears when the loop gives it up.</summary>
internal interface IPollOwner
{
    /// <summary>The loop stopped (its service stopped): the connection must end.</summary>
    void Abandon();
}

/// <summary>
/// One socket registered, edge-triggered, with one loop's poller: readiness to read and to write,
/// each with at most one waiter (the connection's receive loop; its flusher). The loop signals
/// readiness; a signal that finds no waiter is kept, so the next wait completes at once.
/// </summary>
/// <remarks>
/// Waiters are completed on the loop thread (hooks on the loop) or on the thread pool (hooks on
/// the thread pool). A closed registration completes its waiters with
/// <see cref="SocketError.OperationAborted"/>, always on the thread pool, so a close made inside
/// some hook never runs another connection's loop inside it.
/// </remarks>
internal sealed class PollRegistration : IValueTaskSource<SocketResult>, ILoopWork
{
    /// <summary>Reads a reader makes in a row on the loop thread, none waiting, before it lets the loop go round (see <see cref="ShouldYield"/>).</summary>
    private const int ReadsPerTurn = 16;

    private const int Idle = 0;
    private const int Ready = 1;
    private const int Waiting = 2;
    private const int Closed = 3;

    private static readonly SocketResult s_ready = new(0, SocketError.Success);
    private static readonly SocketResult s_aborted = new(0, SocketError.OperationAborted);

    private readonly bool _hooksOnLoop;
    private volatile bool _handshaking;
    private ManualResetValueTaskSourceCore<SocketResult> _read;
    private int _readState;
    private int _writeState;
    // A datagram socket has no end: a hang-up it reports is a shutdown of its own receive side
    // (Socket.Shutdown), after which Linux still queues datagrams and a read that finds none says
    // EAGAIN. Taken for an end, it made every wait complete at once: the reader spun on the loop.
    private readonly bool _datagrams;
    private volatile bool _ended; // the peer's end of stream (or a hang-up) was reported: reads never wait again
    private Action<object?>? _writeCallback;
    private object? _writeArgument;
    private int _readsInTurn; // reads in a row on the loop thread since the reader last waited or yielded

    public PollRegistration(IoLoop loop, IPollOwner owner, System.Runtime.InteropServices.SafeHandle handle, bool inline, bool datagrams = false)
    {
        Loop = loop;
        Owner = owner;
        Handle = handle;
        Fd = (int)handle.DangerousGetHandle();
        _hooksOnLoop = inline;
        _datagrams = datagrams;
    }

    /// <summary>The loop whose thread polls this socket.</summary>
    public IoLoop Loop { get; }

    public IPollOwner Owner { get; }

    /// <summary>The socket's handle; the poller holds a reference on it while registered.</summary>
    public System.Runtime.InteropServices.SafeHandle Handle { get; }

    public int Fd { get; }

    /// <summary>Whether waiters complete on the loop thread (hooks on the loop, and no handshake under way).</summary>
    public bool Inline => _hooksOnLoop && !_handshaking;

    /// <summary>While true (a TLS handshake), waiters complete on the thread pool whatever the hooks' choice.</summary>
    public bool Handshaking
    {
        set => _handshaking = value;
    }

    /// <summary>The poller that holds it (a LoopPoller on net10.0), so a late removal finds it after a restart.</summary>
    public object? Poller { get; set; }

    /// <summary>The poller's key for this registration (slot and generation), set when added.</summary>
    public ulong Key { get; set; }

    public bool IsClosed => Volatile.Read(ref _readState) == Closed;

    /// <summary>Completes when the socket may have data (or an end, or an error) to read.</summary>
    public ValueTask<SocketResult> WaitReadableAsync()
    {
        var state = Volatile.Read(ref _readState);
        if (state == Closed)
            return new ValueTask<SocketResult>(s_aborted);
        if (state == Ready && Interlocked.CompareExchange(ref _readState, Idle, Ready) == Ready)
            return new ValueTask<SocketResult>(s_ready);
        if (_ended)
        {
            // Edge-triggered: the end came with the last edge, and a read that took the data
            // before it (a partial read) leaves it unread with no edge to come. Read on until it.
            return new ValueTask<SocketResult>(s_ready);
        }

        _read.Reset();
        _read.RunContinuationsAsynchronously = !Inline;
        switch (Interlocked.CompareExchange(ref _readState, Waiting, Idle))
        {
            case Idle:
                _readsInTurn = 0;
                return new ValueTask<SocketResult>(this, _read.Version);
            case Ready when Interlocked.CompareExchange(ref _readState, Idle, Ready) == Ready:
                return new ValueTask<SocketResult>(s_ready);
            default:
                return new ValueTask<SocketResult>(s_aborted);
        }
    }

    /// <summary>
    /// Before a read that will not wait for a signal: true when the reader has had its turn on the
    /// loop thread (<see cref="ReadsPerTurn"/> reads in a row, none waiting) and must let the loop go
    /// round first (<see cref="YieldReaderAsync"/>). A reader reads until a read comes back short,
    /// inside the loop's turn: a peer that sends faster than its bytes are read would otherwise keep
    /// the loop in this socket's reads for as long as it sent, and the loop's other sockets, its
    /// posted work and this very socket's writable signal (a send waiting for room) with it.
    /// </summary>
    public bool ShouldYield()
    {
        if (!Loop.IsCurrent || ++_readsInTurn < ReadsPerTurn)
            return false;
        _readsInTurn = 0;
        return true;
    }

    /// <summary>
    /// Completes (as if readable; the socket may still hold bytes) on the loop thread once the loop
    /// has run the work queued before it and polled its sockets again (see <see cref="ShouldYield"/>).
    /// </summary>
    public ValueTask<SocketResult> YieldReaderAsync()
    {
        // The read state stays as it is (no signal is taken or waited for), so nothing else completes _read meanwhile.
        _read.Reset();
        _read.RunContinuationsAsynchronously = false;
        return Loop.Post(this) ? new ValueTask<SocketResult>(this, _read.Version) : new ValueTask<SocketResult>(s_ready);
    }

    /// <summary>The loop came round to a yielded reader (see <see cref="YieldReaderAsync"/>): it reads on, here.</summary>
    void ILoopWork.Execute() => _read.SetResult(s_ready);

    /// <summary>
    /// After a partial write: true when <paramref name="callback"/> will run once the socket is
    /// writable (or closed); false when it may be writable already (write again now).
    /// </summary>
    public bool WaitWritable(Action<object?> callback, object? argument)
    {
        var state = Volatile.Read(ref _writeState);
        if (state == Closed)
            return false;
        if (state == Ready && Interlocked.CompareExchange(ref _writeState, Idle, Ready) == Ready)
            return false;

        _writeCallback = callback;
        _writeArgument = argument;
        switch (Interlocked.CompareExchange(ref _writeState, Waiting, Idle))
        {
            case Idle:
                return true;
            case Ready:
                Interlocked.CompareExchange(ref _writeState, Idle, Ready);
                return false;
            default:
                return false;
        }
    }

    /// <summary>
    /// Ends a pending read wait early (its canceller fired): it completes on the thread pool as if
    /// the socket were readable, and the reader looks at its token. Nothing when no read waits.
    /// </summary>
    public void WakeReader()
    {
        if (Interlocked.CompareExchange(ref _readState, Idle, Waiting) == Waiting)
        {
            _read.RunContinuationsAsynchronously = true; // not inside the canceller's call
            _read.SetResult(s_ready);
        }
    }

    /// <summary>
    /// Ends a pending write wait early (its canceller fired): its callback runs on the thread pool
    /// as if the socket were writable, and the writer looks at its token. Nothing when no write waits.
    /// </summary>
    public void WakeWriter()
    {
        if (Interlocked.CompareExchange(ref _writeState, Idle, Waiting) == Waiting)
            RunWriteCallback(inline: false);
    }

    /// <summary>
    /// On the loop thread: the poller found the socket readable and/or writable (an error or
    /// hang-up counts as both); <paramref name="ended"/>: the peer ended its side, or the connection hung up.
    /// </summary>
    public void Signal(bool readable, bool writable, bool ended)
    {
        if (ended && !_datagrams)
            _ended = true;
        if (readable && Wake(ref _readState))
            _read.SetResult(s_ready); // inline: the receive loop (and its hooks) runs here

        if (writable && Wake(ref _writeState))
            RunWriteCallback(Inline);
    }

    /// <summary>Ends the registration: waiters complete (aborted) on the thread pool; later waits fail at once.</summary>
    public void Close()
    {
        if (Interlocked.Exchange(ref _readState, Closed) == Waiting)
        {
            _read.RunContinuationsAsynchronously = true;
            _read.SetResult(s_aborted);
        }

        if (Interlocked.Exchange(ref _writeState, Closed) == Waiting)
            RunWriteCallback(inline: false);
    }

    /// <summary>Idle → Ready (kept for the next wait), or Waiting → Idle (true: complete the waiter).</summary>
    private static bool Wake(ref int state)
    {
        while (true)
        {
            var current = Volatile.Read(ref state);
            if (current == Waiting)
                return Interlocked.CompareExchange(ref state, Idle, Waiting) == Waiting;
            if (current != Idle)
                return false; // already Ready, or Closed
            if (Interlocked.CompareExchange(ref state, Ready, Idle) == Idle)
                return false;
        }
    }

    private void RunWriteCallback(bool inline)
    {
        var callback = _writeCallback!;
        var argument = _writeArgument;
        _writeCallback = null;
        _writeArgument = null;
        if (inline)
            callback(argument);
        else
            ThreadPoolScheduler.Schedule(callback, argument);
    }

    SocketResult IValueTaskSource<SocketResult>.GetResult(short token) => _read.GetResult(token);

    ValueTaskSourceStatus IValueTaskSource<SocketResult>.GetStatus(short token) => _read.GetStatus(token);

    void IValueTaskSource<SocketResult>.OnCompleted(Action<object?> continuation, object? state, short token, ValueTaskSourceOnCompletedFlags flags) =>
        _read.OnCompleted(continuation, state, token, flags);
}
