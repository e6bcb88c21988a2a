using System;
using System.Collections.Generic;
using BenchmarkDotNet.Attributes;
using NetServer.Buffers;
using NetServer.Streams;

namespace NetServer.MicroBenchmarks;

/// <summary>
/// A send queue's cycle while a send is in flight: senders append, the flusher moves pending to in
/// flight, gathers up to 8 segments (or stages many small ones) per send call and consumes what the
/// kernel took.
/// </summary>
[MemoryDiagnoser]
public class SendQueueBenchmarks
{
    private const int ChunkSize = 8192;

    private readonly List<ArraySegment<byte>> _gather = new(SendQueue.MaxGather);
    private readonly byte[] _payload = new byte[1024];
    private readonly byte[] _staging = new byte[SendQueue.StagingSize];
    private SendQueue _queue = null!;
    private SharedBuffer _shared = null!;

    /// <summary>Sends appended per cycle.</summary>
    [Params(16)]
    public int Sends { get; set; }

    /// <summary>Bytes per send.</summary>
    [Params(32, 512)]
    public int Size { get; set; }

    [GlobalSetup]
    public void Setup()
    {
        new Random(1).NextBytes(_payload);
        _queue = new SendQueue(BufferPool.Shared);
        _shared = SharedBuffer.Create(BufferPool.Shared, _payload.AsSpan(0, Size));
    }

    [GlobalCleanup]
    public void Cleanup()
    {
        _queue.Clear();
        _shared.Release();
    }

    /// <summary>Small sends copied and coalesced into pooled chunks, then flushed (a busy queue: chunks are reused).</summary>
    [Benchmark]
    public long AppendCopyCycle()
    {
        var data = _payload.AsSpan(0, Size);
        for (var i = 0; i < Sends; i++)
            _queue.AppendCopy(data, ChunkSize);
        return Flush();
    }

    /// <summary>As <see cref="AppendCopyCycle"/>, but the queue goes idle after each flush and gives its chunks back to the pool.</summary>
    [Benchmark]
    public long AppendCopyCycleThenIdle()
    {
        var data = _payload.AsSpan(0, Size);
        for (var i = 0; i < Sends; i++)
            _queue.AppendCopy(data, ChunkSize);
        var sent = Flush();
        _queue.ReleaseSpares();
        return sent;
    }

    /// <summary>Multicast payloads queued by reference, then flushed.</summary>
    [Benchmark]
    public long AppendSharedCycle()
    {
        for (var i = 0; i < Sends; i++)
            _queue.AppendShared(_shared);
        return Flush();
    }

    // What the connection's flusher does: one segment as is, many small ones staged into one
    // buffer, otherwise a gather of up to eight; the kernel takes everything offered.
    private long Flush()
    {
        _queue.MovePendingToInflight();
        long sent = 0;
        while (_queue.HasInflight)
        {
            int total;
            if (_queue.InflightSegments > SendQueue.MaxGather && _queue.CanStage)
            {
                total = _queue.Stage(_staging);
            }
            else
            {
                total = _queue.Gather(_gather);
                _gather.Clear();
            }

            _queue.ConsumeInflight(total);
            _queue.RecycleFinished();
            sent += total;
        }

        return sent;
    }
}
