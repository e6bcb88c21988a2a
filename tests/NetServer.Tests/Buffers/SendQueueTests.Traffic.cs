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

/// <summary>SendQueue under random traffic, chunk reuse and staging.</summary>
public partial class SendQueueTests
{
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
}
