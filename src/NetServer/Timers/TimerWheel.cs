using System.Diagnostics;

namespace NetServer.Timers;

/// <summary>
/// The shared clock: one hashed timer wheel for every deadline of the process, driven by one
/// background thread that ticks only while something is linked (idle, it blocks without a
/// timeout: no wake-ups), so a hundred thousand armed deadlines cost one slot walk per tick.
/// </summary>
/// <remarks>
/// <para>
/// Time is <see cref="Now"/>, a <see cref="Stopwatch"/> timestamp (monotonic). A tick is a power
/// of two of timestamp units close to the requested length (the shared wheel asks for 10 ms and
/// gets 8.4 ms where the stopwatch counts nanoseconds, Linux and macOS, and 13.1 ms where it
/// counts 100 ns, Windows), so the tick of a timestamp is a shift, not a division.
/// </para>
/// <para>
/// Each entry is linked in slot <c>tick % slots</c> with the absolute tick it waits for, so a
/// long delay needs no round counting: a walk of the slot skips entries whose tick is still
/// ahead. A deadline is linked at the first tick that starts at or after it, and the wheel
/// processes a tick only once its start has passed, so nothing fires early; it fires at most one
/// tick, plus the tick thread's own lateness, after its due time.
/// </para>
/// <para>
/// The tick thread is the wheel's own (made on first use, a background thread), not a
/// <see cref="Timer"/>: a timer's callback is a thread-pool work item, which at 100 ticks a
/// second cost about ten times the CPU (pool wake-ups and spinning, docs/timers.md) and is late
/// whenever the pool is starved, when deadlines matter most.
/// </para>
/// <para>
/// One lock guards the slot lists (link, unlink, a tick's walk of one slot); callbacks are never
/// called under it. See <see cref="TimerEntry"/> for the lazy re-arm and exactly-once rules.
/// </para>
/// </remarks>
public sealed class TimerWheel
{
    /// <summary><see cref="TimerEntry.LinkedTick"/> of an entry in no slot.</summary>
    internal const long NotLinked = long.MaxValue;

    // The latest due time accepted: far enough below long.MaxValue that rounding up to a tick
    // cannot overflow, and still about 146 years away at nanosecond resolution.
    private const long MaxDue = long.MaxValue / 2;

    private static readonly double s_timestampsPerTimeSpanTick = (double)Stopwatch.Frequency / TimeSpan.TicksPerSecond;

    private readonly object _lock = new();
    private readonly TimerEntry?[] _slots;
    private readonly long _slotMask;
    private readonly int _shift;
    private readonly long _tickRounding;
    private Thread? _thread;     // under _lock: made on first use
    private long _processedTick; // under _lock: every tick up to this one has been walked
    private int _linkedCount;    // under _lock
    private bool _running;       // under _lock: false while the tick thread waits for something to be linked
    private long _tickCount;
    private long _startCount;
    private long _expiredCount;
    private long _failureCount;

    /// <summary>A wheel of <paramref name="slotCount"/> slots (a power of two) and a tick close to <paramref name="tick"/>.</summary>
    public TimerWheel(TimeSpan tick, int slotCount = 1024)
    {
        if (slotCount < 2 || (slotCount & (slotCount - 1)) != 0)
            throw new ArgumentOutOfRangeException(nameof(slotCount), "The slot count must be a power of two, at least 2.");
        if (tick <= TimeSpan.Zero)
            throw new ArgumentOutOfRangeException(nameof(tick), "The tick must be positive.");

        _shift = Math.Max(0, (int)Math.Round(Math.Log(ToTimestampDelta(tick), 2)));
        _tickRounding = (1L << _shift) - 1;
        _slots = new TimerEntry?[slotCount];
        _slotMask = slotCount - 1;
    }

    /// <summary>The process-wide clock: 1024 slots, a tick of about 10 ms.</summary>
    public static TimerWheel Shared { get; } = new(TimeSpan.FromMilliseconds(10));

    /// <summary>The current time of every wheel: a monotonic <see cref="Stopwatch"/> timestamp.</summary>
    public static long Now => Stopwatch.GetTimestamp();

    /// <summary>The length of one tick.</summary>
    public TimeSpan TickLength => ToTimeSpan(1L << _shift);

    /// <summary>Slots in the wheel.</summary>
    public int SlotCount => _slots.Length;

    /// <summary>Wake-ups of the tick thread so far (each walks the slots of the ticks that passed).</summary>
    internal long TickCount => Interlocked.Read(ref _tickCount);

    /// <summary>How many times the tick thread was started or woken after the wheel had been idle.</summary>
    internal long StartCount => Interlocked.Read(ref _startCount);

    /// <summary><see cref="TimerEntry.OnExpired"/> calls made so far.</summary>
    internal long ExpiredCount => Interlocked.Read(ref _expiredCount);

    /// <summary><see cref="TimerEntry.OnExpired"/> calls that threw.</summary>
    internal long FailureCount => Interlocked.Read(ref _failureCount);

    /// <summary>True while the tick thread ticks; false once nothing is linked (it then waits without a timeout).</summary>
    internal bool IsRunning
    {
        get
        {
            lock (_lock)
                return _running;
        }
    }

    /// <summary>
    /// Test seam, null outside tests: called under the lock in the window between reading a due
    /// entry's time and claiming its expiry, so a test can land a <see cref="TimerEntry.Disarm"/>
    /// exactly there. It must not take the wheel's lock (arming an entry may).
    /// </summary>
    internal Action<TimerEntry>? ClaimingHook { get; set; }

    /// <summary>Entries linked in a slot (armed, or disarmed but not yet dropped).</summary>
    internal int LinkedCount
    {
        get
        {
            lock (_lock)
                return _linkedCount;
        }
    }

    /// <summary>Converts a span to timestamp units: zero for zero or negative spans, capped far in the future.</summary>
    public static long ToTimestampDelta(TimeSpan span)
    {
        if (span <= TimeSpan.Zero)
            return 0;
        var delta = span.Ticks * s_timestampsPerTimeSpanTick;
        return delta >= MaxDue ? MaxDue : (long)delta;
    }

    /// <summary>Converts timestamp units to a span.</summary>
    public static TimeSpan ToTimeSpan(long timestampDelta) =>
        TimeSpan.FromTicks((long)(timestampDelta / s_timestampsPerTimeSpanTick));

    internal static long ClampDue(long due) => due < 0 ? 0 : due > MaxDue ? MaxDue : due;

    /// <summary>The first tick that starts at or after <paramref name="due"/>.</summary>
    internal long TickOf(long due) => (due + _tickRounding) >> _shift;

    /// <summary>Links <paramref name="entry"/> for its current due time, or moves it earlier; the slow path of <see cref="TimerEntry.ArmAt"/>.</summary>
    internal void Schedule(TimerEntry entry)
    {
        lock (_lock)
        {
            var due = entry.ReadDue();
            if (due == TimerEntry.Disarmed)
                return; // disarmed meanwhile: if linked, it stays until its slot is walked

            if (!_running)
            {
                // Nothing is linked and no tick runs: skip the ticks that passed while idle.
                _processedTick = Math.Max(_processedTick, Now >> _shift);
            }

            var tick = Math.Max(TickOf(due), _processedTick + 1);
            var linked = entry.LinkedTick;
            if (linked <= tick)
                return; // another thread linked it early enough
            if (linked != NotLinked)
                UnlinkLocked(entry);
            LinkLocked(entry, tick);

            if (!_running)
            {
                _running = true;
                Interlocked.Increment(ref _startCount);
                if (_thread is null)
                    _thread = StartThread();
                else
                    Monitor.Pulse(_lock);
            }
        }
    }

    private Thread StartThread()
    {
        var thread = new Thread(Run) { IsBackground = true, Name = "NetServer clock" };

        // The thread must not carry the execution context (and its AsyncLocals) of whichever
        // code happened to arm the first deadline.
        if (ExecutionContext.IsFlowSuppressed())
        {
            thread.Start();
        }
        else
        {
            using (ExecutionContext.SuppressFlow())
                thread.Start();
        }

        return thread;
    }

    // The tick thread: waits for the start of the next tick while something is linked, and
    // without a timeout while nothing is (Schedule pulses it), so an idle wheel has no wake-ups.
    private void Run()
    {
        while (true)
        {
            lock (_lock)
            {
                while (true)
                {
                    if (_linkedCount == 0)
                    {
                        _running = false;
                        Monitor.Wait(_lock);
                        continue;
                    }

                    var delay = MillisecondsUntil(_processedTick + 1);
                    if (delay <= 0)
                        break;
                    Monitor.Wait(_lock, delay);
                }
            }

            Tick();
        }
    }

    private void Tick()
    {
        Interlocked.Increment(ref _tickCount);
        var now = Now;
        var target = now >> _shift;
        while (true)
        {
            TimerEntry? expired;
            lock (_lock)
            {
                var tick = _processedTick + 1;
                if (tick > target)
                    return;

                // After a long stall every slot is walked once, with the latest tick that maps to it.
                if (target - tick >= _slots.Length)
                    tick = target - _slots.Length + 1;
                expired = WalkLocked(tick, now);
                _processedTick = tick;
            }

            Expire(expired);
        }
    }

    // Unlinks the slot's entries whose tick has come (and any disarmed ones): each either expires
    // (claimed, returned in the list), is dropped (disarmed) or is linked again for its later due
    // time (re-armed later since it was linked).
    private TimerEntry? WalkLocked(long tick, long now)
    {
        TimerEntry? expired = null;
        var entry = _slots[tick & _slotMask];
        while (entry is not null)
        {
            var next = entry.SlotNext;
            if (entry.LinkedTick <= tick || entry.ReadDue() == TimerEntry.Disarmed)
            {
                UnlinkLocked(entry);
                while (true)
                {
                    var due = entry.ReadDue();
                    if (due == TimerEntry.Disarmed)
                        break;
                    if (due > now)
                    {
                        LinkLocked(entry, Math.Max(TickOf(due), tick + 1));
                        break;
                    }

                    ClaimingHook?.Invoke(entry);
                    if (entry.TryClaim(due))
                    {
                        entry.ExpiredNext = expired;
                        expired = entry;
                        break;
                    }
                }
            }

            entry = next;
        }

        return expired;
    }

    private void Expire(TimerEntry? entry)
    {
        while (entry is not null)
        {
            var next = entry.ExpiredNext;
            entry.ExpiredNext = null;
            Interlocked.Increment(ref _expiredCount);
            try
            {
                entry.InvokeExpired();
            }
            catch (Exception e)
            {
                // An entry's failure must not stop the clock every other deadline depends on.
                Interlocked.Increment(ref _failureCount);
                Trace.TraceError("NetServer: a timer callback failed: {0}", e);
            }

            entry = next;
        }
    }

    private void LinkLocked(TimerEntry entry, long tick)
    {
        ref var head = ref _slots[tick & _slotMask];
        entry.SlotPrevious = null;
        entry.SlotNext = head;
        if (head is not null)
            head.SlotPrevious = entry;
        head = entry;
        Volatile.Write(ref entry.LinkedTick, tick);
        _linkedCount++;
    }

    private void UnlinkLocked(TimerEntry entry)
    {
        if (entry.SlotPrevious is null)
            _slots[entry.LinkedTick & _slotMask] = entry.SlotNext;
        else
            entry.SlotPrevious.SlotNext = entry.SlotNext;
        if (entry.SlotNext is not null)
            entry.SlotNext.SlotPrevious = entry.SlotPrevious;
        entry.SlotNext = null;
        entry.SlotPrevious = null;

        // A full fence before the caller reads the due time again: see TimerEntry.ArmAt.
        Interlocked.Exchange(ref entry.LinkedTick, NotLinked);
        _linkedCount--;
    }

    // Whole milliseconds until the tick starts, rounded up; zero once it has.
    private int MillisecondsUntil(long tick)
    {
        var delta = (tick << _shift) - Now;
        if (delta <= 0)
            return 0;
        var ms = (long)Math.Ceiling(ToTimeSpan(delta).TotalMilliseconds);
        return (int)Math.Min(Math.Max(ms, 1), int.MaxValue);
    }
}
