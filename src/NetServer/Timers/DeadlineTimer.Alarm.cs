using System;
using System.Collections.Generic;
using System.Threading;
using System.Threading.Tasks;
using NetServer.Timers;

namespace NetServer;

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

    // The timer's entry on the clock; also the thread-pool work item that runs the timer's
    // outcomes, so neither arming nor dispatching needs a new object.
    private sealed partial class Alarm : TimerEntry
    {
        private readonly DeadlineTimer _owner;

        public Alarm(DeadlineTimer owner, TimerWheel wheel)
            : base(wheel) => _owner = owner;

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
