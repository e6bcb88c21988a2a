namespace NetServer.Http;

/// <summary>
/// One value of a <see cref="FileCache"/>: the bytes <see cref="FileCache.Find"/> returns, and,
/// for a file of a static folder, the response they form (<see cref="Response"/>). Immutable: a
/// change replaces the entry, so a reader holding one never sees it half updated.
/// </summary>
internal sealed class CacheEntry
{
    public CacheEntry(string key, CacheKey cacheKey, byte[] value, StaticResponse? response, long expiresAt, WatchedFolder? owner, string? file)
    {
        Key = key;
        CacheKey = cacheKey;
        Value = value;
        Response = response;
        ExpiresAt = expiresAt;
        Owner = owner;
        File = file;
    }

    public string Key { get; }

    public CacheKey CacheKey { get; }

    public byte[] Value { get; }

    /// <summary>The precomputed response of a static file (its <see cref="StaticResponse.Bytes"/> are <see cref="Value"/>), or null for a value added by <see cref="FileCache.Add"/>.</summary>
    public StaticResponse? Response { get; }

    /// <summary>When the entry stops being found (<see cref="System.Diagnostics.Stopwatch"/> ticks), or 0 for never.</summary>
    public long ExpiresAt { get; }

    /// <summary>The inserted folder whose file this entry came from, which keeps it current; null for <see cref="FileCache.Add"/> outside a load.</summary>
    public WatchedFolder? Owner { get; }

    /// <summary>The full path of that file.</summary>
    public string? File { get; }

    public bool IsExpired(long now) => ExpiresAt != 0 && now >= ExpiresAt;
}
