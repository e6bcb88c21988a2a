using System.Diagnostics;

namespace NetServer.Buffers;

/// <summary>
/// A pooled array shared by reference count: a multicast copies its payload once into one of
/// these and every session's send queue holds a reference instead of its own copy. The array
/// goes back to its pool when the last reference is released.
/// </summary>
/// <remarks>
/// Released holders are recycled, and a holder of a small array from <see cref="BufferPool.Shared"/>
/// keeps it: a multicast is created on the sender's thread and released on whichever I/O thread
/// sends it last, and the shared array pool serves such cross-thread traffic poorly (its per-thread
/// caches miss), so small payloads would otherwise allocate on every multicast.
/// </remarks>
internal sealed class SharedBuffer
{
    /// <summary>Largest array a recycled holder keeps.</summary>
    internal const int KeptArraySize = 1024;

    private const int CacheSize = 4096;
    private static readonly SharedBuffer?[] s_cache = new SharedBuffer?[CacheSize];
    private static readonly object s_cacheLock = new();
    private static int s_cached;

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
        var array = shared._array;
        if (array is null || array.Length < data.Length || !ReferenceEquals(pool, shared._pool))
        {
            if (array is not null)
                shared._pool!.Return(array);
            array = pool.Rent(data.Length);
        }

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

    /// <summary>Drops a reference; the last one recycles the holder (and returns or keeps the array).</summary>
    public void Release()
    {
        var after = Interlocked.Decrement(ref _references);
        Debug.Assert(after >= 0, "A shared buffer was released more often than referenced.");
        if (after != 0)
            return;

        _length = 0;
        if (!ReferenceEquals(_pool, BufferPool.Shared) || _array!.Length > KeptArraySize)
        {
            // Only small arrays of the process-wide pool stay with the holder; any other pool
            // (a test's leak-checking pool, say) gets its array back now.
            _pool!.Return(_array!);
            _array = null;
            _pool = null;
        }

        if (!TryCache(this) && _array is not null)
        {
            _pool!.Return(_array);
            _array = null;
            _pool = null;
        }
    }

    private static SharedBuffer? TakeCached()
    {
        lock (s_cacheLock)
        {
            if (s_cached == 0)
                return null;
            var item = s_cache[--s_cached];
            s_cache[s_cached] = null;
            return item;
        }
    }

    private static bool TryCache(SharedBuffer item)
    {
        lock (s_cacheLock)
        {
            if (s_cached == CacheSize)
                return false;
            s_cache[s_cached++] = item;
            return true;
        }
    }
}
