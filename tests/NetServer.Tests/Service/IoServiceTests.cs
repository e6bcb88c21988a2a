using System;
using System.Collections.Concurrent;
using System.Collections.Generic;
using System.Linq;
using System.Threading;
using System.Threading.Tasks;
using Xunit;

namespace NetServer.Tests.Service;

public class IoServiceTests
{
    private static readonly TimeSpan s_timeout = TimeSpan.FromSeconds(20);

    /// <summary>Records the service's hooks with the thread each ran on.</summary>
    private sealed class RecordingService(int threads) : IoService(threads)
    {
        public ConcurrentQueue<string> Hooks { get; } = new();

        public ConcurrentQueue<Exception> Errors { get; } = new();

        public ConcurrentDictionary<int, string> LoopThreads { get; } = new();

        public int Idles;

        public TaskCompletionSource<Exception> Failed { get; } = new(TaskCreationOptions.RunContinuationsAsynchronously);

        protected override void OnStarted() => Hooks.Enqueue("started");

        protected override void OnStopped() => Hooks.Enqueue("stopped");

        protected override void OnThreadInitialize()
        {
            Hooks.Enqueue("thread-init");
            LoopThreads[Environment.CurrentManagedThreadId] = Thread.CurrentThread.Name ?? string.Empty;
        }

        protected override void OnThreadCleanup() => Hooks.Enqueue("thread-cleanup");

        protected override void OnIdle() => Interlocked.Increment(ref Idles);

        protected override void OnError(Exception exception)
        {
            Errors.Enqueue(exception);
            Failed.TrySetResult(exception);
        }
    }

    private static async Task<T> RunOn<T>(IoLoop loop, Func<T> work)
    {
        var done = new TaskCompletionSource<T>(TaskCreationOptions.RunContinuationsAsynchronously);
        Assert.True(loop.Post(() => done.SetResult(work())));
        return await done.Task.WaitAsync(s_timeout);
    }

    [Fact]
    public async Task Work_posted_to_a_loop_runs_on_its_thread_in_the_order_posted()
    {
        using var service = new RecordingService(2);
        Assert.True(service.Start());
        var loop = service.Loops[1];
        var order = new List<int>(); // touched only on the loop: no lock
        var threads = new ConcurrentBag<int>();
        var done = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);

        // Four threads post at once; each one's items must keep their relative order.
        var posters = Enumerable.Range(0, 4).Select(p => Task.Run(() =>
        {
            for (var i = 0; i < 5_000; i++)
            {
                var value = p * 100_000 + i;
                Assert.True(loop.Post(() =>
                {
                    threads.Add(Environment.CurrentManagedThreadId);
                    Assert.True(loop.IsCurrent);
                    order.Add(value);
                    if (order.Count == 20_000)
                        done.SetResult();
                }));
            }
        })).ToArray();
        await Task.WhenAll(posters).WaitAsync(s_timeout);
        await done.Task.WaitAsync(s_timeout);

        Assert.Single(threads.Distinct());
        Assert.Contains(threads.First(), service.LoopThreads.Keys);
        Assert.Equal("NetServer loop 1", service.LoopThreads[threads.First()]);
        for (var p = 0; p < 4; p++)
        {
            var mine = order.Where(v => v / 100_000 == p).ToList();
            Assert.Equal(Enumerable.Range(0, 5_000).Select(i => p * 100_000 + i), mine);
        }

        Assert.Empty(service.Errors);
    }

    [Fact]
    public async Task Dispatch_runs_inline_on_a_loop_and_post_never_does()
    {
        using var service = new RecordingService(1);
        service.Start();
        var loop = service.Loops[0];
        var steps = new List<string>(); // touched only on the loop
        var log = await RunOn(loop, () =>
        {
            steps.Add("1");
            service.Dispatch(() => steps.Add("dispatched"));
            loop.Post(() => steps.Add("posted"));
            steps.Add("2");
            return steps.ToArray();
        });

        // The dispatched work ran inside the call, the posted one only after this item ended.
        Assert.Equal(new[] { "1", "dispatched", "2" }, log);
        Assert.Equal(new[] { "1", "dispatched", "2", "posted" }, await RunOn(loop, () => steps.ToArray()));

        // From a thread that is no loop, Dispatch queues.
        var ranOn = new TaskCompletionSource<int>(TaskCreationOptions.RunContinuationsAsynchronously);
        Assert.True(service.Dispatch(() => ranOn.SetResult(Environment.CurrentManagedThreadId)));
        Assert.Contains(await ranOn.Task.WaitAsync(s_timeout), service.LoopThreads.Keys);
        Assert.Null(service.CurrentLoop);
        Assert.Same(loop, await RunOn(loop, () => service.CurrentLoop));
    }

    [Fact]
    public async Task Post_spreads_work_over_the_loops_and_a_service_of_zero_threads_has_one_per_processor()
    {
        using (var perProcessor = new IoService())
            Assert.Equal(Environment.ProcessorCount, perProcessor.Threads);
        Assert.Throws<ArgumentOutOfRangeException>(() => new IoService(-1));

        using var service = new RecordingService(3);
        service.Start();
        var threads = new ConcurrentDictionary<int, int>();
        var count = new CountdownEvent(30);
        for (var i = 0; i < 30; i++)
        {
            Assert.True(service.Post(() =>
            {
                threads.AddOrUpdate(Environment.CurrentManagedThreadId, 1, (_, n) => n + 1);
                count.Signal();
            }));
        }

        Assert.True(await Task.Run(() => count.Wait(s_timeout)));
        Assert.Equal(3, threads.Count);
        Assert.All(threads.Values, n => Assert.Equal(10, n));
    }

    [Fact]
    public async Task Stop_runs_the_work_queued_before_it_then_refuses_new_work_and_a_restart_takes_it_again()
    {
        var service = new RecordingService(2);
        Assert.False(service.Stop());
        Assert.False(service.Post(() => { }));
        Assert.True(service.Start());
        Assert.False(service.Start());
        Assert.True(service.IsStarted);
        Assert.False(service.IsPolling);

        // A slow first item holds the loop while 1,000 more queue behind it: Stop waits for all.
        var ran = 0;
        var gate = new ManualResetEventSlim();
        var loop = service.Loops[0];
        Assert.True(loop.Post(() => gate.Wait(s_timeout)));
        for (var i = 0; i < 1_000; i++)
            Assert.True(loop.Post(() => Interlocked.Increment(ref ran)));
        var stopping = Task.Run(service.Stop);
        try
        {
            await Task.Delay(100);
            Assert.False(stopping.IsCompleted);
        }
        finally
        {
            gate.Set();
        }

        Assert.True(await stopping.WaitAsync(s_timeout));
        Assert.Equal(1_000, Volatile.Read(ref ran));
        Assert.False(service.IsStarted);
        Assert.False(loop.Post(() => Interlocked.Increment(ref ran)));
        Assert.Equal(new[] { "thread-init", "thread-init", "started", "thread-cleanup", "thread-cleanup", "stopped" }, Ordered(service.Hooks));

        // A stop from one of its own loops would wait for itself: refused with a clear error.
        Assert.True(service.Start());
        var fromLoop = await RunOn(loop, () => Record(() => service.Stop()));
        Assert.IsType<InvalidOperationException>(fromLoop);
        Assert.True(service.IsStarted);

        Assert.True(service.Restart());
        Assert.True(service.IsStarted);
        Assert.Equal(1_001, await RunOn(loop, () => Interlocked.Increment(ref ran)));

        service.Dispose();
        Assert.False(service.IsStarted);
        Assert.Throws<ObjectDisposedException>(() => service.Start());
    }

    [Fact]
    public async Task A_post_that_returned_true_always_runs_however_it_races_a_stop()
    {
        using var service = new RecordingService(2);
        for (var round = 0; round < 20; round++)
        {
            Assert.True(service.Start());
            long accepted = 0, ran = 0;
            using var go = new Barrier(5);
            var posters = Enumerable.Range(0, 4).Select(_ => Task.Run(() =>
            {
                go.SignalAndWait(s_timeout);
                for (var i = 0; i < 20_000; i++)
                {
                    if (service.Post(() => Interlocked.Increment(ref ran)))
                        Interlocked.Increment(ref accepted);
                }
            })).ToArray();
            go.SignalAndWait(s_timeout);
            Assert.True(await Task.Run(service.Stop).WaitAsync(s_timeout));
            await Task.WhenAll(posters).WaitAsync(s_timeout);

            // Posts after the stop are refused; every one accepted ran before the loops ended.
            Assert.Equal(Interlocked.Read(ref accepted), Interlocked.Read(ref ran));
        }

        Assert.Empty(service.Errors);
    }

    [Fact]
    public async Task An_exception_in_posted_work_goes_to_OnError_and_the_loop_goes_on()
    {
        using var service = new RecordingService(1);
        service.Start();
        var loop = service.Loops[0];
        Assert.True(loop.Post(() => throw new InvalidOperationException("boom")));
        Assert.True(loop.Post(static state => throw new FormatException((string?)state), "bad state"));
        var error = await service.Failed.Task.WaitAsync(s_timeout);
        Assert.Equal("boom", error.Message);
        Assert.Equal(7, await RunOn(loop, () => 7));
        Assert.Equal(new[] { "boom", "bad state" }, service.Errors.Select(e => e.Message));
    }

    [Fact]
    public async Task Polling_loops_call_OnIdle_and_still_run_posted_work()
    {
        using var service = new RecordingService(1);
        Assert.True(service.Start(polling: true));
        Assert.True(service.IsPolling);
        var deadline = DateTime.UtcNow + s_timeout;
        while (Volatile.Read(ref service.Idles) < 1_000 && DateTime.UtcNow < deadline)
            await Task.Delay(10);
        Assert.True(Volatile.Read(ref service.Idles) >= 1_000);
        Assert.Equal(42, await RunOn(service.Loops[0], () => 42));

        // Restart keeps the mode.
        Assert.True(service.Restart());
        Assert.True(service.IsPolling);
        service.Stop();
        var idles = Volatile.Read(ref service.Idles);
        await Task.Delay(50);
        Assert.Equal(idles, Volatile.Read(ref service.Idles));

        // Without polling a loop sleeps: no idle calls.
        using var sleeping = new RecordingService(1);
        sleeping.Start();
        await Task.Delay(100);
        Assert.Equal(0, Volatile.Read(ref sleeping.Idles));
    }

    [Fact]
    public async Task A_deadline_timer_made_with_a_service_calls_OnTimer_on_one_of_its_loops()
    {
        using var service = new RecordingService(2);
        service.Start();
        var fired = new TaskCompletionSource<(bool Canceled, IoLoop? Loop)>(TaskCreationOptions.RunContinuationsAsynchronously);
        using var timer = new DeadlineTimer(service, canceled => fired.TrySetResult((canceled, service.CurrentLoop)));
        timer.Setup(TimeSpan.FromMilliseconds(20));
        Assert.True(timer.WaitAsync());
        var (canceled, loop) = await fired.Task.WaitAsync(s_timeout);
        Assert.False(canceled);
        Assert.NotNull(loop);

        // Cancelled: OnTimer(true), on a loop too.
        var cancelled = new TaskCompletionSource<(bool Canceled, IoLoop? Loop)>(TaskCreationOptions.RunContinuationsAsynchronously);
        using var other = new DeadlineTimer(service, canceled => cancelled.TrySetResult((canceled, service.CurrentLoop)));
        other.Setup(TimeSpan.FromHours(1));
        other.WaitAsync();
        Assert.True(other.Cancel());
        (canceled, loop) = await cancelled.Task.WaitAsync(s_timeout);
        Assert.True(canceled);
        Assert.NotNull(loop);

        // With the service stopped the outcome is not lost: it runs on the thread pool.
        service.Stop();
        var late = new TaskCompletionSource<(bool Canceled, IoLoop? Loop)>(TaskCreationOptions.RunContinuationsAsynchronously);
        using var third = new DeadlineTimer(service, canceled => late.TrySetResult((canceled, service.CurrentLoop)));
        third.Setup(TimeSpan.FromMilliseconds(10));
        third.WaitAsync();
        (canceled, loop) = await late.Task.WaitAsync(s_timeout);
        Assert.False(canceled);
        Assert.Null(loop);
        Assert.Throws<ArgumentNullException>(() => new DeadlineTimer((IoService)null!));
    }

    private static Exception? Record(Action action)
    {
        try
        {
            action();
            return null;
        }
        catch (Exception e)
        {
            return e;
        }
    }

    // The per-thread hooks of several loops interleave: compare them grouped in the order of the service's own.
    private static string[] Ordered(IEnumerable<string> hooks)
    {
        var list = hooks.ToList();
        var started = list.IndexOf("started");
        var stopped = list.IndexOf("stopped");
        return list.Take(started).OrderBy(h => h).Append("started")
            .Concat(list.Skip(started + 1).Take(stopped - started - 1).OrderBy(h => h)).Append("stopped").ToArray();
    }
}
