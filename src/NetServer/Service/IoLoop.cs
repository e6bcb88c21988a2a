using System.Collections.Concurrent;

namespace NetServer;

/// <summary>
/// One event loop of an <see cref="IoService"/>: a thread of its own that runs the work posted to
/// it one item at a time, in the order posted. Work pinned to one loop never runs concurrently with
/// itself, so state that only that loop touches needs no lock.
/// </summary>
/// <remarks>
/// <see cref="Post(Action)"/> queues (allocation-free for a cached delegate, apart from the
/// queue's segments) and wakes the loop only when it sleeps; <see cref="Dispatch(Action)"/> runs
/// at once when called on this loop's thread. An exception thrown by posted work goes to
/// <see cref="IoService.OnError"/> and the loop goes on with the next item.
/// </remarks>
public sealed partial class IoLoop
{
    [ThreadStatic]
    private static IoLoop? t_current;

    private readonly ConcurrentQueue<object> _queue = new(); // Action, or (Action<object?>, object?) as a Posted, or an ILoopWork
    private readonly object _gate = new();
    private int _sleeping; // 1 while the loop is about to wait or waiting on _gate (Interlocked: a full fence before it checks the queue)
    private const int Closed = 1 << 30; // in _state: the loop takes no more work
    private int _state = Closed; // Closed, plus the posts between their check of Closed and the end of their enqueue (a stop waits for them)
    private volatile bool _stopping;
    private Thread? _thread;
    private bool _initialized; // under _gate: the thread has run OnThreadInitialize (Start waits for it)

    internal IoLoop(IoService service, int index)
    {
        Service = service;
        Index = index;
    }

    /// <summary>The service this loop belongs to.</summary>
    public IoService Service { get; }

    /// <summary>This loop's position in <see cref="IoService.Loops"/>.</summary>
    public int Index { get; }

    /// <summary>True when called on this loop's thread.</summary>
    public bool IsCurrent => t_current == this;

    /// <summary>The loop whose thread is calling, or null on any other thread.</summary>
    internal static IoLoop? Current => t_current;

    /// <summary>Work queued and not yet run (a snapshot).</summary>
    public int Pending => _queue.Count;

    /// <summary>
    /// Queues <paramref name="action"/> to run on this loop after the work queued before it. Never
    /// runs it inline, even on the loop's own thread.
    /// </summary>
    /// <returns>False when the service is not started (the action will not run).</returns>
    public bool Post(Action action)
    {
        if (action is null)
            ThrowHelper.ThrowArgumentNull(nameof(action));
        return Enqueue(action);
    }

    /// <summary>Queues <paramref name="action"/> with <paramref name="state"/> (see <see cref="Post(Action)"/>; allocates a small pair object).</summary>
    /// <returns>False when the service is not started (the action will not run).</returns>
    public bool Post(Action<object?> action, object? state)
    {
        if (action is null)
            ThrowHelper.ThrowArgumentNull(nameof(action));
        return Enqueue(new Posted(action, state));
    }

    /// <summary>
    /// Runs <paramref name="action"/> now when called on this loop's thread (before this call
    /// returns), otherwise posts it (see <see cref="Post(Action)"/>).
    /// </summary>
    /// <returns>False when it had to be posted and the service is not started.</returns>
    public bool Dispatch(Action action)
    {
        if (action is null)
            ThrowHelper.ThrowArgumentNull(nameof(action));
        if (!IsCurrent)
            return Enqueue(action);
        Run(action);
        return true;
    }

    /// <summary>Queues engine work (no delegate): false when the service is not started.</summary>
    internal bool Post(ILoopWork work) => Enqueue(work);

    private bool Enqueue(object item)
    {
        // One interlocked word for "closed" and "posts in flight": a stop that closes it after this
        // increment waits for the decrement, so an accepted item is always queued before the last drain.
        if ((Interlocked.Increment(ref _state) & Closed) != 0)
        {
            Interlocked.Decrement(ref _state);
            return false;
        }

        _queue.Enqueue(item);

        // A full fence: either the loop's check of the queue (after it set _sleeping) sees the
        // item, or this read sees _sleeping set and wakes it. The wake comes before the decrement,
        // so a stop (which waits for the posts in flight) cannot close the loop's eventfd under it.
        Interlocked.MemoryBarrier();
        if (Volatile.Read(ref _sleeping) != 0)
            WakeUp();
        Interlocked.Decrement(ref _state);
        return true;
    }

    private void WakeUp()
    {
        if (HasPoller)
        {
            WakePoller();
            return;
        }

        lock (_gate)
            Monitor.Pulse(_gate);
    }

    internal void Start(bool polling)
    {
        StartPoller();
        _stopping = false;
        _initialized = false;
        _thread = new Thread(() => RunThread(polling)) { IsBackground = true, Name = $"NetServer loop {Index}" };
        Interlocked.Exchange(ref _state, 0);
        try
        {
            _thread.Start();
        }
        catch
        {
            Interlocked.Exchange(ref _state, Closed);
            _thread = null;
            StopPoller();
            throw;
        }

        // OnThreadInitialize has run: the service's OnStarted comes after every loop's.
        lock (_gate)
        {
            while (!_initialized)
                Monitor.Wait(_gate);
        }
    }

    /// <summary>Stops taking work, lets the loop run what was queued before, and waits for its thread to end.</summary>
    internal void Stop()
    {
        int state;
        do
        {
            state = Volatile.Read(ref _state);
        }
        while (Interlocked.CompareExchange(ref _state, state | Closed, state) != state);

        // A post that got in before the close finishes its enqueue before the loop's last drain.
        var spin = default(SpinWait);
        while ((Volatile.Read(ref _state) & ~Closed) != 0)
            spin.SpinOnce();
        _stopping = true;
        WakeUp();
        _thread?.Join();
        _thread = null;
        StopPoller();
    }

    private void RunThread(bool polling)
    {
        t_current = this;
        try
        {
            try
            {
                Service.ThreadStarted();
            }
            finally
            {
                lock (_gate)
                {
                    _initialized = true;
                    Monitor.PulseAll(_gate);
                }
            }

            Loop(polling);
        }
        finally
        {
            Service.ThreadEnded();
            t_current = null;
        }
    }

    private void Loop(bool polling)
    {
        while (true)
        {
            var ran = RunQueued();
            if (_stopping)
            {
                // Work queued before the stop still runs (what it posts to this loop now is refused).
                while (RunQueued())
                {
                }

                AbandonPolled(); // the sockets pinned here end (aborted); what they post now goes to the thread pool
                while (RunQueued())
                {
                }

                return;
            }

            if (HasPoller)
            {
                PollTurn(ran, polling);
                continue;
            }

            if (ran)
                continue;
            if (polling)
            {
                Service.Idle();
                continue;
            }

            lock (_gate)
            {
                Interlocked.Exchange(ref _sleeping, 1);
                if (_queue.IsEmpty && !_stopping)
                    Monitor.Wait(_gate);
                Volatile.Write(ref _sleeping, 0);
            }
        }
    }

    /// <summary>
    /// A turn of a loop that polls sockets: look for ready sockets without waiting when work ran (or
    /// when polling), else sleep in the poller until a socket is ready or work is posted.
    /// </summary>
    private void PollTurn(bool ran, bool polling)
    {
        if (ran || polling)
        {
            if (PollOnce(0) == 0 && !ran)
                Service.Idle();
            return;
        }

        Interlocked.Exchange(ref _sleeping, 1);
        PollOnce(_queue.IsEmpty && !_stopping ? -1 : 0);
        Volatile.Write(ref _sleeping, 0);
    }

    // Runs at most what is queued now (work it posts waits for the next turn), so a loop that keeps
    // posting to itself still reaches its stop check and its idle hook.
    private bool RunQueued()
    {
        if (_queue.IsEmpty)
            return false;
        var count = _queue.Count;
        var ran = false;
        for (var i = 0; i < count && _queue.TryDequeue(out var item); i++)
        {
            ran = true;
            Run(item);
        }

        return ran;
    }

    private void Run(object item)
    {
        try
        {
            switch (item)
            {
                case Action action:
                    action();
                    break;
                case Posted posted:
                    posted.Action(posted.State);
                    break;
                default:
                    ((ILoopWork)item).Execute();
                    break;
            }
        }
        catch (Exception e)
        {
            Service.ReportError(e);
        }
    }

    private sealed class Posted(Action<object?> action, object? state)
    {
        public Action<object?> Action { get; } = action;

        public object? State { get; } = state;
    }
}
