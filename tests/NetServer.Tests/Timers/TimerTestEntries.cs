using System;
using System.Collections.Concurrent;
using System.Threading;
using System.Threading.Tasks;
using NetServer.Timers;

namespace NetServer.Tests.Timers;

/// <summary>An entry that counts its calls, records when each came and signals the first.</summary>
internal sealed class CountingEntry(TimerWheel wheel, int id = 0) : TimerEntry(wheel)
{
    private int _calls;

    public int Id { get; } = id;

    public int Calls => Volatile.Read(ref _calls);

    /// <summary>The due time the test armed last (set by the test before arming).</summary>
    public long ArmedDue { get; set; }

    /// <summary>Calls that came before <see cref="ArmedDue"/>.</summary>
    public int EarlyCalls { get; private set; }

    public ConcurrentQueue<long> CallTimes { get; } = new();

    public TaskCompletionSource Fired { get; } = new(TaskCreationOptions.RunContinuationsAsynchronously);

    public Action<CountingEntry>? Expired { get; set; }

    protected override void OnExpired()
    {
        var now = TimerWheel.Now;
        if (now < ArmedDue)
            EarlyCalls++;
        CallTimes.Enqueue(now);
        Interlocked.Increment(ref _calls);
        Expired?.Invoke(this);
        Fired.TrySetResult();
    }

    /// <summary>Records the due time, then arms.</summary>
    public void ArmIn(TimeSpan delay)
    {
        ArmedDue = TimerWheel.Now + TimerWheel.ToTimestampDelta(delay);
        ArmAt(ArmedDue);
    }
}

internal static class TimerWaits
{
    /// <summary>Waits until <paramref name="condition"/> holds, failing with <paramref name="what"/> after <paramref name="timeout"/>.</summary>
    public static async Task UntilAsync(Func<bool> condition, TimeSpan timeout, Func<string> what)
    {
        var deadline = DateTime.UtcNow + timeout;
        while (!condition())
        {
            if (DateTime.UtcNow > deadline)
                throw new TimeoutException("Timed out waiting for: " + what());
            await Task.Delay(5);
        }
    }

    public static TimeSpan Elapsed(long from, long to) => TimerWheel.ToTimeSpan(to - from);
}
