
namespace NetServer.Timers;

/// <summary>
/// One deadline on a <see cref="TimerWheel"/>: a connection's idle timeout, a request's header
/// timeout, a WebSocket ping. Subclass it, arm it with <see cref="ArmAfter"/> or
/// <see cref="ArmAt"/>, and <see cref="OnExpired"/> is called once when the deadline passes.
/// Arming, re-arming and disarming allocate nothing and may be called from any thread.
/// </summary>
/// <remarks>
/// <para>
/// <b>Lazy re-arm.</b> The due time (<see cref="Due"/>) is the truth; where the entry is linked in
/// the wheel is only a hint that is never later than it. Moving the deadline later (the common
/// case: "more bytes arrived, push the idle timeout") only writes the due time: no lock, no
/// relinking. When the wheel reaches the old position it sees the deadline has not passed and
/// links the entry again further on. Moving it earlier than where it is linked takes the wheel's
/// lock and moves it. <see cref="Disarm"/> only writes "never"; the wheel drops the entry when it
/// next walks its slot. An entry is linked at most once, so nothing grows however often it is
/// re-armed.
/// </para>
/// <para>
/// <b>Exactly once per arming.</b> An arming ends either by <see cref="OnExpired"/> (called once)
/// or by being replaced (<see cref="ArmAt"/> again) or <see cref="Disarm"/>ed before the wheel
/// claims it (no call). The wheel claims an expiry by swapping the due time it saw for "never";
/// an arm or disarm that lands first makes that swap fail, so a race between a tick and
/// <c>Arm</c>/<c>Disarm</c> gives one call or none, never two. An arm that lands just after the
/// claim is a new arming and fires on its own.
/// </para>
/// </remarks>
public abstract class TimerEntry
{
    /// <summary>The due time of a disarmed entry.</summary>
    public const long Disarmed = long.MaxValue;

    private readonly TimerWheel _wheel;
    private long _due = Disarmed;

    // Owned by the wheel: the intrusive slot list and the tick the entry is linked at
    // (TimerWheel.NotLinked when in no slot). Changed only under the wheel's lock; LinkedTick is
    // also read without it by ArmAt.
    internal TimerEntry? SlotNext;
    internal TimerEntry? SlotPrevious;
    internal TimerEntry? ExpiredNext;
    internal long LinkedTick = TimerWheel.NotLinked;

    /// <summary>An entry on the process-wide <see cref="TimerWheel.Shared"/> clock.</summary>
    protected TimerEntry()
        : this(TimerWheel.Shared)
    {
    }

    /// <summary>An entry on <paramref name="wheel"/> (tests use their own wheels).</summary>
    protected TimerEntry(TimerWheel wheel) => _wheel = wheel ?? throw new ArgumentNullException(nameof(wheel));

    /// <summary>The wheel this entry is armed on.</summary>
    public TimerWheel Wheel => _wheel;

    /// <summary>True while an arming is pending (it has neither expired nor been disarmed).</summary>
    public bool IsArmed => Volatile.Read(ref _due) != Disarmed;

    /// <summary>
    /// The pending deadline as a <see cref="TimerWheel.Now"/> timestamp, or
    /// <see cref="Disarmed"/> (<see cref="long.MaxValue"/>) when nothing is pending.
    /// </summary>
    public long Due => Volatile.Read(ref _due);

    /// <summary>Arms (or re-arms) the entry to expire <paramref name="delay"/> from now; zero or negative means at the next tick.</summary>
    public void ArmAfter(TimeSpan delay) => ArmAt(TimerWheel.Now + TimerWheel.ToTimestampDelta(delay));

    /// <summary>
    /// Arms (or re-arms) the entry to expire at <paramref name="dueTimestamp"/>, a
    /// <see cref="TimerWheel.Now"/> timestamp; one in the past expires at the next tick. Replaces
    /// any pending arming. Lock-free when the entry is already linked no later than the new
    /// deadline's tick.
    /// </summary>
    public void ArmAt(long dueTimestamp)
    {
        dueTimestamp = TimerWheel.ClampDue(dueTimestamp);

        // A full fence between writing the due time and reading the link: the wheel does the
        // opposite (unlinks, then reads the due time), so one of the two always sees the other.
        Interlocked.Exchange(ref _due, dueTimestamp);
        if (Volatile.Read(ref LinkedTick) <= _wheel.TickOf(dueTimestamp))
            return;
        _wheel.Schedule(this);
    }

    /// <summary>
    /// Ends the pending arming without a call. Returns true when an arming was pending and is now
    /// cancelled (no <see cref="OnExpired"/> for it will come); false when none was pending, or
    /// the wheel had already claimed it (its <see cref="OnExpired"/> is running or about to).
    /// </summary>
    public bool Disarm() => Interlocked.Exchange(ref _due, Disarmed) != Disarmed;

    /// <summary>
    /// Called once per arming that expires, never before its due time, at most about one tick
    /// (plus the tick thread's own lateness) after it. It runs on the clock's tick thread (the
    /// wheel's own background thread, not the thread pool), outside the wheel's lock, one entry
    /// after another: keep it short and never block, since every other deadline of the process
    /// waits meanwhile; queue anything longer. It may re-arm this entry or any other. An exception
    /// it throws is caught and traced; the clock keeps ticking.
    /// </summary>
    protected abstract void OnExpired();

    internal void InvokeExpired() => OnExpired();

    internal long ReadDue() => Volatile.Read(ref _due);

    /// <summary>Claims the expiry of the arming whose due time was <paramref name="observed"/>: true for exactly one caller, false when an arm or disarm came first.</summary>
    internal bool TryClaim(long observed) => Interlocked.CompareExchange(ref _due, Disarmed, observed) == observed;
}
