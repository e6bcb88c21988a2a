using System;
using System.Collections.Concurrent;
using System.Linq;
using System.Threading;
using System.Threading.Tasks;
using NetServer.Tests.Infrastructure;
using NetServer.Timers;
using Xunit;

namespace NetServer.Tests.Timers;

public class TimerWheelTests
{
    private static readonly TimeSpan s_timeout = TimeSpan.FromSeconds(20);

    // How late an expiry may come beyond one tick: generous, since the clock ticks on the thread
    // pool and a loaded 2-core machine running the other tests delays it (typical lateness is in
    // docs/timers.md); it still fails an expiry a tick chain or a round late.
    private static readonly TimeSpan s_slack = TimeSpan.FromSeconds(1);

    [Fact]
    public void The_shared_wheel_ticks_about_every_10_ms()
    {
        var tick = TimerWheel.Shared.TickLength;
        Assert.InRange(tick.TotalMilliseconds, 5, 20);
        Assert.Equal(1024, TimerWheel.Shared.SlotCount);
    }

    [Fact]
    public async Task Entries_expire_in_due_order_never_early_and_within_a_tick_plus_slack()
    {
        var wheel = new TimerWheel(TimeSpan.FromMilliseconds(10));
        var order = new ConcurrentQueue<int>();
        var delays = new[] { 250, 50, 200, 100, 150 };
        var entries = delays.Select(d => new CountingEntry(wheel, d) { Expired = e => order.Enqueue(e.Id) }).ToArray();
        foreach (var entry in entries)
            entry.ArmIn(TimeSpan.FromMilliseconds(entry.Id));

        await Task.WhenAll(entries.Select(e => e.Fired.Task)).WaitAsync(s_timeout);

        // Due order is the order of the absolute due times: on a loaded machine the arming loop
        // itself can stall, so a longer delay armed first may be due before a shorter one armed later.
        // Entries due within one tick of each other expire in the same turn, in either order.
        var fired = order.Select(id => entries.Single(e => e.Id == id)).ToArray();
        Assert.Equal(entries.Length, fired.Length);
        for (var i = 1; i < fired.Length; i++)
        {
            var gap = TimerWaits.Elapsed(fired[i].ArmedDue, fired[i - 1].ArmedDue);
            Assert.True(gap <= wheel.TickLength, $"{fired[i - 1].Id} ms expired before {fired[i].Id} ms though due {gap.TotalMilliseconds:0.#} ms after it");
        }

        foreach (var entry in entries)
        {
            Assert.Equal(1, entry.Calls);
            Assert.Equal(0, entry.EarlyCalls);
            Assert.False(entry.IsArmed);
            Assert.Equal(TimerEntry.Disarmed, entry.Due);
            var late = TimerWaits.Elapsed(entry.ArmedDue, entry.CallTimes.Single());
            Assert.InRange(late, TimeSpan.Zero, wheel.TickLength + s_slack);
        }
    }

    [Fact]
    public async Task Rearming_later_only_moves_the_due_time_and_fires_once_at_the_later_time()
    {
        var wheel = new TimerWheel(TimeSpan.FromMilliseconds(10));
        var entry = new CountingEntry(wheel);
        // Far enough out that the allocation measure (slow on a loaded machine) ends before the
        // first due tick: the wheel relinks an entry it finds not yet due, which is not what is checked.
        entry.ArmIn(TimeSpan.FromMilliseconds(1000));
        var linked = entry.LinkedTick;
        Assert.NotEqual(TimerWheel.NotLinked, linked);

        var allocated = Allocations.Least(() => entry.ArmAfter(TimeSpan.FromMilliseconds(1500)), roundsPerWindow: 1000);
        Assert.Equal(0, allocated);

        entry.ArmIn(TimeSpan.FromMilliseconds(2000));
        Assert.Equal(linked, entry.LinkedTick); // lazy: still where the first arming put it
        Assert.True(entry.IsArmed);

        await entry.Fired.Task.WaitAsync(s_timeout);
        Assert.Equal(0, entry.EarlyCalls);
        Assert.Equal(1, entry.Calls);
        Assert.InRange(TimerWaits.Elapsed(entry.ArmedDue, entry.CallTimes.Single()), TimeSpan.Zero, wheel.TickLength + s_slack);
    }

    [Fact]
    public async Task Rearming_earlier_moves_the_entry_and_fires_at_the_earlier_time()
    {
        var wheel = new TimerWheel(TimeSpan.FromMilliseconds(10));
        var entry = new CountingEntry(wheel);
        entry.ArmIn(TimeSpan.FromSeconds(30));
        var linked = entry.LinkedTick;

        entry.ArmIn(TimeSpan.FromMilliseconds(50));
        Assert.True(entry.LinkedTick < linked);
        Assert.Equal(1, wheel.LinkedCount);

        await entry.Fired.Task.WaitAsync(s_timeout);
        Assert.Equal(0, entry.EarlyCalls);
        Assert.InRange(TimerWaits.Elapsed(entry.ArmedDue, entry.CallTimes.Single()), TimeSpan.Zero, wheel.TickLength + s_slack);
    }

    [Fact]
    public async Task Rearming_earlier_later_and_disarming_allocate_nothing()
    {
        var wheel = new TimerWheel(TimeSpan.FromMilliseconds(10), 64); // a short round, to see the drop soon
        var entries = Enumerable.Range(0, 1000).Select(i => new CountingEntry(wheel, i)).ToArray();
        foreach (var entry in entries)
            entry.ArmAfter(TimeSpan.FromMinutes(10));

        // A round goes over every entry; each round's earlier due time is 10 s before the last
        // round's, so every round moves every entry under the lock again (a due time after the
        // tick an entry is linked at would only be written). One round warms up, up to three are measured.
        var earlier = TimeSpan.FromMinutes(1);
        var allocated = Allocations.Least(() =>
        {
            foreach (var entry in entries)
            {
                entry.ArmAfter(earlier);                  // earlier: moved under the lock
                entry.ArmAfter(TimeSpan.FromMinutes(10)); // later: only the due time
                entry.Disarm();
                entry.ArmAfter(TimeSpan.FromMinutes(5));
            }

            earlier -= TimeSpan.FromSeconds(10);
        }, roundsPerWindow: 1, warmUp: 1);

        Assert.Equal(0, allocated);
        Assert.Equal(entries.Length, wheel.LinkedCount); // each linked once, however often re-armed
        foreach (var entry in entries)
            Assert.True(entry.Disarm());
        await TimerWaits.UntilAsync(() => !wheel.IsRunning, s_timeout, () => "the wheel to drop the disarmed entries");
    }

    [Fact]
    public async Task A_disarmed_entry_is_not_called_and_is_dropped_within_one_round()
    {
        // 64 slots of about 1 ms: a round is about 64 ms, far shorter than the 60 s deadline.
        var wheel = new TimerWheel(TimeSpan.FromMilliseconds(1), 64);
        var soon = new CountingEntry(wheel);
        var far = new CountingEntry(wheel);
        soon.ArmIn(TimeSpan.FromMilliseconds(50));
        far.ArmIn(TimeSpan.FromSeconds(60));
        Assert.True(soon.Disarm());
        Assert.True(far.Disarm());
        Assert.False(far.Disarm());
        Assert.Equal(2, wheel.LinkedCount); // disarm leaves them linked

        await TimerWaits.UntilAsync(() => wheel.LinkedCount == 0 && !wheel.IsRunning, s_timeout, () => $"{wheel.LinkedCount} linked");

        // The soon entry's tick has passed and it was dropped, not called.
        Assert.Equal(0, soon.Calls);
        Assert.Equal(0, far.Calls);
        Assert.Equal(0, wheel.ExpiredCount);
    }

    [Fact]
    public async Task An_entry_rearmed_from_its_own_callback_fires_again()
    {
        var wheel = new TimerWheel(TimeSpan.FromMilliseconds(10));
        var done = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var entry = new CountingEntry(wheel);
        entry.Expired = e =>
        {
            if (e.Calls < 5)
                e.ArmIn(TimeSpan.FromMilliseconds(20));
            else
                done.TrySetResult();
        };
        entry.ArmIn(TimeSpan.FromMilliseconds(20));

        await done.Task.WaitAsync(s_timeout);
        Assert.Equal(5, entry.Calls);
        Assert.Equal(0, entry.EarlyCalls);
        Assert.False(entry.IsArmed);
    }

    [Fact]
    public async Task The_tick_thread_wakes_only_while_something_is_armed()
    {
        var wheel = new TimerWheel(TimeSpan.FromMilliseconds(10));
        Assert.False(wheel.IsRunning);
        Assert.Equal(0, wheel.StartCount);

        string? threadName = null;
        var pooled = true;
        var entry = new CountingEntry(wheel)
        {
            Expired = _ =>
            {
                threadName = Thread.CurrentThread.Name;
                pooled = Thread.CurrentThread.IsThreadPoolThread;
            },
        };
        entry.ArmIn(TimeSpan.FromMilliseconds(30));
        Assert.True(wheel.IsRunning);
        Assert.Equal(1, wheel.StartCount);
        await entry.Fired.Task.WaitAsync(s_timeout);
        Assert.Equal("NetServer clock", threadName); // the wheel's own thread, not the pool
        Assert.False(pooled);
        await TimerWaits.UntilAsync(() => !wheel.IsRunning, s_timeout, () => "the wheel to stop");

        // Stopped: no tick at all for a while, however many ticks' time passes.
        var ticks = wheel.TickCount;
        await Task.Delay(wheel.TickLength * 20);
        Assert.Equal(ticks, wheel.TickCount);
        Assert.False(wheel.IsRunning);

        // Arming again starts it again, and the ticks missed while idle do not matter.
        var again = new CountingEntry(wheel);
        again.ArmIn(TimeSpan.FromMilliseconds(30));
        Assert.Equal(2, wheel.StartCount);
        await again.Fired.Task.WaitAsync(s_timeout);
        Assert.Equal(0, again.EarlyCalls);
        Assert.InRange(TimerWaits.Elapsed(again.ArmedDue, again.CallTimes.Single()), TimeSpan.Zero, wheel.TickLength + s_slack);
        await TimerWaits.UntilAsync(() => !wheel.IsRunning, s_timeout, () => "the wheel to stop again");
    }

    [Fact]
    public async Task A_callback_that_throws_is_counted_and_the_clock_keeps_ticking()
    {
        var wheel = new TimerWheel(TimeSpan.FromMilliseconds(10));
        var thrower = new CountingEntry(wheel) { Expired = _ => throw new InvalidOperationException("test failure") };
        var later = new CountingEntry(wheel);
        thrower.ArmIn(TimeSpan.FromMilliseconds(20));
        later.ArmIn(TimeSpan.FromMilliseconds(80));

        await later.Fired.Task.WaitAsync(s_timeout);
        Assert.Equal(1, thrower.Calls);
        Assert.Equal(1, wheel.FailureCount);
        Assert.Equal(2, wheel.ExpiredCount);
    }

    [Fact]
    public async Task A_hundred_thousand_entries_at_various_delays_each_fire_once_and_never_early()
    {
        const int Count = 100_000;
        var wheel = new TimerWheel(TimeSpan.FromMilliseconds(10));
        var fired = 0;
        var all = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var random = new Random(7);
        var entries = new CountingEntry[Count];
        for (var i = 0; i < Count; i++)
        {
            entries[i] = new CountingEntry(wheel, i)
            {
                Expired = _ =>
                {
                    if (Interlocked.Increment(ref fired) == Count)
                        all.TrySetResult();
                },
            };
        }

        // Delays up to 10 s wrap the 1024-slot wheel (8.6 s a round on Linux) and share slots across rounds.
        foreach (var entry in entries)
            entry.ArmIn(TimeSpan.FromMilliseconds(random.Next(0, 10_000)));

        await all.Task.WaitAsync(TimeSpan.FromSeconds(60));
        Assert.All(entries, e => Assert.Equal(1, e.Calls));
        Assert.Equal(0, entries.Sum(e => e.EarlyCalls));
        await TimerWaits.UntilAsync(() => wheel.LinkedCount == 0 && !wheel.IsRunning, s_timeout, () => $"{wheel.LinkedCount} still linked");
        Assert.Equal(Count, wheel.ExpiredCount);
    }
}
