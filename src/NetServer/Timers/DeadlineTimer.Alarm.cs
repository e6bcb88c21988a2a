using System.Collections.Generic;
using System.Diagnostics;
using NetServer.Timers;

namespace NetServer;

// How a wait ends: the alarm on the clock, the waiters, and OnTimer run on the thread pool or a service's loop.
public partial class DeadlineTimer
{
    private void CancelWaiters(Waiters waiters)
    {
        lock (_sync)
        {
            if (!_waiting || _waiters != waiters || !EndLocked(canceled: true))
                return;
        }

        _alarm.Queue();
    }

    // On the clock's tick thread: keep it short, hand the callback to the thread pool.
    private void Expire()
    {
        lock (_sync)
        {
            // A firing of an earlier arming that lost to a Cancel or to a Setup that moved the
            // deadline: the current wait is armed on its own and fires when its time comes.
            if (!_waiting || TimerWheel.Now < _due)
                return;
            if (!EndLocked(canceled: false))
                return;
        }

        _alarm.Queue();
    }

    // On a thread-pool thread: one OnTimer per ended wait, in order, never two at once.
    private void RunOutcomes()
    {
        while (true)
        {
            Outcome outcome;
            lock (_sync)
            {
                if (_outcomes.Count == 0)
                {
                    _dispatching = false;
                    return;
                }

                outcome = _outcomes.Dequeue();
            }

            outcome.Waiters?.ReleaseRegistrations();
            try
            {
                OnTimer(outcome.Canceled);
            }
            catch (Exception e)
            {
                ReportException(e);
            }
        }
    }

    private void ReportException(Exception exception)
    {
        try
        {
            OnError(exception);
        }
        catch (Exception e)
        {
            // The handler for failures failed as well: the trace is the last place left to report both.
            Trace.TraceError("NetServer: {0} failed while handling {1}", e, exception);
        }
    }

    private readonly struct Outcome
    {
        public Outcome(bool canceled, Waiters? waiters)
        {
            Canceled = canceled;
            Waiters = waiters;
        }

        public bool Canceled { get; }

        public Waiters? Waiters { get; }
    }

    // The timer's entry on the clock; also the thread-pool work item that runs the timer's
    // outcomes, so neither arming nor dispatching needs a new object.
    private sealed partial class Alarm : TimerEntry, ILoopWork
    {
        private readonly DeadlineTimer _owner;
        private readonly IoLoop? _loop; // chosen once: a timer's callbacks always run on the same loop

        public Alarm(DeadlineTimer owner, TimerWheel wheel, IoService? service)
            : base(wheel)
        {
            _owner = owner;
            _loop = service?.NextLoop();
        }

        /// <summary>Runs the outcomes on the timer's loop, or on the thread pool (no service, or it is stopped).</summary>
        public void Queue()
        {
            if (_loop is null || !_loop.Post(this))
                QueueOnPool();
        }

        void ILoopWork.Execute() => _owner.RunOutcomes();

        protected override void OnExpired() => _owner.Expire();
    }

    // The blocked and awaiting callers of one wait. Made only when a caller blocks or awaits.
    private sealed class Waiters
    {
        private static readonly Action<object?> s_cancel = static state =>
        {
            var waiters = (Waiters)state!;
            waiters._timer.CancelWaiters(waiters);
        };

        private readonly DeadlineTimer _timer;
        private TaskCompletionSource<bool>? _completion;              // under _timer._sync
        private List<CancellationTokenRegistration>? _registrations; // under _timer._sync
        private bool _released;                                      // under _timer._sync

        public Waiters(DeadlineTimer timer) => _timer = timer;

        /// <summary>Set (under the timer's lock) when the wait ended.</summary>
        public bool Ended { get; private set; }

        public bool Canceled { get; private set; }

        public Task<bool> GetTask() =>
            (_completion ??= new TaskCompletionSource<bool>(TaskCreationOptions.RunContinuationsAsynchronously)).Task;

        public void EndLocked(bool canceled)
        {
            Ended = true;
            Canceled = canceled;
            Monitor.PulseAll(_timer._sync);
            _completion?.TrySetResult(!canceled);
        }

        // Outside the timer's lock: disposing a registration waits for its running callback, which takes the lock.
        public void Register(CancellationToken token)
        {
            if (!token.CanBeCanceled)
                return;
            var registration = token.Register(s_cancel, this);
            lock (_timer._sync)
            {
                if (!_released)
                {
                    (_registrations ??= new List<CancellationTokenRegistration>(1)).Add(registration);
                    return;
                }
            }

            registration.Dispose();
        }

        public void ReleaseRegistrations()
        {
            List<CancellationTokenRegistration>? registrations;
            lock (_timer._sync)
            {
                _released = true;
                registrations = _registrations;
                _registrations = null;
            }

            if (registrations is null)
                return;
            foreach (var registration in registrations)
                registration.Dispose();
        }
    }
}
