using System;
using System.Diagnostics;
using System.Threading;

namespace NetServer.Buffers;

/// <summary>
/// A pooled array shared by reference count: a multicast copies its payload once into one of
/// these and every session's send queue holds a reference instead of its own copy. The array
/// goes back to its pool when the last reference is released; the holder object is recycled too.
/// </summary>
internal sealed class SharedBuffer
{
    // A small lock-free object pool: a multicast costs no allocation once warm.
    private static readonly SharedBuffer?[] s_cache = new SharedBuffer?[64];

    private BufferPool? _pool;
    private byte[]? _array;
    private int _length;
    private int _references;

    private SharedBuffer()
    {
    }

    /// <summary>The shared bytes' array (valid while a reference is held).</summary>
    public byte[] Array => _array!;

    /// <summary>How many bytes of <see cref="Array"/> are the payload.</summary>
    public int Length => _length;

    /// <summary>References currently held (for tests and assertions).</summary>
    public int References => Volatile.Read(ref _references);

    /// <summary>Copies <paramref name="data"/> into a pooled array; the caller holds the one reference.</summary>
    public static SharedBuffer Create(BufferPool pool, ReadOnlySpan<byte> data)
    {
        var shared = TakeCached() ?? new SharedBuffer();
        var array = pool.Rent(data.Length);
        data.CopyTo(array);
        shared._pool = pool;
        shared._array = array;
        shared._length = data.Length;
        Volatile.Write(ref shared._references, 1);
        return shared;
    }

    /// <summary>Takes another reference; each must be matched by one <see cref="Release"/>.</summary>
    public void AddReference()
    {
        var after = Interlocked.Increment(ref _references);
        Debug.Assert(after > 1, "A released shared buffer was referenced again.");
    }

    /// <summary>Drops a reference; the last one returns the array to its pool.</summary>
    public void Release()
    {
        var after = Interlocked.Decrement(ref _references);
        Debug.Assert(after >= 0, "A shared buffer was released more often than referenced.");
        if (after != 0)
            return;

        var array = _array!;
        var pool = _pool!;
        _array = null;
        _pool = null;
        _length = 0;
        pool.Return(array);
        ReturnToCache(this);
    }

    private static SharedBuffer? TakeCached()
    {
        for (var i = 0; i < s_cache.Length; i++)
        {
            var item = Volatile.Read(ref s_cache[i]);
            if (item is not null && Interlocked.CompareExchange(ref s_cache[i], null, item) == item)
                return item;
        }

        return null;
    }

    private static void ReturnToCache(SharedBuffer item)
    {
        for (var i = 0; i < s_cache.Length; i++)
        {
            if (Volatile.Read(ref s_cache[i]) is null && Interlocked.CompareExchange(ref s_cache[i], item, null) is null)
                return;
        }
    }
}
