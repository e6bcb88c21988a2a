using System;
using System.Collections.Generic;
using System.IO;
using System.Linq;
using System.Threading.Tasks;
using NetServer.Buffers;
using NetServer.Streams;
using NetServer.Tests.Infrastructure;
using Xunit;

namespace NetServer.Tests.Buffers;

public partial class SendQueueTests
{
    private static byte[] Pattern(int length, int seed)
    {
        var data = new byte[length];
        for (var i = 0; i < length; i++)
            data[i] = (byte)(seed * 13 + i);
        return data;
    }

    private static byte[] Concat(List<ArraySegment<byte>> segments) => segments.SelectMany(s => s).ToArray();

    /// <summary>Gathers what is in flight and "sends" <paramref name="sent"/> bytes of it (all when null).</summary>
    private static byte[] SendInflight(SendQueue queue, List<ArraySegment<byte>> gather, int? sent = null)
    {
        var total = queue.Gather(gather);
        Assert.Equal(gather.Sum(s => s.Count), total);
        var count = sent ?? total;
        var wire = Concat(gather).AsSpan(0, count).ToArray();
        queue.ConsumeInflight(count);
        return wire;
    }

    // --- SendQueue ---

    [Fact]
    public async Task Small_copies_coalesce_into_one_chunk_of_the_chunk_size()
    {
        var pool = new LeakCheckingBufferPool();
        var queue = new SendQueue(pool);
        var expected = new MemoryStream();
        for (var i = 0; i < 12; i++)
        {
            var data = Pattern(5, i);
            queue.AppendCopy(data, chunkSize: 64);
            expected.Write(data);
        }

        Assert.Equal(1, pool.Rents);
        Assert.Equal(60, queue.PendingBytes);
        Assert.True(queue.HasPending);
        Assert.False(queue.HasInflight);

        // The 13th does not fit in the 4 bytes left: a second chunk.
        var last = Pattern(5, 12);
        queue.AppendCopy(last, chunkSize: 64);
        expected.Write(last);
        Assert.Equal(2, pool.Rents);

        queue.MovePendingToInflight();
        Assert.False(queue.HasPending);
        Assert.Equal(0, queue.PendingBytes);
        Assert.Equal(65, queue.InflightBytes);
        Assert.Equal(2, queue.InflightSegments);

        var gather = new List<ArraySegment<byte>>();
        Assert.Equal(65, queue.Gather(gather));
        Assert.Equal(2, gather.Count);
        Assert.Equal(64, gather[0].Array!.Length);
        Assert.Equal(0, gather[0].Offset);
        Assert.Equal(60, gather[0].Count);
        Assert.Equal(5, gather[1].Count);
        Assert.Equal(expected.ToArray(), Concat(gather));

        queue.ConsumeInflight(65);
        Assert.False(queue.HasInflight);
        Assert.Equal(0, queue.InflightBytes);
        queue.ReleaseSpares();
        await pool.AssertAllReturnedAsync();
    }

    [Fact]
    public async Task A_copy_larger_than_the_chunk_size_gets_its_own_exact_chunk()
    {
        var pool = new LeakCheckingBufferPool();
        var queue = new SendQueue(pool);
        var small1 = Pattern(10, 1);
        var big = Pattern(100, 2);
        var small2 = Pattern(10, 3);
        queue.AppendCopy(small1, 64);
        queue.AppendCopy(big, 64);
        queue.AppendCopy(small2, 64);

        queue.MovePendingToInflight();
        var gather = new List<ArraySegment<byte>>();
        queue.Gather(gather);
        Assert.Equal(new[] { 64, 100, 64 }, gather.Select(s => s.Array!.Length));
        Assert.Equal(new[] { 10, 100, 10 }, gather.Select(s => s.Count));
        Assert.Equal(small1.Concat(big).Concat(small2).ToArray(), Concat(gather));

        Assert.Equal(120, queue.Clear());
        await pool.AssertAllReturnedAsync();
    }

    [Fact]
    public async Task Shared_payloads_are_queued_by_reference_and_break_coalescing()
    {
        var pool = new LeakCheckingBufferPool();
        var queue = new SendQueue(pool);
        var payload = Pattern(1000, 4);
        var shared = SharedBuffer.Create(pool, payload);

        queue.AppendCopy("ab"u8, 64);
        queue.AppendShared(shared);
        queue.AppendCopy("cd"u8, 64);

        Assert.Equal(2, shared.References);
        Assert.Equal(3, pool.Rents); // the shared array and two chunks: no copy of the payload
        Assert.Equal(1004, queue.PendingBytes);

        queue.MovePendingToInflight();
        var gather = new List<ArraySegment<byte>>();
        Assert.Equal(1004, queue.Gather(gather));
        Assert.Equal(3, gather.Count);
        Assert.Same(shared.Array, gather[1].Array);
        Assert.Equal(0, gather[1].Offset);
        Assert.Equal(1000, gather[1].Count);
        Assert.NotSame(gather[0].Array, gather[2].Array);
        Assert.Equal("ab"u8.ToArray().Concat(payload).Concat("cd"u8.ToArray()).ToArray(), Concat(gather));
        Assert.True(shared.Array.AsSpan(0, 1000).SequenceEqual(payload));

        // Sending past the shared segment drops the queue's reference, not the caller's.
        queue.ConsumeInflight(1002);
        Assert.Equal(1, shared.References);
        Assert.Equal(2, queue.InflightBytes);
        shared.Release();
        queue.ConsumeInflight(2);
        queue.ReleaseSpares();
        await pool.AssertAllReturnedAsync();
    }

    [Fact]
    public async Task Pending_moves_behind_in_flight_in_order_and_never_into_an_in_flight_chunk()
    {
        var pool = new LeakCheckingBufferPool();
        var queue = new SendQueue(pool);
        var gather = new List<ArraySegment<byte>>();

        queue.AppendCopy("abc"u8, 64);
        queue.MovePendingToInflight();
        queue.AppendCopy("def"u8, 64);
        Assert.Equal(2, pool.Rents);
        Assert.Equal(3, queue.FirstInflight.Count);
        Assert.Equal(3, queue.InflightBytes);
        Assert.Equal(3, queue.PendingBytes);

        var wire = new MemoryStream();
        wire.Write(SendInflight(queue, gather, sent: 1));

        var shared = SharedBuffer.Create(pool, "ghi"u8);
        queue.AppendShared(shared);
        shared.Release();
        queue.AppendCopy("jk"u8, 64);
        queue.MovePendingToInflight();
        Assert.False(queue.HasPending);
        Assert.Equal(4, queue.InflightSegments);
        Assert.Equal(10, queue.InflightBytes);

        wire.Write(SendInflight(queue, gather));
        Assert.Equal("abcdefghijk"u8.ToArray(), wire.ToArray());
        Assert.False(queue.HasInflight);
        queue.ReleaseSpares();
        await pool.AssertAllReturnedAsync();
    }

    [Fact]
    public async Task Gather_takes_at_most_eight_segments_and_counts_their_bytes()
    {
        var pool = new LeakCheckingBufferPool();
        var queue = new SendQueue(pool);
        for (var i = 1; i <= 10; i++)
        {
            var shared = SharedBuffer.Create(pool, Pattern(i, i));
            queue.AppendShared(shared);
            shared.Release();
        }

        queue.MovePendingToInflight();
        Assert.Equal(10, queue.InflightSegments);
        var gather = new List<ArraySegment<byte>> { new(new byte[3]), new(new byte[5]) };
        Assert.Equal(36, queue.Gather(gather));
        Assert.Equal(SendQueue.MaxGather, gather.Count);
        Assert.Equal(Enumerable.Range(1, 8), gather.Select(s => s.Count));

        // Gathering does not consume.
        Assert.Equal(10, queue.InflightSegments);
        Assert.Equal(55, queue.InflightBytes);

        queue.ConsumeInflight(36);
        Assert.Equal(19, queue.Gather(gather));
        Assert.Equal(new[] { 9, 10 }, gather.Select(s => s.Count));
        Assert.Equal(Pattern(9, 9).Concat(Pattern(10, 10)).ToArray(), Concat(gather));
        queue.ConsumeInflight(19);
        Assert.Equal(0, queue.Gather(gather));
        Assert.Empty(gather);
        await pool.AssertAllReturnedAsync();
    }

    [Fact]
    public async Task Partial_sends_advance_within_a_segment_and_release_finished_ones()
    {
        var pool = new LeakCheckingBufferPool();
        var queue = new SendQueue(pool);
        var shared = SharedBuffer.Create(pool, Pattern(10, 2));
        queue.AppendCopy(Pattern(10, 1), chunkSize: 10);
        queue.AppendShared(shared);
        queue.AppendCopy(Pattern(10, 3), chunkSize: 10);
        queue.MovePendingToInflight();
        var gather = new List<ArraySegment<byte>>();

        queue.ConsumeInflight(4);
        Assert.Equal(3, queue.InflightSegments);
        Assert.Equal(26, queue.InflightBytes);
        Assert.Equal(4, queue.FirstInflight.Offset);
        Assert.Equal(6, queue.FirstInflight.Count);

        queue.ConsumeInflight(11);
        Assert.Equal(2, queue.InflightSegments);
        Assert.Equal(2, shared.References);
        Assert.Equal(15, queue.Gather(gather));
        Assert.Equal(5, gather[0].Offset);
        Assert.Equal(5, gather[0].Count);
        Assert.Equal(Pattern(10, 2).AsSpan(5).ToArray().Concat(Pattern(10, 3)).ToArray(), Concat(gather));

        // Exactly to a segment boundary.
        queue.ConsumeInflight(5);
        Assert.Equal(1, shared.References);
        Assert.Equal(1, queue.InflightSegments);
        Assert.Equal(10, queue.InflightBytes);

        queue.ConsumeInflight(10);
        Assert.False(queue.HasInflight);
        Assert.Equal(0, queue.InflightBytes);
        shared.Release();
        queue.ReleaseSpares();
        await pool.AssertAllReturnedAsync();
    }

    [Fact]
    public async Task In_flight_remainders_of_direct_sends_are_queued_copied_or_by_reference()
    {
        var pool = new LeakCheckingBufferPool();
        var queue = new SendQueue(pool);
        var source = Pattern(50, 5);
        queue.AddInflightCopy(source.AsSpan(20));
        source[30] ^= 0xFF; // the caller's buffer may change once the call returns
        var shared = SharedBuffer.Create(pool, Pattern(40, 6));
        queue.AddInflightShared(shared, offset: 15);
        Assert.Equal(2, shared.References);
        Assert.Equal(55, queue.InflightBytes);
        Assert.False(queue.HasPending);

        var gather = new List<ArraySegment<byte>>();
        var wire = SendInflight(queue, gather);
        Assert.Equal(Pattern(50, 5).AsSpan(20).ToArray().Concat(Pattern(40, 6).AsSpan(15).ToArray()).ToArray(), wire);
        Assert.Equal(1, shared.References);
        shared.Release();
        queue.ReleaseSpares();
        await pool.AssertAllReturnedAsync();
    }

    [Fact]
    public async Task Clear_releases_everything_and_returns_the_unsent_byte_count()
    {
        var pool = new LeakCheckingBufferPool();
        var queue = new SendQueue(pool);
        var shared = SharedBuffer.Create(pool, Pattern(100, 7));
        queue.AppendCopy(Pattern(30, 1), 64);
        queue.AppendShared(shared);
        queue.MovePendingToInflight();
        queue.ConsumeInflight(10);
        queue.AppendCopy(Pattern(20, 2), 64);
        queue.AppendShared(shared);
        Assert.Equal(3, shared.References);

        Assert.Equal(20 + 100 + 20 + 100, queue.Clear());
        Assert.Equal(1, shared.References);
        Assert.Equal(1, pool.Outstanding); // only the caller's shared array
        Assert.False(queue.HasPending);
        Assert.False(queue.HasInflight);
        Assert.Equal(0, queue.PendingBytes);
        Assert.Equal(0, queue.InflightBytes);
        Assert.Equal(0, queue.Clear());

        // Usable again afterwards, with no coalescing into a released chunk.
        queue.AppendCopy("xy"u8, 64);
        queue.MovePendingToInflight();
        Assert.Equal("xy"u8.ToArray(), SendInflight(queue, new List<ArraySegment<byte>>()));
        shared.Release();
        Assert.Equal(0, queue.Clear());
        await pool.AssertAllReturnedAsync();
    }
}
