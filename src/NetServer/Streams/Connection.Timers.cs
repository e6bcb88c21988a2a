using NetServer.Timers;

namespace NetServer.Streams;

/// <summary>
/// The connection's deadlines, all on the process's shared clock (<see cref="TimerWheel"/>) through
/// one entry per connection: the idle timeout, the send stall timeout, the graceful close's limit (linger), and the wait for
/// the receive loop's verdict after a write found the peer gone. Only a connection that needs one
/// creates the entry; re-arming allocates nothing.
/// </summary>
/// <remarks>
/// The idle timeout costs the I/O paths one clock read (only when it is set): the entry is armed
/// for the end of the idle period and, when it fires, compares with the last activity and re-arms
/// for the rest instead of closing. Expiries run on the clock's thread only to schedule the work
/// on the thread pool, where the close (and its hooks) run.
/// </remarks>
internal sealed partial class Connection
{
    private static readonly Action<object?> s_deadlinePassed = static state => ((Connection)state!).DeadlinePassed();

    private Deadline? _deadline;      // created on first use; its own object locks the due times below
    private long _idleTicks;          // OptionIdleTimeout as clock ticks; 0 = none
    private long _lastActivity;       // clock timestamp of the last byte moved (with an idle timeout)
    private long _stallTicks;         // OptionSendStallTimeout as clock ticks, set when the backlog first paused receiving; 0 = none
    private long _sendProgress;       // clock timestamp of the pause, then of each send the kernel took while paused
    private long _lingerDue = TimerEntry.Disarmed;
    private long _lostPeerDue = TimerEntry.Disarmed;

    /// <summary>The connection's one entry on the shared clock.</summary>
    private sealed class Deadline(Connection connection) : TimerEntry
    {
        // Runs on the clock's thread: hand the work to the pool at once.
        protected override void OnExpired() => ThreadPoolScheduler.Schedule(s_deadlinePassed, connection);
    }

    /// <summary>When the connection opens (after the connect hooks): arms the idle timeout if the owner set one.</summary>
    private void StartIdleTimer()
    {
        var idle = _owner.OptionIdleTimeout;
        if (idle == Timeout.InfiniteTimeSpan)
            return;
        _idleTicks = Math.Max(1, TimerWheel.ToTimestampDelta(idle));
        Volatile.Write(ref _lastActivity, TimerWheel.Now);
        Rearm();
    }

    /// <summary>Bytes moved (received, or taken by the kernel): the idle period starts again.</summary>
    private void NoteActivity()
    {
        if (_idleTicks != 0)
            Volatile.Write(ref _lastActivity, TimerWheel.Now);
    }

    /// <summary>The send backlog paused receiving: from now the peer must take bytes within OptionSendStallTimeout.</summary>
    private void StartStallTimer()
    {
        var stall = _owner.OptionSendStallTimeout;
        if (stall == Timeout.InfiniteTimeSpan)
            return;
        _stallTicks = Math.Max(1, TimerWheel.ToTimestampDelta(stall));
        Volatile.Write(ref _sendProgress, TimerWheel.Now);
        Rearm();
    }

    /// <summary>The kernel took bytes: while the backlog holds receiving, the stall period starts again (one clock read, only then).</summary>
    private void NoteSendProgress()
    {
        if (_stallTicks != 0 && IsStalledBySendBacklog)
            Volatile.Write(ref _sendProgress, TimerWheel.Now);
    }

    private bool IsStalledBySendBacklog => (Volatile.Read(ref _pause) & PausedBySendBacklog) != 0;

    /// <summary>Bounds a graceful close (<see cref="StreamConnection.OptionDisconnectTimeout"/>).</summary>
    private void StartLingerTimer(TimeSpan timeout)
    {
        Interlocked.CompareExchange(ref _lingerDue, TimerWheel.Now + TimerWheel.ToTimestampDelta(timeout), TimerEntry.Disarmed);
        Rearm();
    }

    /// <summary>Bounds the wait for the receive loop's verdict after a write found the peer gone.</summary>
    private void StartLostPeerTimer(TimeSpan timeout)
    {
        Interlocked.CompareExchange(ref _lostPeerDue, TimerWheel.Now + TimerWheel.ToTimestampDelta(timeout), TimerEntry.Disarmed);
        Rearm();
    }

    private void StopLostPeerTimer() => Volatile.Write(ref _lostPeerDue, TimerEntry.Disarmed);

    private bool _timersStopped;      // under the deadline's lock: Finish ran, nothing re-arms

    private void StopTimers()
    {
        if (Volatile.Read(ref _deadline) is not { } deadline)
            return;
        lock (deadline)
        {
            _timersStopped = true;
            deadline.Disarm();
        }
    }

    /// <summary>Arms the entry for the earliest deadline still pending (none: disarms it).</summary>
    private void Rearm()
    {
        var deadline = Volatile.Read(ref _deadline);
        if (deadline is null)
        {
            deadline = new Deadline(this);
            deadline = Interlocked.CompareExchange(ref _deadline, deadline, null) ?? deadline;
        }

        lock (deadline)
        {
            var due = Math.Min(Volatile.Read(ref _lingerDue), Volatile.Read(ref _lostPeerDue));
            if (_idleTicks != 0 && IsOpen)
                due = Math.Min(due, Volatile.Read(ref _lastActivity) + _idleTicks);
            if (_stallTicks != 0 && IsOpen && IsStalledBySendBacklog)
                due = Math.Min(due, Volatile.Read(ref _sendProgress) + _stallTicks);
            if (_timersStopped || IsFinished || due == TimerEntry.Disarmed)
                deadline.Disarm();
            else
                deadline.ArmAt(due);
        }
    }

    /// <summary>On the thread pool after the entry fired: acts on every deadline that passed, re-arms for the next.</summary>
    private void DeadlinePassed()
    {
        if (IsFinished)
            return;
        var now = TimerWheel.Now;
        if (Volatile.Read(ref _lingerDue) <= now && Interlocked.Exchange(ref _lingerDue, TimerEntry.Disarmed) != TimerEntry.Disarmed)
            LingerExpired();
        if (Volatile.Read(ref _lostPeerDue) <= now && Interlocked.Exchange(ref _lostPeerDue, TimerEntry.Disarmed) != TimerEntry.Disarmed)
            EndAfterLostPeer();
        if (_idleTicks != 0 && IsOpen && Volatile.Read(ref _lastActivity) + _idleTicks <= now)
            Close(DisconnectReason.IdleTimeout);
        if (_stallTicks != 0 && IsOpen && IsStalledBySendBacklog && Volatile.Read(ref _sendProgress) + _stallTicks <= now)
        {
            // A graceful close would wait for the backlog the peer does not take: abort.
            Abort(DisconnectReason.TimedOut, new TimeoutException(
                $"The peer took none of the {Volatile.Read(ref _bytesPending)} queued bytes for {_owner.OptionSendStallTimeout} (OptionSendStallTimeout) while they held receiving."));
        }

        Rearm();
    }
}
