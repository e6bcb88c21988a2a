using System;
using System.Collections.Concurrent;
using System.Diagnostics;
using System.Threading;
using System.Threading.Tasks;
using NetServer.Tests.Infrastructure;
using NetServer.Timers;
using Xunit;

namespace NetServer.Tests.Timers;

public class DeadlineTimerTests
{
    private static readonly TimeSpan s_timeout = TimeSpan.FromSeconds(20);

    // How late an expiry may come: one tick plus generous slack, since the clock and the callbacks
    // run on the thread pool and a loaded 2-core machine running the other tests delays both.
    private static readonly TimeSpan s_late = TimerWheel.Shared.TickLength + TimeSpan.FromSeconds(1);

    /// <summary>Records every OnTimer call with its thread, and every OnError.</summary>
    private sealed class RecordingTimer : DeadlineTimer
    {
        private int _inside;

        public ConcurrentQueue<bool> Calls { get; } = new();

        public ConcurrentQueue<Exception> Errors { get; } = new();

        public bool RanOffPool { get; private set; }

        public bool Overlapped { get; private set; }

        public Action<bool>? During { get; set; }

        /// <summary>Completes on the next OnTimer with its <c>canceled</c> value (replace it to wait for another).</summary>
        public TaskCompletionSource<bool> Next { get; set; } = new(TaskCreationOptions.RunContinuationsAsynchronously);

        public TaskCompletionSource<Exception> Failed { get; } = new(TaskCreationOptions.RunContinuationsAsynchronously);

        protected override void OnTimer(bool canceled)
        {
            if (Interlocked.Exchange(ref _inside, 1) != 0)
                Overlapped = true;
            if (!Thread.CurrentThread.IsThreadPoolThread)
                RanOffPool = true;
            Calls.Enqueue(canceled);
            var next = Next;
            try
            {
                During?.Invoke(canceled);
            }
            finally
            {
                Volatile.Write(ref _inside, 0);
                next.TrySetResult(canceled);
            }
        }

        protected override void OnError(Exception exception)
        {
            Errors.Enqueue(exception);
            Failed.TrySetResult(exception);
        }
    }

    [Fact]
    public async Task WaitAsync_calls_the_action_once_with_false_after_the_expiry()
    {
        var calls = new ConcurrentQueue<bool>();
        var fired = new TaskCompletionSource<long>(TaskCreationOptions.RunContinuationsAsynchronously);
        using var timer = new DeadlineTimer(canceled =>
        {
            calls.Enqueue(canceled);
            fired.TrySetResult(TimerWheel.Now);
        });
        Assert.False(timer.WaitAsync()); // not set up yet
        Assert.Equal(DateTime.MinValue, timer.ExpireTime);
        Assert.Equal(TimeSpan.Zero, timer.ExpireTimespan);

        var start = TimerWheel.Now;
        var before = DateTime.UtcNow;
        Assert.True(timer.Setup(TimeSpan.FromMilliseconds(100)));
        Assert.Equal(DateTimeKind.Utc, timer.ExpireTime.Kind);
        Assert.InRange(timer.ExpireTime, before.AddMilliseconds(95), DateTime.UtcNow.AddMilliseconds(105));
        Assert.InRange(timer.ExpireTimespan, TimeSpan.FromMilliseconds(1), TimeSpan.FromMilliseconds(100));
        Assert.True(timer.WaitAsync());
        Assert.True(timer.IsWaiting);
        Assert.True(timer.WaitAsync()); // joins the pending wait

        var at = await fired.Task.WaitAsync(s_timeout);
        Assert.InRange(TimerWaits.Elapsed(start, at), TimeSpan.FromMilliseconds(100), TimeSpan.FromMilliseconds(100) + s_late);
        Assert.False(timer.IsWaiting);
        Assert.Equal(TimeSpan.Zero, timer.ExpireTimespan);

        // A cancel after the expiry finds nothing pending.
        Assert.False(timer.Cancel());
        await WaitPastAsync(TimeSpan.FromMilliseconds(50));
        Assert.Equal(new[] { false }, calls.ToArray());
    }

    [Fact]
    public async Task Setup_with_an_absolute_utc_time_expires_then()
    {
        using var timer = new RecordingTimer();
        var start = TimerWheel.Now;
        var expiry = DateTime.UtcNow.AddMilliseconds(150);
        Assert.True(timer.Setup(expiry));
        Assert.Equal(expiry, timer.ExpireTime);
        Assert.True(timer.WaitAsync());

        Assert.False(await timer.Next.Task.WaitAsync(s_timeout));
        Assert.InRange(TimerWaits.Elapsed(start, TimerWheel.Now), TimeSpan.FromMilliseconds(150), TimeSpan.FromSeconds(5));
        Assert.False(timer.RanOffPool);

        // A time in the past expires at the next tick.
        timer.Next = new(TaskCreationOptions.RunContinuationsAsynchronously);
        Assert.True(timer.Setup(DateTime.UtcNow.AddSeconds(-10)));
        Assert.True(timer.WaitAsync());
        Assert.False(await timer.Next.Task.WaitAsync(s_timeout));
    }

    [Fact]
    public async Task Cancel_calls_OnTimer_once_with_true_and_the_expiry_never_comes()
    {
        using var timer = new RecordingTimer();
        timer.Setup(TimeSpan.FromMilliseconds(100));
        Assert.True(timer.WaitAsync());
        Assert.True(timer.Cancel());
        Assert.False(timer.Cancel());
        Assert.False(timer.IsWaiting);

        Assert.True(await timer.Next.Task.WaitAsync(s_timeout));
        await WaitPastAsync(TimeSpan.FromMilliseconds(200));
        Assert.Equal(new[] { true }, timer.Calls.ToArray());
    }

    [Fact]
    public async Task An_awaited_wait_is_true_on_expiry_and_false_on_cancel_or_token()
    {
        using var timer = new RecordingTimer();
        using var cts = new CancellationTokenSource();
        Assert.False(await timer.WaitAsync(cts.Token)); // not set up

        timer.Setup(TimeSpan.FromMilliseconds(50));
        Assert.True(await timer.WaitAsync(cts.Token).WaitAsync(s_timeout));
        Assert.False(await timer.Next.Task.WaitAsync(s_timeout));

        timer.Next = new(TaskCreationOptions.RunContinuationsAsynchronously);
        timer.Setup(TimeSpan.FromSeconds(30));
        var canceledByCancel = timer.WaitAsync(CancellationToken.None);
        Assert.True(timer.Cancel());
        Assert.False(await canceledByCancel.WaitAsync(s_timeout));
        Assert.True(await timer.Next.Task.WaitAsync(s_timeout));

        timer.Next = new(TaskCreationOptions.RunContinuationsAsynchronously);
        var canceledByToken = timer.WaitAsync(cts.Token);
        var joined = timer.WaitAsync(CancellationToken.None); // joins the same wait
        cts.CancelAfter(50);
        Assert.False(await canceledByToken.WaitAsync(s_timeout));
        Assert.False(await joined.WaitAsync(s_timeout));
        Assert.True(await timer.Next.Task.WaitAsync(s_timeout)); // the token cancels the timer's wait
        Assert.False(timer.IsWaiting);

        // A token cancelled already ends the wait at once.
        timer.Next = new(TaskCreationOptions.RunContinuationsAsynchronously);
        Assert.False(await timer.WaitAsync(cts.Token).WaitAsync(s_timeout));
        Assert.True(await timer.Next.Task.WaitAsync(s_timeout));
        Assert.Equal(new[] { false, true, true, true }, timer.Calls.ToArray());
    }

    [Fact]
    public async Task WaitSync_blocks_until_the_expiry_or_a_cancel()
    {
        using var timer = new RecordingTimer();
        Assert.False(timer.WaitSync()); // not set up: returns at once

        var start = TimerWheel.Now;
        timer.Setup(TimeSpan.FromMilliseconds(100));
        // Blocking waits on threads of their own: a blocked pool thread would delay the clock's ticks.
        var (expired, returnedAt) = await Task.Factory.StartNew(() => (timer.WaitSync(), TimerWheel.Now), TaskCreationOptions.LongRunning).WaitAsync(s_timeout);
        Assert.True(expired);
        Assert.InRange(TimerWaits.Elapsed(start, returnedAt), TimeSpan.FromMilliseconds(100), TimeSpan.FromMilliseconds(100) + s_late);
        Assert.False(await timer.Next.Task.WaitAsync(s_timeout));

        // Cancelled from another thread once the wait is pending.
        timer.Next = new(TaskCreationOptions.RunContinuationsAsynchronously);
        timer.Setup(TimeSpan.FromSeconds(30));
        var blocked = Task.Factory.StartNew(timer.WaitSync, TaskCreationOptions.LongRunning);
        await TimerWaits.UntilAsync(() => timer.IsWaiting, s_timeout, () => "WaitSync to arm the timer");
        Assert.True(timer.Cancel());
        Assert.False(await blocked.WaitAsync(s_timeout));
        Assert.True(await timer.Next.Task.WaitAsync(s_timeout));
    }

    [Fact]
    public async Task Setup_while_waiting_moves_the_deadline_without_a_cancel()
    {
        using var timer = new RecordingTimer();
        var start = TimerWheel.Now;
        timer.Setup(TimeSpan.FromMilliseconds(50));
        Assert.True(timer.WaitAsync());
        timer.Setup(TimeSpan.FromMilliseconds(300)); // later
        Assert.False(await timer.Next.Task.WaitAsync(s_timeout));
        Assert.InRange(TimerWaits.Elapsed(start, TimerWheel.Now), TimeSpan.FromMilliseconds(300), TimeSpan.FromSeconds(5));

        timer.Next = new(TaskCreationOptions.RunContinuationsAsynchronously);
        start = TimerWheel.Now;
        timer.Setup(TimeSpan.FromSeconds(30));
        Assert.True(timer.WaitAsync());
        timer.Setup(TimeSpan.FromMilliseconds(50)); // earlier
        Assert.False(await timer.Next.Task.WaitAsync(s_timeout));
        Assert.InRange(TimerWaits.Elapsed(start, TimerWheel.Now), TimeSpan.FromMilliseconds(50), TimeSpan.FromMilliseconds(50) + s_late);
        Assert.Equal(new[] { false, false }, timer.Calls.ToArray());
    }

    [Fact]
    public async Task A_timer_rearmed_from_OnTimer_runs_periodically_without_overlap_and_without_allocating()
    {
        using var timer = new RecordingTimer();
        var done = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        long allocated = 0;
        timer.During = _ =>
        {
            if (timer.Calls.Count >= 5)
            {
                done.TrySetResult();
                return;
            }

            var before = GC.GetAllocatedBytesForCurrentThread();
            timer.Setup(TimeSpan.FromMilliseconds(20));
            timer.WaitAsync();
            Interlocked.Add(ref allocated, GC.GetAllocatedBytesForCurrentThread() - before);
        };
        timer.Setup(TimeSpan.FromMilliseconds(20));
        timer.WaitAsync();

        await done.Task.WaitAsync(s_timeout);
        Assert.Equal(new[] { false, false, false, false, false }, timer.Calls.ToArray());
        Assert.False(timer.Overlapped);
        Assert.Equal(0, Interlocked.Read(ref allocated));
    }

    [Fact]
    public void Setting_up_again_and_waiting_on_a_pending_wait_allocates_nothing()
    {
        using var timer = new DeadlineTimer(_ => { });
        timer.Setup(TimeSpan.FromMinutes(1));
        timer.WaitAsync();
        var allocated = Allocations.Least(() =>
        {
            timer.Setup(TimeSpan.FromMinutes(1));
            timer.WaitAsync();
        }, roundsPerWindow: 1000);

        Assert.Equal(0, allocated);
        Assert.True(timer.Cancel());
    }

    [Fact]
    public async Task A_callback_that_throws_goes_to_OnError_and_the_timer_keeps_working()
    {
        using var timer = new RecordingTimer { During = canceled => throw new InvalidOperationException("from the callback") };
        timer.Setup(TimeSpan.FromMilliseconds(20));
        timer.WaitAsync();
        var error = await timer.Failed.Task.WaitAsync(s_timeout);
        Assert.Equal("from the callback", error.Message);

        timer.During = null;
        timer.Next = new(TaskCreationOptions.RunContinuationsAsynchronously);
        timer.Setup(TimeSpan.FromMilliseconds(20));
        Assert.True(await timer.WaitAsync(CancellationToken.None).WaitAsync(s_timeout));
        Assert.False(await timer.Next.Task.WaitAsync(s_timeout));
        Assert.Single(timer.Errors);
    }

    [Fact]
    public async Task A_throwing_action_with_the_default_OnError_does_not_stop_the_clock()
    {
        // The default OnError only traces: the process survives and other timers still fire.
        using var thrower = new DeadlineTimer(_ => throw new InvalidOperationException("traced"));
        thrower.Setup(TimeSpan.FromMilliseconds(10));
        thrower.WaitAsync();
        using var other = new DeadlineTimer();
        other.Setup(TimeSpan.FromMilliseconds(100));
        Assert.True(await other.WaitAsync(CancellationToken.None).WaitAsync(s_timeout));
    }

    [Fact]
    public async Task Dispose_cancels_the_pending_wait_and_refuses_new_ones()
    {
        var timer = new RecordingTimer();
        timer.Setup(TimeSpan.FromSeconds(30));
        var awaited = timer.WaitAsync(CancellationToken.None);
        timer.Dispose();
        timer.Dispose();

        Assert.False(await awaited.WaitAsync(s_timeout));
        Assert.True(await timer.Next.Task.WaitAsync(s_timeout));
        Assert.True(timer.IsDisposed);
        Assert.False(timer.Setup(TimeSpan.FromMilliseconds(10)));
        Assert.False(timer.Setup(_ => { }));
        Assert.False(timer.WaitAsync());
        Assert.False(timer.WaitSync());
        Assert.False(await timer.WaitAsync(CancellationToken.None));
        Assert.False(timer.Cancel());
        Assert.Equal(new[] { true }, timer.Calls.ToArray());
    }

    [Fact]
    public void Arguments_are_checked()
    {
        using var timer = new DeadlineTimer();
        Assert.Throws<ArgumentOutOfRangeException>(() => timer.Setup(TimeSpan.FromMilliseconds(-1)));
        Assert.Throws<ArgumentNullException>(() => timer.Setup((Action<bool>)null!));
        Assert.Throws<ArgumentNullException>(() => new DeadlineTimer((Action<bool>)null!));
    }

    // Lets a deadline pass: the point is that nothing more happens, so there is no event to wait for.
    private static async Task WaitPastAsync(TimeSpan span)
    {
        var stopwatch = Stopwatch.StartNew();
        using var witness = new DeadlineTimer();
        witness.Setup(span + TimerWheel.Shared.TickLength);
        Assert.True(await witness.WaitAsync(CancellationToken.None).WaitAsync(s_timeout));
        Assert.True(stopwatch.Elapsed >= span);
    }
}
