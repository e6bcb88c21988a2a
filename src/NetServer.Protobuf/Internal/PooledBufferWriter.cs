using System;
using System.Buffers;

namespace NetServer.Protobuf.Internal;

/// <summary>
/// An <see cref="IBufferWriter{T}"/> over one array rented from <see cref="ArrayPool{T}.Shared"/>,
/// for an envelope serialized once and sent to many (a multicast). One per thread, reused; a larger
/// message rents a larger array and gives the old one back.
/// </summary>
internal sealed class PooledBufferWriter : IBufferWriter<byte>, IDisposable
{
    [ThreadStatic]
    private static PooledBufferWriter? t_cached;

    private byte[] _buffer = [];
    private int _written;

    private PooledBufferWriter()
    {
    }

    public ReadOnlySpan<byte> WrittenSpan => new(_buffer, 0, _written);

    public static PooledBufferWriter Rent()
    {
        var writer = t_cached ?? new PooledBufferWriter();
        t_cached = null;
        writer._written = 0;
        return writer;
    }

    public void Advance(int count)
    {
        if (count < 0 || _written + count > _buffer.Length)
            throw new ArgumentOutOfRangeException(nameof(count), "Advance past the memory returned by GetMemory/GetSpan.");
        _written += count;
    }

    public Memory<byte> GetMemory(int sizeHint = 0)
    {
        Ensure(sizeHint);
        return _buffer.AsMemory(_written);
    }

    public Span<byte> GetSpan(int sizeHint = 0)
    {
        Ensure(sizeHint);
        return _buffer.AsSpan(_written);
    }

    /// <summary>Keeps the array for this thread's next multicast (a small one), or gives it back to the pool.</summary>
    public void Dispose()
    {
        _written = 0;
        if (_buffer.Length > 64 * 1024)
        {
            ArrayPool<byte>.Shared.Return(_buffer);
            _buffer = [];
        }

        t_cached = this;
    }

    private void Ensure(int sizeHint)
    {
        var needed = (long)_written + Math.Max(sizeHint, 1);
        if (needed <= _buffer.Length)
            return;
        if (needed > int.MaxValue)
            throw new InvalidOperationException($"A message holds at most {int.MaxValue} bytes.");
        var size = (int)Math.Min(Math.Max(needed, Math.Max(256L, 2L * _buffer.Length)), int.MaxValue);
        var larger = ArrayPool<byte>.Shared.Rent(size);
        _buffer.AsSpan(0, _written).CopyTo(larger);
        if (_buffer.Length > 0)
            ArrayPool<byte>.Shared.Return(_buffer);
        _buffer = larger;
    }
}
