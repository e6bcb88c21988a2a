using System;
using System.Threading;
using System.Threading.Tasks;
using NetServer.Internal;
using NetServer.Tests.Infrastructure;
using NetServer.Transport;
using Xunit;

namespace NetServer.Tests.Internal;

/// <summary>
/// The pool behind <see cref="SocketArgsPool"/>: it keeps what was in use at the peak (more than
/// the 256 the pool once kept), so cycles at that level create nothing; it stays within its bound;
/// and it lets go of idle items a half at a time.
/// </summary>
public class ElasticPoolTests
{
    private static ElasticPool<SocketAwaitableEventArgs> NewPool(int maxKept, TimeSpan trimInterval, Action<SocketAwaitableEventArgs>? discarded = null) =>
        new(() => new SocketAwaitableEventArgs(), args =>
        {
            discarded?.Invoke(args);
            args.Dispose();
        }, maxKept, trimInterval);

    /// <summary>Rents <paramref name="count"/> items at once, then returns them all.</summary>
    private static void Cycle(ElasticPool<SocketAwaitableEventArgs> pool, SocketAwaitableEventArgs[] rented, int count)
    {
        for (var i = 0; i < count; i++)
            rented[i] = pool.Rent();
        for (var i = 0; i < count; i++)
            pool.Return(rented[i]);
    }

    [Fact]
    public void Cycles_of_more_than_256_args_in_use_create_none_after_the_first()
    {
        const int inUse = 2000;
        var pool = NewPool(SocketArgsPool.MaxKept, Timeout.InfiniteTimeSpan);
        var rented = new SocketAwaitableEventArgs[inUse];
        Cycle(pool, rented, inUse);
        Assert.Equal(inUse, pool.Created);

        // The fewest bytes of up to 10 cycles: args created per cycle would show in every one, the
        // runtime's own one-off work on this thread (a method compiled again) in one at most.
        var fewest = Allocations.Least(() => Cycle(pool, rented, inUse), roundsPerWindow: 1, windows: 10, warmUp: 0);

        Assert.True(fewest == 0, $"The fewest bytes allocated by a cycle of {inUse} rents and returns: {fewest}");
        Assert.Equal(inUse, pool.Created);
        Assert.Equal(inUse, pool.Count);

        // A trim between busy intervals lets go of nothing: every item was needed.
        pool.Trim();
        Cycle(pool, rented, inUse);
        pool.Trim();
        Assert.Equal(inUse, pool.Count);
    }

    [Fact]
    public void The_pool_keeps_no_more_than_its_bound()
    {
        var discarded = 0;
        var pool = NewPool(100, Timeout.InfiniteTimeSpan, _ => discarded++);
        var rented = new SocketAwaitableEventArgs[300];
        Cycle(pool, rented, 300);
        Assert.Equal(100, pool.Count);
        Assert.Equal(200, discarded);
    }

    [Fact]
    public void An_idle_pool_lets_go_of_half_its_unused_items_per_trim()
    {
        var pool = NewPool(SocketArgsPool.MaxKept, Timeout.InfiniteTimeSpan);
        var rented = new SocketAwaitableEventArgs[1000];
        Cycle(pool, rented, 1000);

        // Items just returned have not been idle for a whole interval yet.
        pool.Trim();
        Assert.Equal(1000, pool.Count);
        pool.Trim();
        Assert.Equal(500, pool.Count);

        // 300 used in this interval: 200 of the 500 stayed free throughout, and half of those go.
        Cycle(pool, rented, 300);
        pool.Trim();
        Assert.Equal(400, pool.Count);

        for (var i = 0; i < 20 && pool.Count > 0; i++)
            pool.Trim();
        Assert.Equal(0, pool.Count);
        Assert.Equal(1000, pool.Created);
    }

    [Fact]
    public async Task The_trim_timer_empties_an_idle_pool()
    {
        var pool = NewPool(SocketArgsPool.MaxKept, TimeSpan.FromMilliseconds(20));
        var rented = new SocketAwaitableEventArgs[500];
        Cycle(pool, rented, 500);
        Assert.Equal(500, pool.Count);
        await Wait.UntilAsync(() => pool.Count == 0, () => $"the idle pool to empty (it holds {pool.Count})");
    }
}
