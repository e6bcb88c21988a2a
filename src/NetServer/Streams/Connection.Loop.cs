using NetServer.Service;

namespace NetServer.Streams;

/// <summary>
/// A connection pinned to a loop of an <see cref="IoService"/> that polls its socket (Linux): the
/// loop's poller, not the runtime's socket engine, says when to read and when a full socket can
/// take more, and the receive loop (with its hooks) runs on the loop's thread, or on the thread
/// pool when the server or client asked for hooks there.
/// </summary>
internal sealed partial class Connection : IPollOwner, ILoopWork
{
    private static readonly Action<object?> s_writable = static state => ((Connection)state!).Writable();

    private PollRegistration? _poll;
    private int _startPosted; // 1 while a started receive loop waits in the loop's queue to run (it holds _receiving)

    /// <summary>The loop this connection is pinned to, or null (the default transport).</summary>
    public IoLoop? Loop => _poll?.Loop;

    /// <summary>
    /// Pins the connection to <paramref name="loop"/> before it starts reading; false (nothing
    /// changes) when the loop does not poll sockets. A secure layer (TLS) then runs over the
    /// loop's own transport stream (see <see cref="IoLoop.TransportStream"/>).
    /// </summary>
    public bool PinTo(IoLoop loop, bool hooksOnLoop)
    {
        if (_poll is not null)
            return false;
        _poll = loop.Register(_socket, this, hooksOnLoop);
        if (_poll is null)
            return false;
        if (_layer is not null)
            _socket.Blocking = false; // the loop's transport stream, unlike a NetworkStream, takes a non-blocking socket
        return true;
    }

    /// <summary>The service stopped with this connection on one of its loops: it ends.</summary>
    void IPollOwner.Abandon() => Abort(DisconnectReason.ServerStopped);

    /// <summary>A receive loop started elsewhere (see <see cref="StartsOnItsLoop"/>), or a resume (see <see cref="ResumeLoopLater"/>), posted to the loop.</summary>
    void ILoopWork.Execute()
    {
        if (Interlocked.Exchange(ref _startPosted, 0) == 1)
            RunReceiveLoop();
        else
            ResumeLoop();
    }

    /// <summary>Runs a resumed receive loop on the connection's loop when its hooks run there (see <see cref="StartsOnItsLoop"/>), else on the thread pool.</summary>
    private void ScheduleResume()
    {
        if (_poll is { Inline: true } poll && poll.Loop.Post(this))
            return;
        ThreadPoolScheduler.Schedule(s_resumeLoop, this);
    }

    /// <summary>
    /// Whether a receive loop that starts on this thread (it holds <c>_receiving</c>, so the
    /// blocking receive already sees it) runs on the connection's loop instead (hooks on the loop,
    /// started elsewhere: the accept path, a connect completion, a resume from another thread), so
    /// that every OnReceived runs on the loop. False: run it here.
    /// </summary>
    private bool StartsOnItsLoop()
    {
        if (_poll is not { Inline: true } poll || poll.Loop.IsCurrent)
            return false;
        Volatile.Write(ref _startPosted, 1);
        if (poll.Loop.Post(this))
            return true;
        Volatile.Write(ref _startPosted, 0); // the loop stopped: run it here
        return false;
    }

    /// <summary>
    /// After a partial write on a polled socket: true when the loop will continue the flush once
    /// the socket can take more; false when it may take more already (send again now).
    /// </summary>
    private bool WaitWritable(int waiting)
    {
        // The bytes wait for the kernel as an async send's would (BytesSending says so).
        Volatile.Write(ref _bytesSending, waiting);
        if (_poll!.WaitWritable(s_writable, this))
            return true;
        Volatile.Write(ref _bytesSending, 0);
        return false;
    }

    private void Writable()
    {
        Volatile.Write(ref _bytesSending, 0);
        FlushLoop();
    }

    /// <summary>
    /// A scheduled flush (a multicast's) of a connection whose hooks run on its loop goes to that
    /// loop rather than to the thread pool: multicasts made during the loop's turn (from its hooks)
    /// then leave together, in one write per connection after the turn's hooks, and the send hooks
    /// run on the loop like the others. False: not pinned that way (or the loop stopped), the
    /// thread pool runs it. Only the flusher role's holder schedules, so the one work item per
    /// connection is never queued twice.
    /// </summary>
    private bool PostFlush()
    {
        if (_poll is not { Inline: true } poll)
            return false;
        return poll.Loop.Post(_loopFlush ??= new LoopFlush(this));
    }

    private LoopFlush? _loopFlush;

    /// <summary>Rounds of writes a flush makes on its loop's thread before it lets the loop's other work run (see <see cref="YieldFlush"/>).</summary>
    private const int FlushRoundsPerTurn = 16;

    /// <summary>
    /// After <paramref name="rounds"/> rounds of a flush: true when it runs on its loop's thread,
    /// has made <see cref="FlushRoundsPerTurn"/> rounds (a peer that takes everything while
    /// another thread keeps sending) and went back into the loop's queue, keeping the flusher role:
    /// the loop's other sockets and posted work run first, as a reader lets them after 16 reads.
    /// </summary>
    private bool YieldFlush(int rounds) => rounds > FlushRoundsPerTurn && IsOnOwnLoop && PostFlush();

    /// <summary>True on the thread of the loop this connection is pinned to.</summary>
    internal bool IsOnOwnLoop => _poll is { } poll && poll.Loop.IsCurrent;

    /// <summary>
    /// Where a blocking call on this connection returns at once instead of waiting: inside a hook
    /// (see <see cref="CallbackScope"/>), or elsewhere on the connection's own loop (posted work,
    /// a timer), where what it would wait for (a flush, the close) may be queued behind it.
    /// </summary>
    internal bool MustNotWait => CallbackScope.IsActive || IsOnOwnLoop;

    private sealed class LoopFlush(Connection connection) : ILoopWork
    {
        public void Execute() => connection.FlushLoop();
    }

    /// <summary>Before the socket closes: the poller lets go of it and its waiters end.</summary>
    private void Unpin()
    {
        if (_poll is { } poll)
            IoLoop.Unregister(poll);
    }
}
