using System.Diagnostics;

namespace NetServer.Internal;

/// <summary>
/// One blocking wait for one condition (a connection finishing, a handshake ending, a blocking
/// read completing): each purpose gets its own, so a pulse for one never wakes a waiter of
/// another. The lock object is created by the first waiter only, so an object that nobody ever
/// waits on carries no lock.
/// </summary>
/// <remarks>
/// Whoever makes the condition true writes it first and then calls <see cref="PulseAll"/>, which
/// fences before it looks for a lock: either it finds the waiter's lock, or the waiter (which
/// fences when it publishes the lock) finds the condition already true.
/// </remarks>
internal struct WaitPoint
{
    private object? _gate;

    /// <summary>
    /// Blocks until <paramref name="done"/> holds for <paramref name="state"/> or
    /// <paramref name="timeout"/> passes (<see cref="Timeout.InfiniteTimeSpan"/>: no limit); returns
    /// the condition's last value.
    /// </summary>
    public bool WaitUntil<TState>(TState state, Func<TState, bool> done, TimeSpan timeout)
    {
        if (done(state))
            return true;
        var gate = Volatile.Read(ref _gate);
        if (gate is null)
        {
            gate = new object();
            gate = Interlocked.CompareExchange(ref _gate, gate, null) ?? gate;
        }

        var infinite = timeout == Timeout.InfiniteTimeSpan;
        var deadline = infinite ? 0 : Stopwatch.GetTimestamp() + (long)(Math.Min(timeout.TotalSeconds, 1e9) * Stopwatch.Frequency);
        lock (gate)
        {
            while (!done(state))
            {
                if (infinite)
                {
                    Monitor.Wait(gate);
                    continue;
                }

                var left = (deadline - Stopwatch.GetTimestamp()) * 1000 / Stopwatch.Frequency;
                if (left <= 0)
                    return false;
                Monitor.Wait(gate, (int)Math.Min(left + 1, int.MaxValue));
            }
        }

        return true;
    }

    /// <summary>Wakes every waiter; call it after making the condition true.</summary>
    public void PulseAll()
    {
        Interlocked.MemoryBarrier();
        var gate = Volatile.Read(ref _gate);
        if (gate is null)
            return;
        lock (gate)
            Monitor.PulseAll(gate);
    }
}
