using System.Diagnostics;

namespace NetServer.Buffers;

/// <summary>
/// A contiguous byte buffer rented from a <see cref="BufferPool"/>, owned by one object. It grows by
/// doubling, never past <see cref="Limit"/>, and <see cref="Release"/> hands the array back once the
/// buffer is empty, so a burst does not leave a large array parked on an idle owner.
/// </summary>
/// <remarks>Not thread-safe: the owner serialises access.</remarks>
internal sealed class PooledBuffer : IDisposable
{
    private readonly BufferPool _pool;
    private byte[]? _array;
    private int _start;
    private int _end;
    private int _limit;

    public PooledBuffer(BufferPool pool, int limit)
    {
        _pool = pool;
        Limit = limit;
    }

    /// <summary>The most bytes the buffer may ever hold (written and free space together).</summary>
    public int Limit
    {
        get => _limit;
        set => _limit = ThrowHelper.ValidateOption(value, zeroAllowed: false, nameof(Limit));
    }

    /// <summary>Bytes written and not yet consumed.</summary>
    public int Length => _end - _start;

    /// <summary>Size of the array currently held (0 when the buffer holds none).</summary>
    public int Capacity => _array?.Length ?? 0;

    /// <summary>The written, unconsumed bytes.</summary>
    public ReadOnlySpan<byte> WrittenSpan => _array is null ? default : new ReadOnlySpan<byte>(_array, _start, _end - _start);

    /// <summary>The written, unconsumed bytes as an array segment.</summary>
    public ArraySegment<byte> WrittenSegment => _array is null ? default : new ArraySegment<byte>(_array, _start, _end - _start);

    /// <summary>
    /// Makes room for at least <paramref name="sizeHint"/> more bytes and returns the free space.
    /// Returns false, changing nothing, when that would take the buffer past <see cref="Limit"/>.
    /// </summary>
    public bool TryGetWritable(int sizeHint, out ArraySegment<byte> free)
    {
        if (sizeHint < 1)
            sizeHint = 1;
        var length = _end - _start;
        if ((long)length + sizeHint > _limit)
        {
            free = default;
            return false;
        }

        if (_array is null || _array.Length - _end < sizeHint)
            MakeRoom(length, sizeHint);

        free = new ArraySegment<byte>(_array!, _end, (int)Math.Min(_array!.Length, (long)_start + _limit) - _end);
        return true;
    }

    private void MakeRoom(int length, int sizeHint)
    {
        var needed = length + sizeHint;
        if (_array is not null && _array.Length >= needed)
        {
            // Enough space overall: slide the unconsumed bytes to the front.
            System.Buffer.BlockCopy(_array, _start, _array, 0, length);
            _start = 0;
            _end = length;
            return;
        }

        // Double, but never past the limit and never less than what is needed now.
        var grown = _array is null ? needed : (int)Math.Min((long)_array.Length * 2, _limit);
        var fresh = _pool.Rent(Math.Max(grown, needed));
        if (_array is not null)
        {
            System.Buffer.BlockCopy(_array, _start, fresh, 0, length);
            _pool.Return(_array);
        }

        _array = fresh;
        _start = 0;
        _end = length;
    }

    /// <summary>Marks <paramref name="count"/> bytes of the space from <see cref="TryGetWritable"/> as written.</summary>
    public void Advance(int count)
    {
        Debug.Assert(_array is not null && count >= 0 && _end + count <= _array.Length);
        _end += count;
    }

    /// <summary>Drops <paramref name="count"/> bytes from the front of the written bytes.</summary>
    public void Consume(int count)
    {
        Debug.Assert(count >= 0 && count <= _end - _start);
        _start += count;
        if (_start == _end)
            _start = _end = 0;
    }

    /// <summary>Returns the array to the pool if the buffer is empty; the next write rents again.</summary>
    public void Release()
    {
        if (_array is not null && _start == _end)
        {
            var array = _array;
            _array = null;
            _start = _end = 0;
            _pool.Return(array);
        }
    }

    /// <summary>Returns the array to the pool, discarding any unconsumed bytes.</summary>
    public void Dispose()
    {
        _start = _end = 0;
        var array = _array;
        _array = null;
        if (array is not null)
            _pool.Return(array);
    }
}
