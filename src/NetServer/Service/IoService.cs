using System.Collections.Generic;
using System.Diagnostics;

namespace NetServer;

/// <summary>
/// An I/O service: a number of event loops (<see cref="Loops"/>), each a thread of its own that
/// runs the work posted to it in order. <see cref="Post(Action)"/> and
/// <see cref="Dispatch(Action)"/> hand work to the service (spread over its loops);
/// <see cref="IoLoop.Post(Action)"/> pins work to one loop, so work that touches the same state
/// can run there without locks. A <see cref="DeadlineTimer"/> made with a service calls its
/// <c>OnTimer</c> on one loop of it, always the same. Subclass it to hear <see cref="OnStarted"/>,
/// <see cref="OnStopped"/>, <see cref="OnIdle"/> (polling mode) and <see cref="OnError"/>.
/// </summary>
/// <remarks>
/// <para><see cref="Start(bool)"/> with <c>polling</c> keeps every loop spinning (calling
/// <see cref="OnIdle"/> on each turn that found nothing to run) instead of sleeping until work
/// arrives: the lowest latency, at the price of a busy core per loop.</para>
/// <para><see cref="Stop"/> stops the loops one after another: each refuses new work from then on
/// (<c>Post</c> returns false), runs what was queued before, and waits for the loop threads to end; it may not be called from a loop of
/// the service (it would wait for itself). <see cref="Restart"/> stops and starts again in the same
/// mode. Work that blocks holds up everything behind it on its loop: run blocking work on the
/// thread pool and post its result back.</para>
/// </remarks>
public class IoService : IDisposable
{
    private readonly object _sync = new();
    private readonly IoLoop[] _loops;
    private int _next;
    private bool _started;  // under _sync: started and not stopping
    private bool _changing; // under _sync: a Start or Stop is under way (the lock is not held while loops start or end)
    private bool _polling;  // under _sync
    private bool _disposed; // under _sync

    /// <summary>A service of <paramref name="threads"/> loops; 0 (the default) makes one per processor.</summary>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="threads"/> is negative.</exception>
    public IoService(int threads = 0)
    {
        if (threads < 0)
            ThrowHelper.ThrowArgumentOutOfRange(nameof(threads), "The number of threads may not be negative.");
        var count = threads == 0 ? Environment.ProcessorCount : threads;
        _loops = new IoLoop[count];
        for (var i = 0; i < count; i++)
            _loops[i] = new IoLoop(this, i);
    }

    /// <summary>
    /// Null when the loops poll the sockets of the servers and clients given this service
    /// themselves (Linux, net10.0 build; after <see cref="Start(bool)"/>); otherwise why they cannot,
    /// in which case those connections keep the default transport and only their posted work and
    /// timers run on the loops.
    /// </summary>
    public string? NativeTransportUnavailableReason => _loops[0].PollerFailure;

    /// <summary>The environment variable that puts servers and clients given no service on a shared one (see <see cref="Ambient"/>).</summary>
    internal const string TransportVariable = "NETSERVER_TRANSPORT";

    private static readonly Lazy<IoService?> s_ambient = new(CreateAmbient);

    /// <summary>
    /// With NETSERVER_TRANSPORT=loops in the environment: one started service (a loop per
    /// processor), shared by every stream server and client that was given no service, so an
    /// existing program runs on the loops without a change. Null otherwise (the default).
    /// </summary>
    internal static IoService? Ambient => s_ambient.Value;

    private static IoService? CreateAmbient()
    {
        if (!string.Equals(Environment.GetEnvironmentVariable(TransportVariable), "loops", StringComparison.OrdinalIgnoreCase))
            return null;
        var service = new IoService(AmbientThreads(Environment.GetEnvironmentVariable(LoopsVariable)));
        service.Start();
        return service;
    }

    /// <summary>The environment variable that sets the shared service's number of loops (default: one per processor).</summary>
    internal const string LoopsVariable = "NETSERVER_LOOPS";

    /// <summary>The shared service's loop count from NETSERVER_LOOPS: a number from 1 to 1024, else (with a warning when set) one per processor.</summary>
    internal static int AmbientThreads(string? value)
    {
        if (string.IsNullOrEmpty(value))
            return Environment.ProcessorCount;
        if (int.TryParse(value, System.Globalization.NumberStyles.None, System.Globalization.CultureInfo.InvariantCulture, out var threads) && threads is >= 1 and <= 1024)
            return threads;
        Trace.TraceWarning("NetServer: {0}={1} is not a number of loops from 1 to 1024; using {2} (one per processor).", LoopsVariable, value, Environment.ProcessorCount);
        return Environment.ProcessorCount;
    }

    /// <summary>The number of loops (threads).</summary>
    public int Threads => _loops.Length;

    /// <summary>The loops, in a fixed order.</summary>
    public IReadOnlyList<IoLoop> Loops => _loops;

    /// <summary>True between <see cref="Start(bool)"/> and <see cref="Stop"/>.</summary>
    public bool IsStarted
    {
        get
        {
            lock (_sync)
                return _started;
        }
    }

    /// <summary>True when started in polling mode.</summary>
    public bool IsPolling
    {
        get
        {
            lock (_sync)
                return _started && _polling;
        }
    }

    /// <summary>The loop of the calling thread when it is one of this service's, else null.</summary>
    public IoLoop? CurrentLoop => IoLoop.Current is { } loop && loop.Service == this ? loop : null;

    /// <summary>Starts the loops; with <paramref name="polling"/> they spin instead of sleeping (see the remarks).</summary>
    /// <returns>False when already started.</returns>
    /// <exception cref="ObjectDisposedException">The service was disposed.</exception>
    public bool Start(bool polling = false)
    {
        lock (_sync)
        {
            if (_disposed)
                ThrowHelper.ThrowObjectDisposed(nameof(IoService));
            if (_started || _changing)
                return false;
            _changing = true;
            _polling = polling;
        }

        foreach (var loop in _loops)
            loop.Start(polling);
        lock (_sync)
        {
            _started = true;
            _changing = false;
        }

        OnHook(Hook.Started);
        return true;
    }

    /// <summary>Stops the loops once they have run the work queued before (see the remarks).</summary>
    /// <returns>False when not started (or a start or stop is under way on another thread).</returns>
    /// <exception cref="InvalidOperationException">Called from one of the service's loops.</exception>
    public bool Stop()
    {
        if (CurrentLoop is not null)
            throw new InvalidOperationException("Stop was called on one of the service's own loops, which it would wait for: post it to the thread pool.");
        lock (_sync)
        {
            if (!_started || _changing)
                return false;
            _started = false;
            _changing = true;
        }

        // Not under the lock: work still running on the loops may read IsStarted.
        foreach (var loop in _loops)
            loop.Stop();
        lock (_sync)
            _changing = false;
        OnHook(Hook.Stopped);
        return true;
    }

    /// <summary>Stops the service and starts it again in the same mode.</summary>
    /// <returns>False when it was not started.</returns>
    public bool Restart()
    {
        bool polling;
        lock (_sync)
            polling = _polling;
        return Stop() && Start(polling);
    }

    /// <summary>The next loop in turn (round robin): where to pin new work.</summary>
    public IoLoop NextLoop() => _loops[(int)((uint)Interlocked.Increment(ref _next) % (uint)_loops.Length)];

    /// <summary>Queues <paramref name="action"/> on the next loop in turn; never runs it inline.</summary>
    /// <returns>False when the service is not started.</returns>
    public bool Post(Action action) => NextLoop().Post(action);

    /// <summary>
    /// Runs <paramref name="action"/> now when called on one of the service's loops, otherwise
    /// queues it on the next loop in turn.
    /// </summary>
    /// <returns>False when it had to be queued and the service is not started.</returns>
    public bool Dispatch(Action action) => (CurrentLoop ?? NextLoop()).Dispatch(action);

    /// <summary>Stops the service (if started); it cannot be started again. Not from one of its loops (see <see cref="Stop"/>).</summary>
    public void Dispose()
    {
        Dispose(true);
        GC.SuppressFinalize(this);
    }

    /// <summary>Stops the service when <paramref name="disposing"/>.</summary>
    protected virtual void Dispose(bool disposing)
    {
        if (!disposing)
            return;
        lock (_sync)
            _disposed = true; // first: a Start racing this one fails instead of leaving loops behind
        Stop();
    }

    /// <summary>Called once the loops run (each has run <see cref="OnThreadInitialize"/>), on the thread that called <see cref="Start(bool)"/>.</summary>
    protected virtual void OnStarted()
    {
    }

    /// <summary>Called once the loops have ended (each has run <see cref="OnThreadCleanup"/>), on the thread that called <see cref="Stop"/>.</summary>
    protected virtual void OnStopped()
    {
    }

    /// <summary>Called on each loop's thread when it starts, before it runs any work.</summary>
    protected virtual void OnThreadInitialize()
    {
    }

    /// <summary>Called on each loop's thread when it ends, after its last work.</summary>
    protected virtual void OnThreadCleanup()
    {
    }

    /// <summary>
    /// Polling mode only: called on a loop's thread each time a turn found no work. Keep it short;
    /// work it posts runs on the next turn.
    /// </summary>
    protected virtual void OnIdle()
    {
    }

    /// <summary>
    /// Called with an exception thrown by posted work (on its loop's thread) or by a hook of this
    /// service (on the thread that ran the hook); the loop goes on. Writes it to
    /// <see cref="Trace"/> by default. A <see cref="DeadlineTimer"/>'s <c>OnTimer</c> reports to
    /// the timer's own <c>OnError</c>.
    /// </summary>
    protected virtual void OnError(Exception exception) =>
        Trace.TraceError("NetServer: IoService work failed: {0}", exception);

    internal void ThreadStarted() => OnHook(Hook.ThreadInitialize);

    internal void ThreadEnded() => OnHook(Hook.ThreadCleanup);

    internal void Idle() => OnHook(Hook.Idle);

    internal void ReportError(Exception exception)
    {
        try
        {
            OnError(exception);
        }
        catch (Exception e)
        {
            // The handler for failures failed as well: the trace is the last place left to report both.
            try
            {
                Trace.TraceError("NetServer: {0} failed while handling {1}", e, exception);
            }
            catch (Exception)
            {
                // A trace listener that throws must not end a loop's thread (and the process with it).
            }
        }
    }

    // A hook of the service, guarded: its exception goes to OnError (no delegate: OnIdle runs once per idle turn).
    private void OnHook(Hook hook)
    {
        try
        {
            switch (hook)
            {
                case Hook.Started:
                    OnStarted();
                    break;
                case Hook.Stopped:
                    OnStopped();
                    break;
                case Hook.ThreadInitialize:
                    OnThreadInitialize();
                    break;
                case Hook.ThreadCleanup:
                    OnThreadCleanup();
                    break;
                default:
                    OnIdle();
                    break;
            }
        }
        catch (Exception e)
        {
            ReportError(e);
        }
    }

    private enum Hook
    {
        Started,
        Stopped,
        ThreadInitialize,
        ThreadCleanup,
        Idle,
    }
}
