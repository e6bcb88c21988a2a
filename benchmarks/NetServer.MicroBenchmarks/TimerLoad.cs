using System;
using System.Diagnostics;
using System.Globalization;
using System.Linq;
using System.Threading;
using NetServer.Timers;

namespace NetServer.MicroBenchmarks;

/// <summary>
/// What 100,000 armed deadlines cost on the shared clock: managed memory per entry (and per
/// <see cref="DeadlineTimer"/>, and per <see cref="Timer"/> for reference), and process CPU time
/// per second of wall time in four phases: idle, armed and left alone, re-armed every tick by a
/// background loop, and expiring about once a second each (re-armed from their callbacks, with
/// the lateness of each expiry); and, for reference, what a wake-up every tick costs through a
/// <see cref="Timer"/> and through a thread waiting on a monitor. Run: <c>-- timer-load [seconds per phase] [entries]</c>.
/// </summary>
internal static class TimerLoad
{
    private sealed class NullEntry() : TimerEntry(TimerWheel.Shared)
    {
        protected override void OnExpired()
        {
        }
    }

    private sealed class LoadEntry() : TimerEntry(TimerWheel.Shared)
    {
        public static long Expired;
        public static long[] Lateness = new long[1];
        public static volatile bool Rearm;
        public long ArmedDue;
        public int Seed;

        protected override void OnExpired()
        {
            var index = Interlocked.Increment(ref Expired) - 1;
            var lateness = Lateness;
            if (index < lateness.Length)
                lateness[index] = TimerWheel.Now - ArmedDue;
            if (Rearm)
            {
                // Next expiry 0.5 to 1.5 s on, spread by a cheap per-entry sequence.
                Seed = (Seed * 1103515245) + 12345;
                ArmIn(TimeSpan.FromMilliseconds(500 + ((Seed >> 8) & 1023)));
            }
        }

        public void ArmIn(TimeSpan delay)
        {
            ArmedDue = TimerWheel.Now + TimerWheel.ToTimestampDelta(delay);
            ArmAt(ArmedDue);
        }
    }

    public static void Run(string[] args)
    {
        var seconds = args.Length > 0 ? int.Parse(args[0], CultureInfo.InvariantCulture) : 10;
        var count = args.Length > 1 ? int.Parse(args[1], CultureInfo.InvariantCulture) : 100_000;
        var wheel = TimerWheel.Shared;
        Console.WriteLine($"{count:N0} deadlines, {seconds} s per phase, tick {wheel.TickLength.TotalMilliseconds:0.0} ms, {wheel.SlotCount} slots, {Environment.ProcessorCount} cores");

        var entryBytes = MeasureBytes(count, () => new NullEntry());
        var timerBytes = MeasureBytes(count, () => new DeadlineTimer());
        var threadingTimerBytes = MeasureBytes(count, () => new Timer(_ => { }, null, Timeout.Infinite, Timeout.Infinite));
        Console.WriteLine($"memory per TimerEntry (no fields of its own): {entryBytes:0.0} B (arming adds none)");
        Console.WriteLine($"memory per DeadlineTimer: {timerBytes:0.0} B");
        Console.WriteLine($"memory per System.Threading.Timer, for reference: {threadingTimerBytes:0.0} B");

        var random = new Random(1);
        var entries = Enumerable.Range(0, count).Select(i => new LoadEntry { Seed = i }).ToArray();

        Phase("idle: nothing armed", seconds, wheel);
        ReferenceWakeups(seconds, wheel);

        foreach (var entry in entries)
            entry.ArmIn(TimeSpan.FromSeconds(random.Next(60, 3600)));
        Phase("armed at 1-60 min, left alone", seconds, wheel);

        var rearming = new ManualResetEventSlim();
        long passes = 0;
        long busy = 0;
        var loop = new Thread(() =>
        {
            var timeout = TimeSpan.FromSeconds(30);
            while (!rearming.IsSet)
            {
                var start = Stopwatch.GetTimestamp();
                foreach (var entry in entries)
                    entry.ArmAfter(timeout);
                busy += Stopwatch.GetTimestamp() - start;
                passes++;
                rearming.Wait(wheel.TickLength); // one pass per tick, as traffic pushing idle timeouts on would
            }
        }) { IsBackground = true };
        loop.Start();
        Phase("re-armed every tick (30 s on) by a background loop", seconds, wheel);
        rearming.Set();
        loop.Join();
        var loopSeconds = busy / (double)Stopwatch.Frequency;
        Console.WriteLine($"  loop: {passes} passes, {passes * (double)count / seconds / 1e6:0.00} M re-arms/s, {loopSeconds * 1e9 / (passes * (double)count):0.0} ns per re-arm (wall time in the loop)");

        LoadEntry.Lateness = new long[count * (seconds + 2)];
        LoadEntry.Rearm = true;
        foreach (var entry in entries)
            entry.ArmIn(TimeSpan.FromMilliseconds(random.Next(0, 1000)));
        Interlocked.Exchange(ref LoadEntry.Expired, 0);
        Phase("expiring about once a second each, re-armed from OnExpired", seconds, wheel);
        LoadEntry.Rearm = false;
        var expired = Interlocked.Read(ref LoadEntry.Expired);
        var recorded = LoadEntry.Lateness.Take((int)Math.Min(expired, LoadEntry.Lateness.Length)).Select(t => TimerWheel.ToTimeSpan(t).TotalMilliseconds).OrderBy(ms => ms).ToArray();
        Console.WriteLine($"  {expired / (double)seconds:N0} expiries/s; lateness after the due time: min {recorded[0]:0.00} ms, median {Percentile(recorded, 0.5):0.00} ms, p99 {Percentile(recorded, 0.99):0.00} ms, max {recorded[^1]:0.00} ms; early: {recorded.Count(ms => ms < 0)}");

        foreach (var entry in entries)
            entry.Disarm();
        GC.KeepAlive(entries);
    }

    // What a wake-up every tick costs by itself: through a System.Threading.Timer (a thread-pool
    // work item each time) and through a thread waiting on a monitor (what the wheel does).
    private static void ReferenceWakeups(int seconds, TimerWheel wheel)
    {
        var period = (int)Math.Max(1, Math.Round(wheel.TickLength.TotalMilliseconds));
        Timer? timer = null;
        timer = new Timer(_ => timer!.Change(period, Timeout.Infinite), null, period, Timeout.Infinite);
        Phase($"reference: a one-shot System.Threading.Timer set again every {period} ms, nothing else", seconds, wheel);
        timer.Dispose();

        var gate = new object();
        var stop = false;
        var thread = new Thread(() =>
        {
            lock (gate)
            {
                while (!stop)
                    Monitor.Wait(gate, period);
            }
        }) { IsBackground = true };
        thread.Start();
        Phase($"reference: a thread waiting on a monitor for {period} ms at a time, nothing else", seconds, wheel);
        lock (gate)
            stop = true;
        thread.Join();
    }

    // Process CPU per second of wall time, as % of one core, over one phase.
    private static void Phase(string name, int seconds, TimerWheel wheel)
    {
        GC.Collect();
        using var process = Process.GetCurrentProcess();
        var ticks = wheel.TickCount;
        var cpu = process.TotalProcessorTime;
        var wall = Stopwatch.StartNew();
        Thread.Sleep(TimeSpan.FromSeconds(seconds)); // a measuring window, not synchronisation
        process.Refresh();
        var used = (process.TotalProcessorTime - cpu).TotalSeconds / wall.Elapsed.TotalSeconds * 100;
        Console.WriteLine($"{name}: process CPU {used:0.00}% of a core, {wheel.TickCount - ticks} ticks, {wheel.LinkedCount:N0} linked");
    }

    private static double MeasureBytes<T>(int count, Func<T> create)
    {
        var items = new T[count];
        var before = GC.GetTotalMemory(forceFullCollection: true);
        for (var i = 0; i < count; i++)
            items[i] = create();
        var after = GC.GetTotalMemory(forceFullCollection: true);
        GC.KeepAlive(items);
        foreach (var item in items)
            (item as IDisposable)?.Dispose();
        return (after - before) / (double)count;
    }

    private static double Percentile(double[] sorted, double p) => sorted[(int)Math.Min(sorted.Length - 1, p * sorted.Length)];
}
