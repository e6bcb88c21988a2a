using BenchmarkDotNet.Attributes;
using NetServer.Buffers;

namespace NetServer.MicroBenchmarks;

/// <summary>One rent and one return through <see cref="BufferPool.Shared"/> (ArrayPool&lt;byte&gt;.Shared underneath).</summary>
[MemoryDiagnoser]
public class BufferPoolBenchmarks
{
    [Params(256, 4096, 65536)]
    public int Size { get; set; }

    [Benchmark]
    public int RentReturn()
    {
        var array = BufferPool.Shared.Rent(Size);
        var length = array.Length;
        BufferPool.Shared.Return(array);
        return length;
    }
}
