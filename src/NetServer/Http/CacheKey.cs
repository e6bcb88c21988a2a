using System.Collections.Generic;
using System.Security.Cryptography;

namespace NetServer.Http;

/// <summary>
/// A cache key as UTF-8 bytes with its hash, so a request target decoded into a byte buffer is
/// looked up without turning it into a string. Stored keys own an exact-size array; a probe points
/// into a reused buffer (<see cref="Probe"/>) and is never stored.
/// </summary>
internal readonly struct CacheKey
{
    // Seeded per process: a peer that knows the hash function still cannot predict bucket collisions.
    private static readonly uint s_seed = NewSeed();

    [ThreadStatic]
    private static byte[]? t_probe;

    public CacheKey(byte[] bytes, int length)
    {
        Bytes = bytes;
        Length = length;
        Hash = HashOf(bytes.AsSpan(0, length));
    }

    public byte[] Bytes { get; }

    public int Length { get; }

    public int Hash { get; }

    public ReadOnlySpan<byte> Span => Bytes.AsSpan(0, Length);

    /// <summary>The key of <paramref name="key"/>, in its own array (for storing).</summary>
    public static CacheKey Of(string key)
    {
        var bytes = new byte[TextEncoding.MaxByteCount(key.Length)];
        var length = TextEncoding.Encode(key.AsSpan(), bytes);
        if (length != bytes.Length)
            Array.Resize(ref bytes, length);
        return new CacheKey(bytes, length);
    }

    /// <summary>
    /// This thread's probe buffer, at least <paramref name="length"/> bytes: fill it, then look up
    /// <c>new CacheKey(buffer, filled)</c>. Grows only past the longest key probed on the thread.
    /// </summary>
    public static byte[] Probe(int length)
    {
        var probe = t_probe;
        if (probe is null || probe.Length < length)
            t_probe = probe = new byte[Math.Max(length, 256)];
        return probe;
    }

    private static int HashOf(ReadOnlySpan<byte> bytes)
    {
        // FNV-1a: keys are short paths, and this runs once per lookup.
        var hash = 2166136261u ^ s_seed;
        foreach (var b in bytes)
            hash = (hash ^ b) * 16777619u;
        return (int)hash;
    }

    private static uint NewSeed()
    {
        var seed = new byte[4];
        using (var random = RandomNumberGenerator.Create())
            random.GetBytes(seed);
        return BitConverter.ToUInt32(seed, 0);
    }
}

/// <summary>Byte-wise (ordinal, case-sensitive) equality of cache keys.</summary>
internal sealed class CacheKeyComparer : IEqualityComparer<CacheKey>
{
    public static readonly CacheKeyComparer Instance = new();

    public bool Equals(CacheKey x, CacheKey y) => x.Hash == y.Hash && x.Span.SequenceEqual(y.Span);

    public int GetHashCode(CacheKey key) => key.Hash;
}
