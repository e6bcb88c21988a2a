using System;
using System.Linq;
using System.Threading;
using System.Threading.Tasks;
using NetServer.Buffers;
using NetServer.Tests.Infrastructure;
using Xunit;

namespace NetServer.Tests.Buffers;

public class SharedBufferTests
{
    private static readonly TimeSpan s_timeout = TimeSpan.FromSeconds(30);

    private static byte[] Pattern(int length, int seed)
    {
        var data = new byte[length];
        for (var i = 0; i < length; i++)
            data[i] = (byte)(seed * 31 + i);
        return data;
    }

    /// <summary>Runs <paramref name="count"/> bodies on their own threads, released together.</summary>
    private static async Task RunTogetherAsync(int count, Action<int> body)
    {
        using var barrier = new Barrier(count);
        var tasks = Enumerable.Range(0, count).Select(index => Task.Factory.StartNew(
            () =>
            {
                if (!barrier.SignalAndWait(s_timeout))
                    throw new TimeoutException("The other threads did not start.");
                body(index);
            },
            CancellationToken.None,
            TaskCreationOptions.LongRunning,
            TaskScheduler.Default)).ToArray();
        await Task.WhenAll(tasks).WaitAsync(s_timeout);
    }

    [Fact]
    public async Task Create_copies_the_data_and_holds_one_reference()
    {
        var pool = new LeakCheckingBufferPool();
        var data = Pattern(300, 1);
        var shared = SharedBuffer.Create(pool, data);
        data[0] ^= 0xFF;

        Assert.Equal(1, shared.References);
        Assert.Equal(300, shared.Length);
        Assert.Equal(1, pool.Rents);
        Assert.True(shared.Array.AsSpan(0, shared.Length).SequenceEqual(Pattern(300, 1)));

        shared.Release();
        await pool.AssertAllReturnedAsync();
    }

    [Fact]
    public async Task The_array_goes_back_exactly_when_the_last_reference_is_released()
    {
        var pool = new LeakCheckingBufferPool();
        var shared = SharedBuffer.Create(pool, Pattern(100, 2));
        var array = shared.Array;
        for (var i = 0; i < 5; i++)
            shared.AddReference();
        Assert.Equal(6, shared.References);

        for (var i = 0; i < 5; i++)
        {
            shared.Release();
            Assert.Equal(5 - i, shared.References);
            Assert.Equal(0, pool.Returns);
            Assert.Equal(1, pool.Outstanding);
            Assert.True(array.AsSpan(0, 100).SequenceEqual(Pattern(100, 2)));
        }

        shared.Release();
        Assert.Equal(1, pool.Returns);
        Assert.Equal(0, pool.Outstanding);
        await pool.AssertAllReturnedAsync();
    }

    [Fact]
    public async Task Reuse_of_the_holder_does_not_carry_data_between_uses()
    {
        var pool = new LeakCheckingBufferPool();
        for (var round = 0; round < 20; round++)
        {
            var big = SharedBuffer.Create(pool, Enumerable.Repeat((byte)0xAA, 500).ToArray());
            var bigArray = big.Array;
            big.Release();

            var small = SharedBuffer.Create(pool, Enumerable.Repeat((byte)0xBB, 10).ToArray());
            Assert.Equal(1, small.References);
            Assert.Equal(10, small.Length);
            Assert.NotSame(bigArray, small.Array);
            Assert.Equal(10, small.Array.Length);
            Assert.All(small.Array, b => Assert.Equal(0xBB, b));
            Assert.Equal(1, pool.Outstanding);
            small.Release();
        }

        Assert.Equal(40, pool.Returns);
        await pool.AssertAllReturnedAsync();
    }

    [Fact]
    public void Reuse_with_a_kept_shared_pool_array_does_not_carry_data_between_uses()
    {
        // Holders of small BufferPool.Shared arrays keep them across uses.
        for (var round = 0; round < 50; round++)
        {
            // A recycled holder's kept array may be too small for the next payload.
            SharedBuffer.Create(BufferPool.Shared, Enumerable.Repeat((byte)0xCC, 10).ToArray()).Release();
            var big = SharedBuffer.Create(BufferPool.Shared, Enumerable.Repeat((byte)0xAA, 500).ToArray());
            Assert.Equal(500, big.Length);
            Assert.All(big.Array.Take(big.Length), b => Assert.Equal(0xAA, b));
            big.AddReference();
            big.Release();
            big.Release();

            var small = SharedBuffer.Create(BufferPool.Shared, Enumerable.Repeat((byte)0xBB, 10).ToArray());
            Assert.Equal(1, small.References);
            Assert.Equal(10, small.Length);
            Assert.True(small.Array.Length >= 10);
            Assert.All(small.Array.Take(small.Length), b => Assert.Equal(0xBB, b));

            var large = SharedBuffer.Create(BufferPool.Shared, Pattern(SharedBuffer.KeptArraySize * 2, round));
            Assert.Equal(SharedBuffer.KeptArraySize * 2, large.Length);
            Assert.True(large.Array.AsSpan(0, large.Length).SequenceEqual(Pattern(SharedBuffer.KeptArraySize * 2, round)));
            Assert.All(small.Array.Take(small.Length), b => Assert.Equal(0xBB, b));
            large.Release();
            small.Release();
        }
    }

    [Fact]
    public async Task A_recycled_holder_takes_its_array_from_the_pool_it_is_created_with()
    {
        var pool = new LeakCheckingBufferPool();
        for (var round = 0; round < 20; round++)
        {
            // Leave recycled holders with kept BufferPool.Shared arrays behind, then create on another pool.
            SharedBuffer.Create(BufferPool.Shared, Pattern(100, round)).Release();
            var shared = SharedBuffer.Create(pool, Pattern(50, round));
            Assert.Equal(round + 1, pool.Rents);
            Assert.Equal(1, pool.Outstanding);
            Assert.Equal(50, shared.Array.Length);
            Assert.True(shared.Array.AsSpan().SequenceEqual(Pattern(50, round)));
            shared.Release();
            Assert.Equal(0, pool.Outstanding);
        }

        await pool.AssertAllReturnedAsync();
    }

    [Fact]
    public async Task Releasing_one_buffer_leaves_another_alive()
    {
        var pool = new LeakCheckingBufferPool();
        var first = SharedBuffer.Create(pool, Pattern(64, 3));
        var second = SharedBuffer.Create(pool, Pattern(64, 4));
        second.AddReference();
        first.Release();

        // The released holder may be recycled by the next Create; the live one must not change.
        var third = SharedBuffer.Create(pool, Pattern(32, 5));
        Assert.NotSame(second, third);
        Assert.Equal(2, second.References);
        Assert.Equal(64, second.Length);
        Assert.True(second.Array.AsSpan(0, 64).SequenceEqual(Pattern(64, 4)));
        Assert.True(third.Array.AsSpan(0, 32).SequenceEqual(Pattern(32, 5)));

        second.Release();
        second.Release();
        third.Release();
        await pool.AssertAllReturnedAsync();
    }

    [Fact]
    public async Task Concurrent_add_and_release_keep_the_count_exact()
    {
        var pool = new LeakCheckingBufferPool();
        var shared = SharedBuffer.Create(pool, Pattern(256, 6));
        var lowest = int.MaxValue;

        await RunTogetherAsync(4, _ =>
        {
            var seen = int.MaxValue;
            for (var i = 0; i < 500_000; i++)
            {
                shared.AddReference();
                seen = Math.Min(seen, shared.References);
                shared.Release();
            }

            int current;
            do
                current = Volatile.Read(ref lowest);
            while (seen < current && Interlocked.CompareExchange(ref lowest, seen, current) != current);
        });

        Assert.True(lowest >= 2, $"the count fell to {lowest} while references were held");
        Assert.Equal(1, shared.References);
        Assert.Equal(0, pool.Returns);
        Assert.True(shared.Array.AsSpan(0, 256).SequenceEqual(Pattern(256, 6)));

        shared.Release();
        Assert.Equal(1, pool.Returns);
        await pool.AssertAllReturnedAsync();
    }

    [Fact]
    public async Task Concurrent_final_releases_return_the_array_exactly_once()
    {
        const int Holders = 8;
        var pool = new LeakCheckingBufferPool();
        for (var round = 0; round < 200; round++)
        {
            // Multicast shape: one create, one reference per session, then every holder lets go at once.
            var shared = SharedBuffer.Create(pool, Pattern(128, round));
            for (var i = 1; i < Holders; i++)
                shared.AddReference();

            await RunTogetherAsync(Holders, _ => shared.Release());

            Assert.Equal(round + 1, pool.Returns);
            Assert.Equal(0, pool.Outstanding);
        }

        await pool.AssertAllReturnedAsync();
    }

    [Fact]
    public async Task Concurrent_creates_never_share_a_holder()
    {
        var pool = new LeakCheckingBufferPool();
        var failures = 0;

        await RunTogetherAsync(8, thread =>
        {
            var random = new Random(thread);
            for (var i = 0; i < 5_000; i++)
            {
                var data = Pattern(random.Next(1, 200), thread * 7919 + i);
                var shared = SharedBuffer.Create(pool, data);
                var intact = shared.References == 1 && shared.Length == data.Length && shared.Array.AsSpan(0, shared.Length).SequenceEqual(data);
                shared.AddReference();
                intact &= shared.References == 2 && shared.Array.AsSpan(0, shared.Length).SequenceEqual(data);
                shared.Release();
                intact &= shared.Length == data.Length && shared.Array.AsSpan(0, shared.Length).SequenceEqual(data);
                shared.Release();
                if (!intact)
                    Interlocked.Increment(ref failures);
            }
        });

        Assert.Equal(0, failures);
        Assert.Equal(pool.Rents, pool.Returns);
        await pool.AssertAllReturnedAsync();
    }
}
