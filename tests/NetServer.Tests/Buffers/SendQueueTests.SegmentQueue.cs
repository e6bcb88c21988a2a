using System;
using System.Collections.Generic;
using System.Linq;
using NetServer.Streams;
using Xunit;

namespace NetServer.Tests.Buffers;

public partial class SendQueueTests
{
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
