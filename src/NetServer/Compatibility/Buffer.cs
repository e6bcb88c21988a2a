using System.Diagnostics;

namespace NetServer;

/// <summary>
/// A growable byte buffer: NetCoreServer's <c>Buffer</c>. It holds <see cref="Size"/> bytes at the
/// start of <see cref="Data"/> and a read position, <see cref="Offset"/>, within them. HTTP messages
/// build and keep their bytes in one (<c>HttpRequest.Cache</c>, <c>HttpResponse.Cache</c>).
/// </summary>
/// <remarks>
/// <para>
/// Growth is explicit: the buffer grows only when an <c>Append</c>, <see cref="Reserve"/> or
/// <see cref="Resize"/> needs more room, to the larger of what is needed and twice the current
/// capacity (so a run of appends copies each byte a bounded number of times), and never past the
/// largest byte array the runtime allows (about 2 GiB): a request beyond that throws instead of
/// wrapping around. It does not shrink by itself; an HTTP message gives a large array back when it
/// is cleared.
/// </para>
/// <para>
/// Differences from NetCoreServer: indexes, offsets and sizes are checked (out of range throws
/// <see cref="ArgumentOutOfRangeException"/>, which is an <see cref="ArgumentException"/> as before);
/// <see cref="AsSpan"/> is the bytes from <see cref="Offset"/> to <see cref="Size"/>; bytes exposed
/// by <see cref="Resize"/> growing are zeroed. Not thread-safe.
/// </para>
/// </remarks>
public class Buffer
{
    /// <summary>The most bytes a buffer can hold: the largest byte array (<c>Array.MaxLength</c>, which netstandard lacks).</summary>
    internal const int MaxCapacity = 0x7FFFFFC7;

    private const int ShortText = 64;

    // Set for the buffers of HTTP messages: their arrays are rented and go back when replaced or released.
    private readonly BufferPool? _pool;
    private byte[] _data;
    private int _size;
    private int _offset;

    /// <summary>Creates an empty buffer with no capacity.</summary>
    public Buffer()
    {
        _data = [];
    }

    /// <summary>Creates an empty buffer able to hold <paramref name="capacity"/> bytes before it grows.</summary>
    /// <param name="capacity">The initial capacity, 0 to about 2 GiB.</param>
    public Buffer(long capacity)
    {
        _data = new byte[CheckedCapacity(capacity, nameof(capacity))];
    }

    /// <summary>Creates a buffer over <paramref name="data"/> (not copied) holding all of its bytes.</summary>
    /// <param name="data">The array to use as the buffer's storage.</param>
    public Buffer(byte[] data)
    {
        if (data is null)
            ThrowHelper.ThrowArgumentNull(nameof(data));
        _data = data;
        _size = data.Length;
    }

    /// <summary>A buffer whose arrays are rented from <paramref name="pool"/> and returned when replaced or released.</summary>
    internal Buffer(BufferPool pool)
    {
        _pool = pool;
        _data = [];
    }

    /// <summary>True when the buffer holds no bytes.</summary>
    public bool IsEmpty => _size == 0;

    /// <summary>The storage array; the buffer's bytes are its first <see cref="Size"/> bytes.</summary>
    /// <remarks>The array is replaced when the buffer grows; the array of an HTTP message's cache is valid until the message is cleared or rebuilt.</remarks>
    public byte[] Data => _data;

    /// <summary>Bytes the buffer can hold before it grows (the length of <see cref="Data"/>).</summary>
    public long Capacity => _data.Length;

    /// <summary>Bytes held.</summary>
    public long Size => _size;

    /// <summary>The read position: bytes before it count as consumed (see <see cref="Shift"/>).</summary>
    public long Offset => _offset;

    /// <summary>The byte at <paramref name="index"/> (from the start of the buffer, below <see cref="Size"/>).</summary>
    /// <param name="index">The byte's index.</param>
    public byte this[long index]
    {
        get
        {
            if ((ulong)index >= (ulong)_size)
                ThrowHelper.ThrowArgumentOutOfRange(nameof(index), "The index lies outside the buffer's bytes.");
            return _data[index];
        }
    }

    /// <summary>The bytes from <see cref="Offset"/> to <see cref="Size"/>, in place.</summary>
    public Span<byte> AsSpan() => new(_data, _offset, _size - _offset);

    /// <summary>The whole buffer decoded as UTF-8.</summary>
    public override string ToString() => TextEncoding.Decode(_data.AsSpan(0, _size));

    /// <summary>Empties the buffer and resets <see cref="Offset"/>; the capacity stays.</summary>
    public void Clear()
    {
        _size = 0;
        _offset = 0;
    }

    /// <summary>Decodes <paramref name="size"/> bytes from <paramref name="offset"/> as UTF-8.</summary>
    /// <param name="offset">Index of the first byte.</param>
    /// <param name="size">Number of bytes.</param>
    /// <returns>The text.</returns>
    public string ExtractString(long offset, long size)
    {
        CheckRange(offset, size);
        return TextEncoding.Decode(_data.AsSpan((int)offset, (int)size));
    }

    /// <summary>Removes <paramref name="size"/> bytes at <paramref name="offset"/>, moving the rest down; <see cref="Offset"/> follows the bytes it pointed at.</summary>
    /// <param name="offset">Index of the first byte to remove.</param>
    /// <param name="size">Number of bytes to remove.</param>
    public void Remove(long offset, long size)
    {
        CheckRange(offset, size);
        var start = (int)offset;
        var count = (int)size;
        System.Buffer.BlockCopy(_data, start + count, _data, start, _size - start - count);
        _size -= count;
        if (_offset >= start + count)
            _offset -= count;
        else if (_offset > start)
            _offset = start;
    }

    /// <summary>Makes the capacity at least <paramref name="capacity"/> bytes, keeping the bytes held.</summary>
    /// <param name="capacity">The capacity wanted, 0 to about 2 GiB.</param>
    public void Reserve(long capacity)
    {
        var needed = CheckedCapacity(capacity, nameof(capacity));
        if (needed > _data.Length)
            ReturnReplaced(Grow(needed, MaxCapacity));
    }

    /// <summary>Sets <see cref="Size"/>, growing the buffer if needed; bytes added are zero.</summary>
    /// <param name="size">The new size, 0 to about 2 GiB.</param>
    public void Resize(long size)
    {
        var length = CheckedCapacity(size, nameof(size));
        Reserve(length);
        if (length > _size)
            _data.AsSpan(_size, length - _size).Clear();
        _size = length;
        if (_offset > _size)
            _offset = _size;
    }

    /// <summary>Moves <see cref="Offset"/> forward by <paramref name="offset"/> bytes (it stays within the buffer's bytes).</summary>
    /// <param name="offset">Bytes to move by.</param>
    public void Shift(long offset) => MoveOffset(_offset + offset, nameof(offset));

    /// <summary>Moves <see cref="Offset"/> back by <paramref name="offset"/> bytes (it stays within the buffer's bytes).</summary>
    /// <param name="offset">Bytes to move by.</param>
    public void Unshift(long offset) => MoveOffset(_offset - offset, nameof(offset));

    /// <summary>Appends one byte.</summary>
    /// <param name="value">The byte.</param>
    /// <returns>1, the bytes appended.</returns>
    public long Append(byte value)
    {
        var replaced = MakeRoom(1, MaxCapacity);
        _data[_size++] = value;
        ReturnReplaced(replaced);
        return 1;
    }

    /// <summary>Appends the bytes of <paramref name="buffer"/>.</summary>
    /// <param name="buffer">The bytes.</param>
    /// <returns>The bytes appended.</returns>
    public long Append(byte[] buffer)
    {
        if (buffer is null)
            ThrowHelper.ThrowArgumentNull(nameof(buffer));
        return Append(new ReadOnlySpan<byte>(buffer));
    }

    /// <summary>Appends <paramref name="size"/> bytes of <paramref name="buffer"/> from <paramref name="offset"/>.</summary>
    /// <param name="buffer">The array.</param>
    /// <param name="offset">Index of the first byte.</param>
    /// <param name="size">Number of bytes.</param>
    /// <returns>The bytes appended.</returns>
    public long Append(byte[] buffer, long offset, long size)
    {
        ThrowHelper.ValidateRange(buffer, offset, size, out var start, out var count);
        return Append(new ReadOnlySpan<byte>(buffer, start, count));
    }

    /// <summary>Appends <paramref name="buffer"/> (which may lie in this buffer's own storage).</summary>
    /// <param name="buffer">The bytes.</param>
    /// <returns>The bytes appended.</returns>
    public long Append(ReadOnlySpan<byte> buffer)
    {
        AppendBounded(buffer, MaxCapacity);
        return buffer.Length;
    }

    /// <summary>Appends the bytes of another buffer from its <see cref="Offset"/> to its <see cref="Size"/>.</summary>
    /// <param name="buffer">The buffer (may be this one).</param>
    /// <returns>The bytes appended.</returns>
    public long Append(Buffer buffer)
    {
        if (buffer is null)
            ThrowHelper.ThrowArgumentNull(nameof(buffer));
        return Append(buffer.AsSpan());
    }

    /// <summary>Appends <paramref name="text"/> encoded as UTF-8.</summary>
    /// <param name="text">The text.</param>
    /// <returns>The bytes appended.</returns>
    public long Append(string text)
    {
        if (text is null)
            ThrowHelper.ThrowArgumentNull(nameof(text));
        return Append(text.AsSpan());
    }

    /// <summary>Appends <paramref name="text"/> encoded as UTF-8.</summary>
    /// <param name="text">The text.</param>
    /// <returns>The bytes appended.</returns>
    public long Append(ReadOnlySpan<char> text)
    {
        if (text.IsEmpty)
            return 0;

        // Short ASCII text (header names and values) is copied char by char: cheaper than a call into the encoder.
        if (text.Length <= ShortText && _data.Length - _size >= text.Length && TryNarrow(text, _data.AsSpan(_size)))
        {
            _size += text.Length;
            return text.Length;
        }

        // The worst case (3 bytes a char) when it fits as is; otherwise the exact size, so a
        // large ASCII text does not triple the buffer.
        var room = _data.Length - _size;
        var needed = (long)(text.Length + 1) * 3 <= room ? 0 : TextEncoding.ByteCount(text);
        ReturnReplaced(MakeRoom(needed, MaxCapacity));
        var written = TextEncoding.Encode(text, _data.AsSpan(_size));
        _size += written;
        return written;
    }

    /// <summary>The bytes held, from the start (not from <see cref="Offset"/>).</summary>
    internal ReadOnlySpan<byte> Written => new(_data, 0, _size);

    /// <summary>Bytes held, as an <see cref="int"/>.</summary>
    internal int Length => _size;

    /// <summary>
    /// Appends <paramref name="bytes"/>, growing by doubling but never past
    /// <paramref name="growthLimit"/> bytes of capacity unless the bytes need more.
    /// </summary>
    internal void AppendBounded(ReadOnlySpan<byte> bytes, int growthLimit)
    {
        // The old array goes back only after the copy: the bytes may lie in it.
        var replaced = MakeRoom(bytes.Length, growthLimit);
        bytes.CopyTo(_data.AsSpan(_size));
        _size += bytes.Length;
        ReturnReplaced(replaced);
    }

    /// <summary>Room for <paramref name="count"/> more bytes, to be written in place and committed with <see cref="Advance"/>.</summary>
    internal Span<byte> GetSpan(int count)
    {
        ReturnReplaced(MakeRoom(count, MaxCapacity));
        return _data.AsSpan(_size, count);
    }

    internal void Advance(int count)
    {
        Debug.Assert(count >= 0 && _size + count <= _data.Length);
        _size += count;
    }

    /// <summary>Drops the bytes from <paramref name="size"/> on.</summary>
    internal void Truncate(int size)
    {
        Debug.Assert(size >= 0 && size <= _size);
        _size = size;
        if (_offset > size)
            _offset = size;
    }

    /// <summary>An empty buffer whose capacity is above <paramref name="keep"/> gives its array back (a pooled one to its pool).</summary>
    internal void Trim(int keep)
    {
        if (_size == 0 && _data.Length > keep)
            Release();
    }

    /// <summary>Empties the buffer and gives its array back (a pooled one to its pool).</summary>
    internal void Release()
    {
        var array = _data;
        _data = [];
        _size = 0;
        _offset = 0;
        ReturnReplaced(array);
    }

    private static bool TryNarrow(ReadOnlySpan<char> text, Span<byte> destination)
    {
        for (var i = 0; i < text.Length; i++)
        {
            var c = text[i];
            if (c >= 0x80)
                return false;
            destination[i] = (byte)c;
        }

        return true;
    }

    private static int CheckedCapacity(long value, string name)
    {
        if ((ulong)value > MaxCapacity)
            ThrowHelper.ThrowArgumentOutOfRange(name, "The size must be between 0 and the largest byte array (about 2 GiB).");
        return (int)value;
    }

    private void CheckRange(long offset, long size)
    {
        if ((ulong)offset > (ulong)_size)
            ThrowHelper.ThrowArgumentOutOfRange(nameof(offset), "The offset lies outside the buffer's bytes.");
        if ((ulong)size > (ulong)(_size - offset))
            ThrowHelper.ThrowArgumentOutOfRange(nameof(size), "The offset and size describe bytes outside the buffer.");
    }

    private void MoveOffset(long offset, string name)
    {
        if ((ulong)offset > (ulong)_size)
            ThrowHelper.ThrowArgumentOutOfRange(name, "The offset would leave the buffer's bytes.");
        _offset = (int)offset;
    }

    /// <summary>Makes room for <paramref name="count"/> more bytes; returns the array it replaced (to return after copying from it), or null.</summary>
    private byte[]? MakeRoom(long count, int growthLimit)
    {
        var needed = _size + count;
        if (needed <= _data.Length)
            return null;
        if (needed > MaxCapacity)
            ThrowHelper.ThrowInvalidOperation("The buffer cannot grow past the largest byte array (about 2 GiB).");
        return Grow((int)needed, growthLimit);
    }

    private byte[] Grow(int needed, int growthLimit)
    {
        var doubled = (int)Math.Min((long)_data.Length * 2, Math.Min(growthLimit, MaxCapacity));
        var capacity = Math.Max(needed, doubled);
        var fresh = _pool is null ? new byte[capacity] : _pool.Rent(capacity);
        System.Buffer.BlockCopy(_data, 0, fresh, 0, _size);
        var old = _data;
        _data = fresh;
        return old;
    }

    private void ReturnReplaced(byte[]? array)
    {
        if (_pool is not null && array is not null && array.Length > 0)
            _pool.Return(array);
    }
}
