using System;
using System.Collections.Generic;
using System.Linq;
using System.Threading.Tasks;
using NetServer.Buffers;
using NetServer.Tests.Infrastructure;
using Xunit;

namespace NetServer.Tests.Buffers;

public class PooledBufferTests
{
    /// <summary>Hands out arrays rounded up to a power of two, as ArrayPool does, and still checks for leaks.</summary>
    private sealed class RoundingPool(LeakCheckingBufferPool inner) : BufferPool
    {
        public override byte[] Rent(int minimumLength) => inner.Rent((int)Math.Min(System.Numerics.BitOperations.RoundUpToPowerOf2((uint)minimumLength), int.MaxValue));

        public override void Return(byte[] array) => inner.Return(array);
    }

    private static void Write(PooledBuffer buffer, ReadOnlySpan<byte> data)
    {
        Assert.True(buffer.TryGetWritable(data.Length, out var free));
        Assert.True(free.Count >= data.Length);
        data.CopyTo(free.AsSpan());
        buffer.Advance(data.Length);
    }

    private static byte[] Pattern(int length, int seed)
    {
        var data = new byte[length];
        for (var i = 0; i < length; i++)
            data[i] = (byte)(seed + i * 7);
        return data;
    }

    [Fact]
    public async Task Grows_by_doubling_up_to_the_limit()
    {
        var pool = new LeakCheckingBufferPool();
        using (var buffer = new PooledBuffer(pool, limit: 1000))
        {
            Assert.Equal(0, buffer.Capacity);
            var capacities = new List<int>();
            for (var i = 0; i < 10; i++)
            {
                Write(buffer, Pattern(100, i));
                capacities.Add(buffer.Capacity);
                Assert.Equal(1, pool.Outstanding);
            }

            // First rent is what was asked for, then each growth doubles, the last one capped at the limit.
            Assert.Equal(new[] { 100, 200, 400, 400, 800, 800, 800, 800, 1000, 1000 }, capacities);
            Assert.Equal(1000, buffer.Length);
            Assert.Equal(5, pool.Rents);
            Assert.Equal(4, pool.Returns);
        }

        await pool.AssertAllReturnedAsync();
    }

    [Fact]
    public async Task Refuses_past_the_limit_and_changes_nothing()
    {
        var pool = new LeakCheckingBufferPool();
        using (var buffer = new PooledBuffer(pool, limit: 1000))
        {
            var data = Pattern(900, 3);
            Write(buffer, data);
            Assert.Equal(900, buffer.Capacity);
            var rents = pool.Rents;

            Assert.False(buffer.TryGetWritable(101, out var refused));
            Assert.Null(refused.Array);
            Assert.Equal(0, refused.Count);
            Assert.Equal(900, buffer.Length);
            Assert.Equal(900, buffer.Capacity);
            Assert.Equal(rents, pool.Rents);
            Assert.True(buffer.WrittenSpan.SequenceEqual(data));

            // Exactly up to the limit is allowed.
            Assert.True(buffer.TryGetWritable(100, out var free));
            Assert.Equal(100, free.Count);
            Assert.Equal(1000, buffer.Capacity);
            buffer.Advance(100);
            Assert.False(buffer.TryGetWritable(1, out _));
            Assert.Equal(1000, buffer.Length);
            Assert.True(buffer.WrittenSpan[..900].SequenceEqual(data));
        }

        await pool.AssertAllReturnedAsync();
    }

    [Fact]
    public async Task A_hint_larger_than_the_limit_is_refused_on_an_empty_buffer()
    {
        var pool = new LeakCheckingBufferPool();
        using (var buffer = new PooledBuffer(pool, limit: 64))
        {
            Assert.False(buffer.TryGetWritable(65, out _));
            Assert.Equal(0, buffer.Capacity);
            Assert.Equal(0, pool.Rents);
        }

        await pool.AssertAllReturnedAsync();
    }

    [Fact]
    public async Task Free_space_never_exceeds_the_limit_when_the_pool_hands_out_larger_arrays()
    {
        var leaks = new LeakCheckingBufferPool();
        using (var buffer = new PooledBuffer(new RoundingPool(leaks), limit: 1000))
        {
            Assert.True(buffer.TryGetWritable(1000, out var free));
            Assert.Equal(1024, buffer.Capacity);
            Assert.Equal(1000, free.Count);
            buffer.Advance(1000);
            buffer.Consume(10);

            // 990 held and 24 bytes free at the end of the array, but only 10 of them are within the limit.
            Assert.True(buffer.TryGetWritable(10, out free));
            Assert.Equal(1000, free.Offset);
            Assert.Equal(10, free.Count);
            Assert.False(buffer.TryGetWritable(11, out _));
            Assert.Equal(1, leaks.Rents);
        }

        await leaks.AssertAllReturnedAsync();
    }

    [Fact]
    public async Task Advance_and_consume_move_the_written_window()
    {
        var pool = new LeakCheckingBufferPool();
        using (var buffer = new PooledBuffer(pool, limit: 1024))
        {
            Write(buffer, "hello world"u8);
            Assert.Equal(11, buffer.Length);
            Assert.True(buffer.WrittenSpan.SequenceEqual("hello world"u8));

            buffer.Consume(6);
            Assert.Equal(5, buffer.Length);
            Assert.True(buffer.WrittenSpan.SequenceEqual("world"u8));
            Assert.Equal(6, buffer.WrittenSegment.Offset);
            Assert.Equal(5, buffer.WrittenSegment.Count);

            Write(buffer, "!"u8);
            Assert.True(buffer.WrittenSpan.SequenceEqual("world!"u8));

            // Consuming everything rewinds to the front of the array.
            buffer.Consume(6);
            Assert.Equal(0, buffer.Length);
            Assert.True(buffer.TryGetWritable(1, out var free));
            Assert.Equal(0, free.Offset);
            Assert.Equal(1, pool.Rents);
        }

        await pool.AssertAllReturnedAsync();
    }

    [Fact]
    public async Task Compacts_instead_of_growing_when_the_array_has_room()
    {
        var pool = new LeakCheckingBufferPool();
        using (var buffer = new PooledBuffer(pool, limit: 1000))
        {
            var data = Pattern(100, 1);
            Write(buffer, data);
            var array = buffer.WrittenSegment.Array;
            buffer.Consume(90);

            Assert.True(buffer.TryGetWritable(50, out var free));
            Assert.Same(array, free.Array);
            Assert.Equal(1, pool.Rents);
            Assert.Equal(100, buffer.Capacity);
            Assert.Equal(0, buffer.WrittenSegment.Offset);
            Assert.True(buffer.WrittenSpan.SequenceEqual(data.AsSpan(90)));
            Assert.Equal(10, free.Offset);
            Assert.Equal(90, free.Count);
        }

        await pool.AssertAllReturnedAsync();
    }

    [Fact]
    public async Task Growth_keeps_the_unconsumed_bytes_when_the_start_has_moved()
    {
        var pool = new LeakCheckingBufferPool();
        using (var buffer = new PooledBuffer(pool, limit: 1000))
        {
            var data = Pattern(100, 5);
            Write(buffer, data);
            buffer.Consume(30);

            Assert.True(buffer.TryGetWritable(50, out var free));
            Assert.Equal(200, buffer.Capacity);
            Assert.Equal(0, buffer.WrittenSegment.Offset);
            Assert.True(buffer.WrittenSpan.SequenceEqual(data.AsSpan(30)));
            Assert.Equal(70, free.Offset);
            Assert.Equal(130, free.Count);
            Assert.Equal(1, pool.Outstanding);
        }

        await pool.AssertAllReturnedAsync();
    }

    [Fact]
    public async Task Release_returns_the_array_only_when_empty()
    {
        var pool = new LeakCheckingBufferPool();
        using (var buffer = new PooledBuffer(pool, limit: 1000))
        {
            buffer.Release();
            Assert.Equal(0, pool.Returns);

            Write(buffer, Pattern(50, 2));
            buffer.Consume(20);
            buffer.Release();
            Assert.Equal(0, pool.Returns);
            Assert.Equal(50, buffer.Capacity);
            Assert.True(buffer.WrittenSpan.SequenceEqual(Pattern(50, 2).AsSpan(20)));

            buffer.Consume(30);
            buffer.Release();
            Assert.Equal(1, pool.Returns);
            Assert.Equal(0, pool.Outstanding);
            Assert.Equal(0, buffer.Capacity);
            Assert.True(buffer.WrittenSpan.IsEmpty);

            // The next write rents again.
            Write(buffer, Pattern(10, 3));
            Assert.Equal(2, pool.Rents);
            Assert.True(buffer.WrittenSpan.SequenceEqual(Pattern(10, 3)));
        }

        await pool.AssertAllReturnedAsync();
    }

    [Fact]
    public async Task Dispose_returns_the_array_once_even_with_unconsumed_bytes()
    {
        var pool = new LeakCheckingBufferPool();
        var buffer = new PooledBuffer(pool, limit: 1000);
        Write(buffer, Pattern(70, 4));
        buffer.Dispose();
        Assert.Equal(1, pool.Returns);
        Assert.Equal(0, buffer.Length);
        Assert.Equal(0, buffer.Capacity);
        buffer.Dispose();
        Assert.Equal(1, pool.Returns);
        await pool.AssertAllReturnedAsync();
    }

    [Theory]
    [InlineData(1)]
    [InlineData(2)]
    [InlineData(3)]
    [InlineData(4)]
    public async Task Written_bytes_survive_growth_and_compaction_byte_for_byte(int seed)
    {
        var random = new Random(seed);
        var pool = new LeakCheckingBufferPool();
        const int Limit = 64 * 1024;
        var expected = new List<byte>();
        var next = 0;
        var grew = 0;
        using (var buffer = new PooledBuffer(pool, Limit))
        {
            for (var step = 0; step < 2000; step++)
            {
                if (random.Next(3) != 0)
                {
                    var size = random.Next(1, random.Next(2) == 0 ? 64 : 4096);
                    var capacity = buffer.Capacity;
                    if (!buffer.TryGetWritable(size, out var free))
                    {
                        Assert.True(buffer.Length + size > Limit);
                        continue;
                    }

                    Assert.True(free.Count >= size);
                    Assert.True(buffer.Length + free.Count <= Limit);
                    if (buffer.Capacity > capacity)
                        grew++;
                    for (var i = 0; i < size; i++)
                    {
                        free.Array![free.Offset + i] = (byte)next;
                        expected.Add((byte)next++);
                    }

                    buffer.Advance(size);
                }
                else if (expected.Count > 0)
                {
                    // Small consumes too, so growth also happens with the start moved.
                    var count = random.Next(0, (random.Next(2) == 0 ? Math.Min(expected.Count, 16) : expected.Count) + 1);
                    buffer.Consume(count);
                    expected.RemoveRange(0, count);
                    if (random.Next(10) == 0)
                        buffer.Release();
                }

                Assert.Equal(expected.Count, buffer.Length);
                Assert.True(buffer.WrittenSpan.SequenceEqual(expected.ToArray()), $"step {step}");
                Assert.True(pool.Outstanding <= 1);
            }
        }

        Assert.True(grew > 3, $"the buffer grew only {grew} times");
        await pool.AssertAllReturnedAsync();
    }

    [Fact]
    public async Task Free_space_is_correct_with_an_int_max_limit_after_a_partial_consume()
    {
        // Connection creates its receive buffer with int.MaxValue as the limit.
        var pool = new LeakCheckingBufferPool();
        using (var buffer = new PooledBuffer(pool, int.MaxValue))
        {
            Assert.True(buffer.TryGetWritable(10, out _));
            buffer.Advance(5);
            buffer.Consume(2);

            // _start + _limit overflows int here unless computed in long.
            Assert.True(buffer.TryGetWritable(1, out var free));
            Assert.Equal(5, free.Offset);
            Assert.Equal(5, free.Count);
        }

        await pool.AssertAllReturnedAsync();
    }

    [Fact]
    public void Limit_must_be_positive()
    {
        var pool = new LeakCheckingBufferPool();
        Assert.Throws<ArgumentOutOfRangeException>(() => new PooledBuffer(pool, 0));
        using var buffer = new PooledBuffer(pool, 10);
        Assert.Throws<ArgumentOutOfRangeException>(() => buffer.Limit = -1);
        Assert.Equal(10, buffer.Limit);
    }
}
