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

public class SendQueueTests
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

    [Theory]
    [InlineData(1)]
    [InlineData(2)]
    [InlineData(3)]
    [InlineData(4)]
    [InlineData(5)]
    [InlineData(6)]
    public async Task Random_splits_reach_the_wire_as_the_input_concatenation(int seed)
    {
        var random = new Random(seed);
        var pool = new LeakCheckingBufferPool();
        var queue = new SendQueue(pool);
        var input = new byte[200_000];
        random.NextBytes(input);
        var chunkSize = random.Next(16, 4096);
        var wire = new MemoryStream();
        var gather = new List<ArraySegment<byte>>();
        var staging = new byte[SendQueue.StagingSize];
        long queued = 0;
        var position = 0;

        while (position < input.Length || queue.HasPending || queue.HasInflight)
        {
            switch (random.Next(6))
            {
                case 0 or 1 when position < input.Length:
                {
                    var size = Math.Min(input.Length - position, random.Next(3) == 0 ? random.Next(1, 10_000) : random.Next(1, 100));
                    var piece = input.AsSpan(position, size);
                    if (random.Next(5) == 0)
                    {
                        var shared = SharedBuffer.Create(pool, piece);
                        queue.AppendShared(shared);
                        shared.Release();
                    }
                    else
                    {
                        queue.AppendCopy(piece, chunkSize);
                    }

                    position += size;
                    queued += size;
                    break;
                }

                case 2:
                    queue.MovePendingToInflight();
                    break;

                case 3:
                    // What the connection does under the send lock: finished chunks become spares; idle gives them back.
                    queue.RecycleFinished();
                    if (random.Next(4) == 0)
                        queue.ReleaseSpares();
                    break;

                case 4 when queue.CanStage:
                {
                    var staged = queue.Stage(staging);
                    Assert.InRange(staged, 1, queue.InflightBytes);
                    var sent = random.Next(2) == 0 ? staged : random.Next(0, staged + 1);
                    wire.Write(staging, 0, sent);
                    queue.ConsumeInflight(sent);
                    break;
                }

                default:
                    if (!queue.HasInflight)
                        break;
                    var total = queue.Gather(gather);
                    Assert.InRange(gather.Count, 1, SendQueue.MaxGather);
                    Assert.True(total <= queue.InflightBytes);
                    var part = random.Next(3) == 0 ? total : random.Next(0, total + 1);
                    wire.Write(SendInflight(queue, gather, part));
                    break;
            }

            Assert.Equal(queued - wire.Length, queue.PendingBytes + queue.InflightBytes);
        }

        Assert.Equal(input, wire.ToArray());
        Assert.Equal(0, queue.Clear());
        await pool.AssertAllReturnedAsync();
    }

    [Fact]
    public async Task Clear_in_the_middle_of_random_traffic_leaks_nothing()
    {
        var random = new Random(42);
        var pool = new LeakCheckingBufferPool();
        var queue = new SendQueue(pool);
        var gather = new List<ArraySegment<byte>>();
        long queued = 0, sent = 0;
        for (var i = 0; i < 500; i++)
        {
            var data = Pattern(random.Next(1, 300), i);
            if (random.Next(4) == 0)
            {
                var shared = SharedBuffer.Create(pool, data);
                queue.AppendShared(shared);
                shared.Release();
            }
            else
            {
                queue.AppendCopy(data, 256);
            }

            queued += data.Length;
            if (random.Next(3) == 0)
                queue.MovePendingToInflight();
            if (random.Next(3) == 0 && queue.HasInflight)
                sent += SendInflight(queue, gather, random.Next(0, queue.Gather(gather) + 1)).Length;
            if (random.Next(5) == 0)
                queue.RecycleFinished();
        }

        Assert.Equal(queued - sent, queue.Clear());
        await pool.AssertAllReturnedAsync();
    }

    [Fact]
    public async Task Finished_chunks_are_reused_once_recycled_and_given_back_when_idle()
    {
        var pool = new LeakCheckingBufferPool();
        var queue = new SendQueue(pool);
        var gather = new List<ArraySegment<byte>>();
        queue.AppendCopy(Pattern(10, 1), 64);
        queue.MovePendingToInflight();
        var first = queue.FirstInflight.Array;
        Assert.Equal(Pattern(10, 1), SendInflight(queue, gather));

        // Not reusable until the flusher hands it over under the send lock.
        queue.AppendCopy(Pattern(10, 2), 64);
        Assert.Equal(2, pool.Rents);
        queue.MovePendingToInflight();
        queue.RecycleFinished();

        queue.AppendCopy(Pattern(10, 3), 64);
        Assert.Equal(2, pool.Rents);
        queue.MovePendingToInflight();
        Assert.Equal(2, queue.InflightSegments);
        Assert.Same(first, GatherArrays(queue, gather)[1]); // the finished chunk, reused
        Assert.Equal(Pattern(10, 2).Concat(Pattern(10, 3)).ToArray(), SendInflight(queue, gather));

        // A spare too small for the next send goes back; a fitting chunk is rented.
        queue.RecycleFinished();
        queue.AppendCopy(Pattern(100, 4), 64);
        Assert.Equal(3, pool.Rents);
        Assert.Equal(100, queue.PendingBytes);

        queue.MovePendingToInflight();
        Assert.Equal(Pattern(100, 4), SendInflight(queue, gather));
        queue.ReleaseSpares();
        await pool.AssertAllReturnedAsync();
    }

    private static byte[]?[] GatherArrays(SendQueue queue, List<ArraySegment<byte>> gather)
    {
        queue.Gather(gather);
        return gather.Select(s => s.Array).ToArray();
    }

    [Fact]
    public async Task Stage_copies_small_front_segments_without_consuming_them()
    {
        var pool = new LeakCheckingBufferPool();
        var queue = new SendQueue(pool);
        var shared = SharedBuffer.Create(pool, Pattern(20, 2));
        queue.AppendCopy(Pattern(10, 1), 10);
        queue.AppendShared(shared);
        shared.Release();
        queue.AppendCopy(Pattern(3000, 3), 10); // too big to be worth staging
        queue.AppendCopy(Pattern(5, 4), 10);
        queue.MovePendingToInflight();
        Assert.True(queue.CanStage);

        var staging = new byte[SendQueue.StagingSize];
        Assert.Equal(30, queue.Stage(staging));
        Assert.Equal(Pattern(10, 1).Concat(Pattern(20, 2)).ToArray(), staging.AsSpan(0, 30).ToArray());
        Assert.Equal(4, queue.InflightSegments);
        Assert.Equal(3035, queue.InflightBytes);

        // The kernel took part of the staged bytes: the queue resumes inside the shared segment.
        queue.ConsumeInflight(17);
        Assert.False(queue.CanStage); // the next segment is the big one
        var gather = new List<ArraySegment<byte>>();
        Assert.Equal(Pattern(20, 2).AsSpan(7).ToArray().Concat(Pattern(3000, 3)).Concat(Pattern(5, 4)).ToArray(), SendInflight(queue, gather));

        // Staging stops where the staging buffer is full.
        for (var i = 0; i < 40; i++)
            queue.AppendCopy(Pattern(2000, i), 2000);
        queue.MovePendingToInflight();
        var small = new byte[4500];
        Assert.Equal(4000, queue.Stage(small));
        Assert.Equal(Pattern(2000, 0).Concat(Pattern(2000, 1)).ToArray(), small.AsSpan(0, 4000).ToArray());
        Assert.Equal(80_000, queue.Clear());
        await pool.AssertAllReturnedAsync();
    }

    // --- SegmentQueue ---

    private static SendSegment Segment(int id) => new() { Array = Array.Empty<byte>(), Offset = id };

    private static int[] Ids(SegmentQueue queue) => Enumerable.Range(0, queue.Count).Select(i => queue[i].Offset).ToArray();

    [Fact]
    public void Segment_ring_grows_across_a_wrap_around_keeping_order()
    {
        var queue = new SegmentQueue();
        for (var i = 0; i < 4; i++)
            queue.Add(Segment(i));
        queue.RemoveFirst();
        queue.RemoveFirst();
        queue.Add(Segment(4)); // wraps to the front of the ring
        queue.Add(Segment(5));
        Assert.Equal(new[] { 2, 3, 4, 5 }, Ids(queue));

        queue.Add(Segment(6)); // grows while wrapped
        Assert.Equal(new[] { 2, 3, 4, 5, 6 }, Ids(queue));
        Assert.Equal(2, queue.First.Offset);
        Assert.Equal(6, queue.Last.Offset);

        for (var i = 7; i < 40; i++)
            queue.Add(Segment(i));
        Assert.Equal(Enumerable.Range(2, 38), Ids(queue));
        while (!queue.IsEmpty)
        {
            var first = queue.First.Offset;
            queue.RemoveFirst();
            Assert.True(queue.IsEmpty || queue.First.Offset == first + 1);
        }

        Assert.Equal(0, queue.Count);
    }

    [Fact]
    public void Segment_ring_matches_a_queue_under_random_use()
    {
        var random = new Random(7);
        var queue = new SegmentQueue();
        var model = new Queue<int>();
        var next = 0;
        for (var step = 0; step < 20_000; step++)
        {
            if (model.Count == 0 || random.Next(100) < (step % 2000 < 1000 ? 60 : 40))
            {
                queue.Add(Segment(next));
                model.Enqueue(next++);
            }
            else
            {
                Assert.Equal(model.Dequeue(), queue.First.Offset);
                queue.RemoveFirst();
            }

            Assert.Equal(model.Count, queue.Count);
            Assert.Equal(model.Count == 0, queue.IsEmpty);
            if (model.Count > 0)
                Assert.Equal(model.Last(), queue.Last.Offset);
            if (step % 97 == 0)
                Assert.Equal(model.ToArray(), Ids(queue));
        }
    }

    [Fact]
    public void Segment_ring_hands_out_references_into_its_storage()
    {
        var queue = new SegmentQueue();
        queue.Add(new SendSegment { Array = new byte[10], Offset = 0, Count = 10 });
        queue.Add(new SendSegment { Array = new byte[10], Offset = 0, Count = 10 });
        ref var first = ref queue.First;
        first.Offset += 4;
        first.Count -= 4;
        queue.Last.Count = 3;
        Assert.Equal(4, queue[0].Offset);
        Assert.Equal(6, queue[0].Count);
        Assert.Equal(3, queue[1].Count);
    }
}
