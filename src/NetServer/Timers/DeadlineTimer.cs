using System.Collections.Generic;
using System.Diagnostics;
using NetServer.Timers;

namespace NetServer;

/// <summary>
/// A timer on the process's shared clock: set it up with an absolute UTC time or a span, then
/// wait for it with a callback (<see cref="WaitAsync()"/>), by blocking (<see cref="WaitSync"/>)
/// or by awaiting (<see cref="WaitAsync(CancellationToken)"/>). <see cref="Cancel"/> ends a
/// pending wait early.
/// </summary>
/// <remarks>
/// <para>
/// A timer has at most one pending wait. The first wait call arms it; wait calls made while it is
/// armed join that same wait. The wait ends once: when the expiry time passes (after it, never
/// before, within about one tick of the shared clock, 10 ms), on <see cref="Cancel"/>, on
/// <see cref="Dispose()"/>, or when the token of an awaited wait is cancelled. Then
/// <see cref="OnTimer"/> (by default: the action given to the constructor or
/// <see cref="Setup(Action{bool})"/>) runs once with <c>canceled</c> false for an expiry, true
/// otherwise. It runs on a thread-pool thread (on a loop of the <see cref="IoService"/> given
/// to the constructor, if any), never on the clock's own thread and never concurrently with
/// itself for one timer. Blocked and awaiting waiters are released when the
/// wait ends, not after <see cref="OnTimer"/> returns.
/// </para>
/// <para>
/// The expiry stays set after a wait ends: waiting again without a new <c>Setup</c> expires at
/// the next tick. <c>Setup</c> while a wait is pending moves that wait's deadline (it does not
/// cancel it), so pushing a deadline on, or a periodic timer that calls <c>Setup</c> and
/// <see cref="WaitAsync()"/> from <see cref="OnTimer"/>, allocates nothing. An awaited wait
/// allocates its <see cref="Task{TResult}"/> (and a registration for a cancellable token); a
/// blocking wait allocates one small object.
/// </para>
/// <para>
/// An exception thrown by <see cref="OnTimer"/> (or the action) goes to <see cref="OnError"/>,
/// which writes it to <see cref="Trace"/> by default; the clock and the timer keep working.
/// </para>
/// </remarks>
/// <example>
/// <code>
/// using var timer = new DeadlineTimer(canceled => Console.WriteLine(canceled ? "canceled" : "expired"));
/// timer.Setup(TimeSpan.FromSeconds(1));
/// timer.WaitAsync();                          // prints "expired" in a second
/// timer.Setup(DateTime.UtcNow.AddSeconds(5));
/// bool expired = await timer.WaitAsync(token); // false if token is cancelled first
/// </code>
/// </example>
public partial class DeadlineTimer : IDisposable
{
    private static readonly Task<bool> s_notWaiting = Task.FromResult(false);

    private readonly object _sync = new();
    private readonly Alarm _alarm;
    private readonly Queue<Outcome> _outcomes = new(2); // under _sync: ended waits whose OnTimer is still due
    private Action<bool>? _action;
    private DateTime? _expireUtc;  // under _sync: the time given to Setup(DateTime); null after Setup(TimeSpan)
    private long _due;             // under _sync: the expiry as a TimerWheel timestamp
    private bool _isSetUp;         // under _sync
    private bool _waiting;         // under _sync: a wait is pending (the alarm is armed)
    private Waiters? _waiters;     // under _sync: blocked or awaiting callers of the pending wait
    private bool _dispatching;     // under _sync: the alarm is queued on the thread pool or running outcomes
    private bool _disposed;        // under _sync

    /// <summary>A timer that is not set up yet and whose <see cref="OnTimer"/> does nothing until an action is given.</summary>
    public DeadlineTimer()
        : this(TimerWheel.Shared)
    {
    }

    /// <summary>A timer that calls <paramref name="action"/> (with <c>canceled</c>) when a wait ends.</summary>
    public DeadlineTimer(Action<bool> action)
        : this(TimerWheel.Shared) => _action = action ?? throw new ArgumentNullException(nameof(action));

    /// <summary>
    /// A timer whose <see cref="OnTimer"/> runs on a loop of <paramref name="service"/>, the same
    /// one every time (on the thread pool while the service is stopped); the waiting is on the
    /// shared clock as for any timer.
    /// </summary>
    public DeadlineTimer(IoService service)
        : this(TimerWheel.Shared, service ?? throw new ArgumentNullException(nameof(service)))
    {
    }

    /// <summary>A timer that calls <paramref name="action"/> (with <c>canceled</c>) on a loop of <paramref name="service"/> when a wait ends.</summary>
    public DeadlineTimer(IoService service, Action<bool> action)
        : this(service) => _action = action ?? throw new ArgumentNullException(nameof(action));

    internal DeadlineTimer(TimerWheel wheel, IoService? service = null) => _alarm = new Alarm(this, wheel, service);

    /// <summary>
    /// The expiry as a UTC time: the time given to <see cref="Setup(DateTime)"/>, or after
    /// <see cref="Setup(TimeSpan)"/> the current UTC time plus the time left;
    /// <see cref="DateTime.MinValue"/> before the first <c>Setup</c>.
    /// </summary>
    public DateTime ExpireTime
    {
        get
        {
            long due;
            lock (_sync)
            {
                if (!_isSetUp)
                    return DateTime.MinValue;
                if (_expireUtc is { } utc)
                    return utc;
                due = _due;
            }

            // From the monotonic deadline, so Setup(TimeSpan) need not read the wall clock.
            var now = DateTime.UtcNow;
            var left = TimerWheel.ToTimeSpan(due - TimerWheel.Now);
            return left < DateTime.MaxValue - now ? now + left : DateTime.SpecifyKind(DateTime.MaxValue, DateTimeKind.Utc);
        }
    }

    /// <summary>The time left until the expiry; zero once it has passed, or before the first <c>Setup</c>.</summary>
    public TimeSpan ExpireTimespan
    {
        get
        {
            long left;
            lock (_sync)
                left = _isSetUp ? _due - TimerWheel.Now : 0;
            return left > 0 ? TimerWheel.ToTimeSpan(left) : TimeSpan.Zero;
        }
    }

    /// <summary>True while a wait is pending.</summary>
    public bool IsWaiting
    {
        get
        {
            lock (_sync)
                return _waiting;
        }
    }

    /// <summary>True once disposed.</summary>
    public bool IsDisposed
    {
        get
        {
            lock (_sync)
                return _disposed;
        }
    }

    /// <summary>
    /// Sets the expiry to the UTC time <paramref name="utc"/> (a local time is converted; an
    /// unspecified kind is taken as UTC). A time in the past expires at the next tick. Moves the
    /// deadline of a pending wait. Returns false when the timer is disposed.
    /// </summary>
    /// <remarks>The time is turned into a point on the monotonic clock now: a later change of the system clock does not move it.</remarks>
    public bool Setup(DateTime utc)
    {
        if (utc.Kind == DateTimeKind.Local)
            utc = utc.ToUniversalTime();
        var due = TimerWheel.Now + TimerWheel.ToTimestampDelta(utc - DateTime.UtcNow);
        return SetExpiry(DateTime.SpecifyKind(utc, DateTimeKind.Utc), due);
    }

    /// <summary>
    /// Sets the expiry to <paramref name="after"/> from now (zero: at the next tick). Moves the
    /// deadline of a pending wait. Returns false when the timer is disposed.
    /// </summary>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="after"/> is negative.</exception>
    public bool Setup(TimeSpan after)
    {
        if (after < TimeSpan.Zero)
            throw new ArgumentOutOfRangeException(nameof(after), "The span must not be negative.");
        return SetExpiry(null, TimerWheel.Now + TimerWheel.ToTimestampDelta(after));
    }

    /// <summary>
    /// Sets the action the default <see cref="OnTimer"/> calls (also for a pending wait). Does not
    /// arm the timer. Returns false when the timer is disposed.
    /// </summary>
    public bool Setup(Action<bool> action)
    {
        if (action is null)
            ThrowHelper.ThrowArgumentNull(nameof(action));
        lock (_sync)
        {
            if (_disposed)
                return false;
            _action = action;
            return true;
        }
    }

    /// <summary>
    /// Waits for the expiry without blocking: <see cref="OnTimer"/> runs on the thread pool (or the service's loop) when
    /// the wait ends. True when the wait is pending (armed now, or already); false when the timer
    /// is not set up or is disposed.
    /// </summary>
    public bool WaitAsync()
    {
        lock (_sync)
            return TryArmLocked();
    }

    /// <summary>
    /// Blocks until the pending wait (armed now, or already) ends: true when the expiry passed,
    /// false when it was cancelled (or the timer is not set up or is disposed). The block lasts
    /// until the expiry at most, unless the deadline is moved meanwhile. <see cref="OnTimer"/>
    /// still runs on the thread pool (or the service's loop).
    /// </summary>
    public bool WaitSync()
    {
        lock (_sync)
        {
            if (!TryArmLocked())
                return false;
            var waiters = _waiters ??= new Waiters(this);
            while (!waiters.Ended)
                Monitor.Wait(_sync);
            return !waiters.Canceled;
        }
    }

    /// <summary>
    /// Waits for the expiry: the task completes with true when it passed, false when the wait was
    /// cancelled (<see cref="Cancel"/>, <see cref="Dispose()"/>, or
    /// <paramref name="cancellationToken"/>, which cancels the timer's pending wait). Completes
    /// with false at once when the timer is not set up or is disposed. Allocates the task.
    /// </summary>
    public Task<bool> WaitAsync(CancellationToken cancellationToken)
    {
        Waiters waiters;
        Task<bool> task;
        lock (_sync)
        {
            if (!TryArmLocked())
                return s_notWaiting;
            waiters = _waiters ??= new Waiters(this);
            task = waiters.GetTask();
        }

        // Outside the lock: a token that is already cancelled runs the callback, which takes it.
        waiters.Register(cancellationToken);
        return task;
    }

    /// <summary>
    /// Cancels the pending wait: <see cref="OnTimer"/> runs once with <c>canceled</c> true and
    /// waiters see false. Returns false when no wait was pending (nothing is called then).
    /// </summary>
    public bool Cancel()
    {
        bool queue;
        lock (_sync)
        {
            if (!_waiting)
                return false;
            queue = EndLocked(canceled: true);
        }

        if (queue)
            _alarm.Queue();
        return true;
    }

    /// <summary>Cancels a pending wait (as <see cref="Cancel"/>: <see cref="OnTimer"/> runs with <c>canceled</c> true) and refuses new ones.</summary>
    public void Dispose()
    {
        Dispose(disposing: true);
        GC.SuppressFinalize(this);
    }

    /// <summary>Releases the timer; <paramref name="disposing"/> is false when called from a finalizer.</summary>
    protected virtual void Dispose(bool disposing)
    {
        if (!disposing)
            return;
        bool queue;
        lock (_sync)
        {
            if (_disposed)
                return;
            _disposed = true;
            queue = _waiting && EndLocked(canceled: true);
        }

        if (queue)
            _alarm.Queue();
    }

    /// <summary>
    /// Called once per wait when it ends, on a thread-pool thread (or the service's loop): <paramref name="canceled"/> is
    /// false when the expiry passed, true when the wait was cancelled. The default calls the
    /// timer's action, if any. It may set the timer up and wait again.
    /// </summary>
    protected virtual void OnTimer(bool canceled) => _action?.Invoke(canceled);

    /// <summary>
    /// Called where <see cref="OnTimer"/> ran, when it (or the action) throws. The
    /// default writes the exception to <see cref="Trace"/>. The timer keeps working.
    /// </summary>
    protected virtual void OnError(Exception exception) => Trace.TraceError("NetServer: {0}", exception);

    private bool SetExpiry(DateTime? utc, long due)
    {
        lock (_sync)
        {
            if (_disposed)
                return false;
            _expireUtc = utc;
            _due = due;
            _isSetUp = true;
            if (_waiting)
                _alarm.ArmAt(due);
            return true;
        }
    }

    private bool TryArmLocked()
    {
        if (_disposed || !_isSetUp)
            return false;
        if (!_waiting)
        {
            _waiting = true;
            _alarm.ArmAt(_due);
        }

        return true;
    }

    // Ends the pending wait; true when the caller must queue the alarm to run the outcome.
    private bool EndLocked(bool canceled)
    {
        _waiting = false;
        _alarm.Disarm();
        var waiters = _waiters;
        _waiters = null;
        waiters?.EndLocked(canceled);
        _outcomes.Enqueue(new Outcome(canceled, waiters));
        if (_dispatching)
            return false;
        _dispatching = true;
        return true;
    }
}
