
namespace NetServer.Tls;

/// <summary>
/// Lets a secure layer's shutdown (TLS close_notify) run only at a moment when none of the layer's
/// reads can be decrypting. On Linux, SslStream's reads and its shutdown both work on OpenSSL's SSL
/// object, and OpenSSL does not support SSL_read and SSL_shutdown at once; yet a connection's
/// receive loop has a read under way nearly all the time. A layer read decrypts only between
/// getting bytes from the transport and returning them: not while it waits inside the transport
/// for bytes (parked; the transport stream, <c>GatedStream</c>, says when), and not when no read
/// is under way. <see cref="Run"/> runs the shutdown at once at such a moment, or else as soon as
/// the read parks or ends; a transport read that completes meanwhile waits for the shutdown to
/// finish before its bytes go up to be decrypted.
/// </summary>
/// <remarks>
/// The reads' own moves (enter, park, unpark, exit: four per read) are one atomic update each on
/// a state word, no lock: they are on every read of every TLS connection. The lock is taken only
/// on the rare path, around the exclusive work itself (OpenSSL's shutdown and the start of the
/// close_notify write, once per connection), never across a wait for the network.
/// </remarks>
internal sealed class ReadGate
{
    private const int Parked = 1;       // the layer's read waits in the transport for bytes: it decrypts nothing
    private const int WorkPending = 2;  // work waits for the read to park or end
    private const int WorkRunning = 4;  // work runs (under the lock): an unparking read waits for it
    private const int TransportEnded = 8;
    private const int ReadUnit = 16;    // reads under way, counted above the flags

    private readonly object _lock = new();
    private int _state;
    private Action<object>? _work;     // under the lock
    private object? _workState;

    /// <summary>True once a transport read returned the end of stream (the socket's, not the layer's).</summary>
    public bool HasTransportEnded => (Volatile.Read(ref _state) & TransportEnded) != 0;

    /// <summary>
    /// Before each read of the layer's stream. A read may decrypt at once, from records the layer
    /// already holds, without ever reaching the transport (and so without parking): if work runs
    /// now, the read waits for it to finish first.
    /// </summary>
    public void EnterRead()
    {
        if ((Interlocked.Add(ref _state, ReadUnit) & WorkRunning) == 0)
            return;

        // The work runs under the lock: taking it waits until the work is done. Work that starts
        // after the add above sees this read and waits for it instead.
        lock (_lock)
        {
        }
    }

    /// <summary>After each read of the layer's stream, however it ended: runs work that waited for it.</summary>
    public void ExitRead()
    {
        if ((Interlocked.Add(ref _state, -ReadUnit) & WorkPending) != 0)
            RunPendingWork();
    }

    /// <summary>The layer's read starts waiting in the transport for bytes: runs work that waited for this.</summary>
    public void Park()
    {
        int state;
        do
        {
            state = Volatile.Read(ref _state);
        }
        while (Interlocked.CompareExchange(ref _state, state | Parked, state) != state);
        if ((state & WorkPending) != 0)
            RunPendingWork();
    }

    /// <summary>The transport read got its bytes (or failed); the layer may decrypt once this returns.</summary>
    public void Unpark()
    {
        while (true)
        {
            var state = Volatile.Read(ref _state);
            if ((state & WorkRunning) != 0)
            {
                // The work runs under the lock: taking it waits until the work is done.
                lock (_lock)
                {
                }

                continue;
            }

            if (Interlocked.CompareExchange(ref _state, state & ~Parked, state) == state)
                return;
        }
    }

    /// <summary>A transport read returned the end of stream.</summary>
    public void NoteTransportEnded()
    {
        int state;
        do
        {
            state = Volatile.Read(ref _state);
        }
        while (Interlocked.CompareExchange(ref _state, state | TransportEnded, state) != state);
    }

    /// <summary>
    /// Runs <paramref name="work"/> (synchronous, short: it must not wait for the network) while no
    /// layer read can decrypt: at once on this thread if none can now, else later on the thread of
    /// the read, when it parks or ends. One piece of work at a time.
    /// </summary>
    public void Run(Action<object> work, object state)
    {
        lock (_lock)
        {
            _work = work;
            _workState = state;
            while (true)
            {
                var current = Volatile.Read(ref _state);
                if (IsQuiet(current))
                {
                    if (Interlocked.CompareExchange(ref _state, current | WorkRunning, current) == current)
                    {
                        RunWorkLocked();
                        return;
                    }
                }
                else if (Interlocked.CompareExchange(ref _state, current | WorkPending, current) == current)
                {
                    return; // the read runs it when it parks or ends
                }
            }
        }
    }

    /// <summary>No read can be decrypting: none under way, or the one under way is parked.</summary>
    private static bool IsQuiet(int state) => state < ReadUnit || (state & Parked) != 0;

    /// <summary>On a read's thread when it parked or ended with work pending: runs the work if the gate is quiet now.</summary>
    private void RunPendingWork()
    {
        lock (_lock)
        {
            while (true)
            {
                var current = Volatile.Read(ref _state);
                if ((current & WorkPending) == 0 || !IsQuiet(current))
                    return;
                if (Interlocked.CompareExchange(ref _state, (current & ~WorkPending) | WorkRunning, current) == current)
                    break;
            }

            RunWorkLocked();
        }
    }

    /// <summary>Runs the stored work with WorkRunning set and the lock held, then clears both.</summary>
    private void RunWorkLocked()
    {
        var work = _work!;
        var state = _workState!;
        _work = null;
        _workState = null;
        try
        {
            work(state);
        }
        finally
        {
            int current;
            do
            {
                current = Volatile.Read(ref _state);
            }
            while (Interlocked.CompareExchange(ref _state, current & ~WorkRunning, current) != current);
        }
    }
}
