using System;
using BenchmarkDotNet.Attributes;
using NetServer.Buffers;

namespace NetServer.MicroBenchmarks;

/// <summary>The receive buffer's shapes: a steady write/consume cycle, and a burst that grows it then lets it go.</summary>
[MemoryDiagnoser]
public class PooledBufferBenchmarks : IDisposable
{
    private readonly byte[] _payload = new byte[4096];
    private PooledBuffer _buffer = null!;

    [GlobalSetup]
    public void Setup()
    {
        new Random(1).NextBytes(_payload);
        _buffer = new PooledBuffer(BufferPool.Shared, 64 * 1024);
    }

    [GlobalCleanup]
    public void Dispose()
    {
        _buffer?.Dispose();
        GC.SuppressFinalize(this);
    }

    /// <summary>Write 256 bytes, consume them in two parts (a parser taking a header, then a body).</summary>
    [Benchmark]
    public int WriteConsume256()
    {
        _buffer.TryGetWritable(256, out var free);
        _payload.AsSpan(0, 256).CopyTo(free.AsSpan());
        _buffer.Advance(256);
        _buffer.Consume(16);
        var length = _buffer.Length;
        _buffer.Consume(length);
        return length;
    }

    /// <summary>Write 4 KiB at a time up to the 64 KiB limit (1 rent + 4 doublings), consume it all, release the array.</summary>
    [Benchmark]
    public int GrowTo64KiBAndRelease()
    {
        while (_buffer.TryGetWritable(_payload.Length, out var free))
        {
            _payload.AsSpan().CopyTo(free);
            _buffer.Advance(_payload.Length);
        }

        var length = _buffer.Length;
        _buffer.Consume(length);
        _buffer.Release();
        return length;
    }
}
