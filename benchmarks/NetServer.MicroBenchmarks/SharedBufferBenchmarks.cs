using System;
using BenchmarkDotNet.Attributes;
using NetServer.Buffers;

namespace NetServer.MicroBenchmarks;

/// <summary>The multicast shape: one copy into a shared buffer, one reference per session, every reference released.</summary>
[MemoryDiagnoser]
public class SharedBufferBenchmarks
{
    private byte[] _payload = null!;

    [Params(1, 16, 100)]
    public int Sessions { get; set; }

    /// <summary>Payload bytes: up to 1 KiB a recycled holder keeps its array; larger ones go back to the pool.</summary>
    [Params(256, 4096)]
    public int Size { get; set; }

    [GlobalSetup]
    public void Setup()
    {
        _payload = new byte[Size];
        new Random(1).NextBytes(_payload);
    }

    [Benchmark]
    public int CreateReferenceRelease()
    {
        var shared = SharedBuffer.Create(BufferPool.Shared, _payload);
        var length = shared.Length;
        for (var i = 0; i < Sessions; i++)
            shared.AddReference();

        // The creator's reference, then each session's.
        for (var i = 0; i <= Sessions; i++)
            shared.Release();
        return length;
    }
}
