using System;
using System.Diagnostics.CodeAnalysis;
using System.Threading;
using BenchmarkDotNet.Attributes;
using NetServer.Timers;

namespace NetServer.MicroBenchmarks;

/// <summary>
/// Arming deadlines on the shared clock: the lazy re-arm (later than where the entry is linked,
/// the common case of an idle timeout pushed on by traffic), a move earlier (under the wheel's
/// lock), a disarm, and <see cref="DeadlineTimer"/>'s setup and wait; with the re-arm of one
/// <see cref="Timer"/> per deadline (what the wheel replaces) for reference.
/// </summary>
[MemoryDiagnoser]
[SuppressMessage("Design", "CA1001", Justification = "BenchmarkDotNet disposes them in GlobalCleanup.")]
public class TimerBenchmarks
{
    private static readonly TimeSpan s_idleTimeout = TimeSpan.FromMinutes(10);

    private TimerEntry _later = null!;
    private TimerEntry _earlier = null!;
    private TimerEntry _disarmed = null!;
    private DeadlineTimer _pending = null!;
    private DeadlineTimer _cycled = null!;
    private Timer _timer = null!;
    private long _laterDue;
    private long _tickLength;
    private long _earlierDue;
    private long _earlierFloor;
    private long _earlierStart;

    private sealed class NullEntry() : TimerEntry(TimerWheel.Shared)
    {
        protected override void OnExpired()
        {
        }
    }

    [GlobalSetup]
    public void Setup()
    {
        _later = new NullEntry();
        _later.ArmAfter(s_idleTimeout);
        _laterDue = TimerWheel.Now + TimerWheel.ToTimestampDelta(TimeSpan.FromMinutes(20));
        _disarmed = new NullEntry();
        _disarmed.ArmAfter(s_idleTimeout);

        // Each call moves the entry one tick earlier than the last: always the locked path.
        _tickLength = TimerWheel.ToTimestampDelta(TimerWheel.Shared.TickLength);
        _earlierStart = TimerWheel.Now + TimerWheel.ToTimestampDelta(TimeSpan.FromDays(1000));
        _earlierFloor = TimerWheel.Now + TimerWheel.ToTimestampDelta(TimeSpan.FromDays(1));
        _earlierDue = _earlierStart;
        _earlier = new NullEntry();
        _earlier.ArmAt(_earlierDue);

        _pending = new DeadlineTimer(_ => { });
        _pending.Setup(s_idleTimeout);
        _pending.WaitAsync();
        _cycled = new DeadlineTimer(_ => { });
        _timer = new Timer(_ => { }, null, Timeout.Infinite, Timeout.Infinite);
    }

    [GlobalCleanup]
    public void Cleanup()
    {
        _later.Disarm();
        _earlier.Disarm();
        _disarmed.Disarm();
        _pending.Dispose();
        _cycled.Dispose();
        _timer.Dispose();
    }

    /// <summary>Push a pending deadline on: only the due time is written.</summary>
    [Benchmark(Baseline = true)]
    public void ArmAfterLater() => _later.ArmAfter(s_idleTimeout);

    /// <summary>As <see cref="ArmAfterLater"/> with the timestamp already known (no clock read): the re-arm itself.</summary>
    [Benchmark]
    public void ArmAtLater() => _later.ArmAt(_laterDue);

    /// <summary>The clock read every ArmAfter makes (a Stopwatch timestamp).</summary>
    [Benchmark]
    [SuppressMessage("Performance", "CA1822", Justification = "A benchmark is an instance method.")]
    public long ClockNow() => TimerWheel.Now;

    /// <summary>Bring a pending deadline one tick earlier than where it is linked: moved under the lock.</summary>
    [Benchmark]
    public void ArmAtEarlier()
    {
        _earlierDue -= _tickLength;
        if (_earlierDue < _earlierFloor)
            _earlierDue = _earlierStart;
        _earlier.ArmAt(_earlierDue);
    }

    /// <summary>Cancel a deadline (it stays linked until the wheel walks its slot).</summary>
    [Benchmark]
    public bool Disarm() => _disarmed.Disarm();

    /// <summary>Arm then cancel: what a request timeout costs when the response comes in time.</summary>
    [Benchmark]
    public bool ArmAfterThenDisarm()
    {
        _disarmed.ArmAfter(s_idleTimeout);
        return _disarmed.Disarm();
    }

    /// <summary>DeadlineTimer: set a pending timer up again and wait (moves its deadline later).</summary>
    [Benchmark]
    public bool DeadlineTimerSetupWaitAsync()
    {
        _pending.Setup(s_idleTimeout);
        return _pending.WaitAsync();
    }

    /// <summary>DeadlineTimer: a whole wait, armed and cancelled; OnTimer(true) runs on the thread pool.</summary>
    [Benchmark]
    public bool DeadlineTimerSetupWaitAsyncCancel()
    {
        _cycled.Setup(s_idleTimeout);
        _cycled.WaitAsync();
        return _cycled.Cancel();
    }

    /// <summary>For reference: re-arming a System.Threading.Timer of its own per deadline.</summary>
    [Benchmark]
    public bool ThreadingTimerChange() => _timer.Change(s_idleTimeout, Timeout.InfiniteTimeSpan);
}
