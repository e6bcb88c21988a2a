using System;
using System.Collections.Generic;
using System.Linq;
using System.Threading;
using System.Threading.Tasks;
using NetServer.Internal;
using NetServer.Streams;
using NetServer.Tests.Infrastructure;
using Xunit;

namespace NetServer.Tests.Internal;

/// <summary>
/// The parked-sender queue both send engines share: arrival order, a cancelled waiter leaving at
/// once from anywhere in the queue, and each waiter ended exactly once when its cancellation races
/// the owner's release or close.
/// </summary>
public class WaiterQueueTests
{
    private readonly object _lock = new();

    private static SendWaiter NewWaiter(int length) => SendWaiter.ForRoom(new byte[length], null, synchronous: false);

    private void Park(WaiterQueue queue, SendWaiter waiter, CancellationToken token = default)
    {
        lock (_lock)
            queue.Park(waiter);
        waiter.RegisterCancellation(token); // as the engines do: after parking, without the lock
    }

    /// <summary>Takes and finishes the waiters in order, as an owner releasing them does.</summary>
    private List<int> ReleaseAll(WaiterQueue queue)
    {
        var lengths = new List<int>();
        lock (_lock)
        {
            while (queue.Peek() is { } waiter)
            {
                if (!queue.TryTake(waiter))
                    continue;
                lengths.Add(waiter.Length);
                waiter.Finish(true);
            }
        }

        return lengths;
    }

    [Fact]
    public async Task A_cancelled_waiter_leaves_at_once_from_anywhere_and_the_rest_keep_their_order()
    {
        var queue = new WaiterQueue(_lock);
        var (sources, waiters) = ParkMany(queue, 5);
        Assert.Equal(5, queue.Length);

        // The middle, the head and the tail.
        foreach (var i in new[] { 2, 0, 4 })
        {
            await sources[i].CancelAsync();
            await Assert.ThrowsAnyAsync<OperationCanceledException>(() => waiters[i].Task.WaitAsync(Wait.Default));
        }

        Assert.Equal(2, queue.Length);
        lock (_lock)
            Assert.True(queue.HasWaiting());
        Assert.Equal(new[] { 2, 4 }, ReleaseAll(queue));
        Assert.True(await waiters[1].Task.WaitAsync(Wait.Default));
        Assert.True(await waiters[3].Task.WaitAsync(Wait.Default));
        Assert.Equal(0, queue.Length);
        lock (_lock)
            Assert.False(queue.HasWaiting());
        foreach (var source in sources)
            source.Dispose();
    }

    [Fact]
    public async Task A_token_cancelled_before_registration_withdraws_the_waiter_inside_the_registration()
    {
        var queue = new WaiterQueue(_lock);
        using var cancelled = new CancellationTokenSource();
        await cancelled.CancelAsync();
        var waiter = NewWaiter(10);

        // The callback runs synchronously inside RegisterCancellation, and takes the lock there.
        Park(queue, waiter, cancelled.Token);
        Assert.True(waiter.Task.IsCanceled);
        Assert.Equal(0, queue.Length);
        lock (_lock)
            Assert.False(queue.HasWaiting());
    }

    [Fact]
    public void A_waiter_that_gave_up_does_not_count_as_waiting_before_it_is_withdrawn()
    {
        var queue = new WaiterQueue(_lock);
        var waiter = NewWaiter(10);
        Park(queue, waiter, CancellationToken.None);

        // Its cancellation (or its sender's timeout) has claimed it and not yet taken the lock to
        // withdraw it: a sender arriving now must not park behind it, since in a drained queue
        // no release would ever come for the newcomer.
        Assert.True(waiter.TryClaim());
        lock (_lock)
        {
            Assert.False(queue.HasWaiting());
            Assert.Equal(0, queue.Length); // met at the head: unlinked on the way
        }

        queue.Withdraw(waiter); // the late withdrawal finds it gone
        Assert.Equal(0, queue.Length);
    }

    /// <summary>Parks <paramref name="count"/> waiters (of 1, 2, ... bytes), each with a token of its own.</summary>
    private (CancellationTokenSource[] Sources, SendWaiter[] Waiters) ParkMany(WaiterQueue queue, int count)
    {
        var sources = Enumerable.Range(0, count).Select(_ => new CancellationTokenSource()).ToArray();
        var waiters = Enumerable.Range(1, count).Select(NewWaiter).ToArray();
        for (var i = 0; i < count; i++)
            Park(queue, waiters[i], sources[i].Token);
        return (sources, waiters);
    }

    /// <summary>Runs both on the pool, released at once so they race; bounded.</summary>
    private static async Task RaceAsync(Func<Task> first, Func<Task> second)
    {
        var go = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var both = new[] { first, second }.Select(run => Task.Run(async () =>
        {
            await go.Task;
            await run();
        })).ToArray();
        go.SetResult();
        await Task.WhenAll(both).WaitAsync(Wait.Default);
    }

    /// <summary>How a waiter's wait ended: "released" (true), "failed" (false) or "cancelled".</summary>
    private static async Task<string> OutcomeAsync(SendWaiter waiter)
    {
        try
        {
            return await waiter.Task.WaitAsync(Wait.Default) ? "released" : "failed";
        }
        catch (OperationCanceledException)
        {
            return "cancelled";
        }
    }

    [Fact]
    public async Task Cancellations_racing_the_release_end_each_waiter_exactly_once()
    {
        var queue = new WaiterQueue(_lock);
        for (var round = 0; round < 200; round++)
        {
            var (sources, waiters) = ParkMany(queue, 20);
            var released = new List<int>();
            var cancelled = sources.Where((_, i) => i % 2 == round % 2).ToArray();
            await RaceAsync(
                async () =>
                {
                    foreach (var source in cancelled)
                        await source.CancelAsync();
                },
                () =>
                {
                    released = ReleaseAll(queue);
                    return Task.CompletedTask;
                });

            // Every waiter ended once: the ones released true, in order, the rest cancelled.
            var ended = await Task.WhenAll(waiters.Select(OutcomeAsync));
            Assert.DoesNotContain("failed", ended);
            Assert.Equal(released.Count, ended.Count(e => e == "released"));
            Assert.True(ended.Count(e => e == "cancelled") <= cancelled.Length);
            Assert.Equal(released, released.Order());
            Assert.Equal(0, queue.Length);
            lock (_lock)
                Assert.False(queue.HasWaiting());
            foreach (var source in sources)
                source.Dispose();
        }
    }

    [Fact]
    public async Task Cancellations_racing_a_close_end_each_waiter_exactly_once()
    {
        for (var round = 0; round < 200; round++)
        {
            var queue = new WaiterQueue(_lock);
            var (sources, waiters) = ParkMany(queue, 20);
            await RaceAsync(
                async () =>
                {
                    foreach (var source in sources)
                        await source.CancelAsync();
                },
                () =>
                {
                    lock (_lock)
                        queue.FailAll();
                    return Task.CompletedTask;
                });

            // Failed or cancelled, never released.
            var ended = await Task.WhenAll(waiters.Select(OutcomeAsync));
            Assert.DoesNotContain("released", ended);
            Assert.Equal(0, queue.Length);
            lock (_lock)
                Assert.False(queue.HasWaiting());
            foreach (var source in sources)
                source.Dispose();
        }
    }
}
