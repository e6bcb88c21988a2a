using System.Collections.Concurrent;
using System.Collections.Generic;
using System.Diagnostics;
using System.IO;
using NetServer.Http;

namespace NetServer;

/// <summary>
/// Values by key, held in memory with an optional timeout, and folders of files loaded into it and
/// kept current: <see cref="InsertPath"/> reads every matching file below a folder, hands each to
/// a handler that adds what it wants (by default the file's bytes under its URL path), and watches
/// the folder, so files created, changed, renamed or deleted later are read again or dropped.
/// <c>HttpServer</c>'s static content stores ready-made HTTP responses in it. See
/// docs/http-static.md.
/// </summary>
/// <remarks>
/// <para>Thread-safe. Lookups (<see cref="Find"/> and the HTTP server's) take no lock and allocate
/// nothing; changes are serialized among themselves and replace whole entries, so a reader sees a
/// key's old value or its new one, never a mix.</para>
/// <para>Keys compare ordinally (case-sensitive), on every operating system.</para>
/// <para>Memory is bounded by <see cref="OptionMaxFileSize"/> per file: a larger file is not
/// cached (reported through <see cref="Error"/>), so requests for it reach the application.</para>
/// </remarks>
public class FileCache : IDisposable
{
    /// <summary>Default of <see cref="OptionMaxFileSize"/>: 16 MiB.</summary>
    public const long DefaultMaxFileSize = 16 * 1024 * 1024;

    // The largest file one array can hold with its response head.
    private const long MaxFileSizeLimit = int.MaxValue - (64 * 1024);

    private static readonly InsertHandler s_addHandler = (cache, key, value, timeout) => cache.Add(key, value, timeout);

    private readonly ConcurrentDictionary<CacheKey, CacheEntry> _entries = new(CacheKeyComparer.Instance);
    private readonly Dictionary<string, WatchedFolder> _folders = new(WatchedFolder.PathComparer);

    // Serializes every change; lookups never take it.
    private readonly object _sync = new();
    private int _count;
    private int _longestKey;
    private long _maxFileSize = DefaultMaxFileSize;
    private TimeSpan _changeDelay = TimeSpan.FromMilliseconds(100);
    private bool _disposed;

    /// <summary>Builds and adds the cached value(s) for one file found under an inserted path.</summary>
    /// <param name="cache">The cache to add to.</param>
    /// <param name="key">The file's key: the prefix, then its path below the folder with '/' separators.</param>
    /// <param name="value">The file's content.</param>
    /// <param name="timeout">The timeout given to <see cref="InsertPath"/>.</param>
    /// <returns>Whether the file was taken; false counts as a failure of <see cref="InsertPath"/>.</returns>
    public delegate bool InsertHandler(FileCache cache, string key, byte[] value, TimeSpan timeout);

    /// <summary>
    /// Raised when a file below an inserted path could not be cached (unreadable, larger than
    /// <see cref="OptionMaxFileSize"/>, a link leading out of the folder, a handler that threw) or a
    /// folder could not be watched. The exception's message names the file. Raised on the thread
    /// that loads: the caller of <see cref="InsertPath"/>, or a thread-pool thread for changes.
    /// </summary>
    public event ErrorEventHandler? Error;

    /// <summary>Raised after a change seen in a watched folder was applied (for tests to wait on).</summary>
    internal event Action? Updated;

    /// <summary>Whether the cache holds no value.</summary>
    public bool Empty => Volatile.Read(ref _count) == 0;

    /// <summary>How many values the cache holds (expired ones until they are next looked up or changed).</summary>
    public int Size => Volatile.Read(ref _count);

    /// <summary>
    /// The largest file an inserted path caches, in bytes (default 16 MiB). A larger file is
    /// skipped and reported through <see cref="Error"/>; a request for it is not answered from the
    /// cache. Applies to files read after the change.
    /// </summary>
    public long OptionMaxFileSize
    {
        get => Interlocked.Read(ref _maxFileSize);
        set
        {
            if (value < 0 || value > MaxFileSizeLimit)
                ThrowHelper.ThrowArgumentOutOfRange(nameof(OptionMaxFileSize), "The size must be between 0 and 2 GiB - 64 KiB.");
            Interlocked.Exchange(ref _maxFileSize, value);
        }
    }

    /// <summary>
    /// How long a watched folder must be quiet before a change is read (default 100 ms): a file
    /// being written raises many events, and is read once they stop. A file that keeps changing is
    /// read at the latest ten times this long after its first event, and read again if it changed
    /// while being read.
    /// </summary>
    public TimeSpan OptionChangeDelay
    {
        get => _changeDelay;
        set
        {
            if (value < TimeSpan.Zero || value > TimeSpan.FromMinutes(10))
                ThrowHelper.ThrowArgumentOutOfRange(nameof(OptionChangeDelay), "The delay must be between 0 and 10 minutes.");
            _changeDelay = value;
        }
    }

    /// <summary>Whether inserted folders are watched for changes (tests turn it off to see the timed rescan alone).</summary>
    internal bool WatchFolders { get; set; } = true;

    /// <summary>
    /// Adds <paramref name="value"/> under <paramref name="key"/>, replacing any value there.
    /// </summary>
    /// <param name="key">The key.</param>
    /// <param name="value">The value, kept as given (not copied).</param>
    /// <param name="timeout">How long the value is found; zero (the default) for ever. Called from an
    /// <see cref="InsertHandler"/>, the value belongs to the folder instead and lives as long as its
    /// file, and the timeout is only the handler's to use.</param>
    /// <returns>True.</returns>
    public bool Add(string key, byte[] value, TimeSpan timeout = default)
    {
        if (key is null)
            ThrowHelper.ThrowArgumentNull(nameof(key));
        if (value is null)
            ThrowHelper.ThrowArgumentNull(nameof(value));

        var scope = WatchedFolder.CurrentLoad(this);
        if (scope is not null)
        {
            scope.Keys.Add(key);
            return Put(new CacheEntry(key, CacheKey.Of(key), value, null, 0, scope.Folder, scope.File));
        }

        var expiresAt = timeout > TimeSpan.Zero ? Stopwatch.GetTimestamp() + TicksOf(timeout) : 0;
        return Put(new CacheEntry(key, CacheKey.Of(key), value, null, expiresAt, null, null));
    }

    /// <summary>Finds the value under <paramref name="key"/>.</summary>
    /// <returns>(true, the value), or (false, an empty array) when there is none or it timed out.</returns>
    public (bool, byte[]) Find(string key)
    {
        if (key is null)
            ThrowHelper.ThrowArgumentNull(nameof(key));
        var probe = CacheKey.Probe(TextEncoding.MaxByteCount(key.Length));
        var length = TextEncoding.Encode(key.AsSpan(), probe);
        return TryGetEntry(probe, length, out var entry) ? (true, entry.Value) : (false, Array.Empty<byte>());
    }

    /// <summary>Removes the value under <paramref name="key"/>.</summary>
    /// <returns>Whether there was one. A file of a watched folder comes back when it next changes.</returns>
    public bool Remove(string key)
    {
        if (key is null)
            ThrowHelper.ThrowArgumentNull(nameof(key));
        var cacheKey = CacheKey.Of(key);
        lock (_sync)
        {
            if (!_entries.TryRemove(cacheKey, out _))
                return false;
            _count--;
            return true;
        }
    }

    /// <summary>
    /// Loads every file below <paramref name="path"/> (subfolders included) whose name matches
    /// <paramref name="filter"/>, passing each to <paramref name="handler"/>, and keeps watching the
    /// folder: a file created, changed or renamed is read again once the folder is quiet for
    /// <see cref="OptionChangeDelay"/>, a deleted one is removed. The whole folder is also checked
    /// again every <paramref name="timeout"/>, for changes a watcher can miss. Inserting a path
    /// again replaces it.
    /// </summary>
    /// <param name="path">The folder.</param>
    /// <param name="prefix">What keys start with (default "/"): a file <c>docs/a.html</c> gets the key
    /// <c>/docs/a.html</c>, or <c>/static/docs/a.html</c> with the prefix "/static".</param>
    /// <param name="filter">File names to take, with <c>*</c> and <c>?</c> (default "*.*": all).</param>
    /// <param name="timeout">Passed to the handler; also the period of the full check (zero, the default: no periodic check).</param>
    /// <param name="handler">Adds the value(s) for one file; by default <c>cache.Add(key, value, timeout)</c>.
    /// Values it adds belong to the folder: they change and go with the file.</param>
    /// <returns>False when the folder does not exist, or a file could not be read or its handler returned false
    /// (the other files are cached and the folder watched all the same).</returns>
    /// <remarks>A symbolic link is followed only when its target is inside the folder; links are not
    /// followed at all by the netstandard builds. Files larger than <see cref="OptionMaxFileSize"/> are skipped.</remarks>
    public bool InsertPath(string path, string prefix = "/", string filter = "*.*", TimeSpan timeout = default, InsertHandler? handler = null) =>
        Insert(path, prefix, filter, timeout, handler ?? s_addHandler);

    /// <summary>Whether <paramref name="path"/> was inserted and not removed since.</summary>
    public bool FindPath(string path)
    {
        if (!WatchedFolder.TryGetRoot(path, out var root))
            return false;
        lock (_sync)
            return _folders.ContainsKey(root);
    }

    /// <summary>Stops watching <paramref name="path"/> and removes the values its files produced.</summary>
    /// <returns>Whether the path was inserted.</returns>
    public bool RemovePath(string path)
    {
        if (!WatchedFolder.TryGetRoot(path, out var root))
            return false;
        WatchedFolder? folder;
        lock (_sync)
        {
            if (!_folders.TryGetValue(root, out folder))
                return false;
            _folders.Remove(root);
            folder.Removed = true;
        }

        folder.Dispose();
        RemoveOwnedBy(folder);
        return true;
    }

    /// <summary>Removes every value and every inserted path (their watchers stopped).</summary>
    public void Clear()
    {
        WatchedFolder[] folders;
        lock (_sync)
        {
            folders = new WatchedFolder[_folders.Count];
            _folders.Values.CopyTo(folders, 0);
            _folders.Clear();
            foreach (var folder in folders)
                folder.Removed = true;
            _entries.Clear();
            _count = 0;
        }

        foreach (var folder in folders)
            folder.Dispose();
    }

    /// <summary>Clears the cache and stops every watcher.</summary>
    public void Dispose()
    {
        Dispose(true);
        GC.SuppressFinalize(this);
    }

    /// <summary>Clears the cache and stops every watcher (when <paramref name="disposingManagedResources"/>).</summary>
    /// <param name="disposingManagedResources">Called from <see cref="Dispose()"/> rather than a finalizer.</param>
    protected virtual void Dispose(bool disposingManagedResources)
    {
        lock (_sync)
        {
            if (_disposed)
                return;
            _disposed = true;
        }

        if (disposingManagedResources)
            Clear();
    }

    /// <summary>
    /// Inserts <paramref name="path"/> as static content: each file becomes a complete HTTP 200
    /// response (<see cref="StaticResponse"/>) under its key, <paramref name="timeout"/> its
    /// Cache-Control max-age. What <c>HttpServer.AddStaticContent</c> calls.
    /// </summary>
    internal bool InsertStaticPath(string path, string prefix, string filter, TimeSpan timeout) =>
        Insert(path, prefix, filter, timeout, handler: null);

    /// <summary>Finds the entry whose key is the first <paramref name="length"/> bytes of <paramref name="key"/> (UTF-8); lock-free, no allocation.</summary>
    internal bool TryGetEntry(byte[] key, int length, out CacheEntry entry)
    {
        entry = null!;
        if (length > Volatile.Read(ref _longestKey))
            return false;
        if (!_entries.TryGetValue(new CacheKey(key, length), out var found))
            return false;
        if (found.ExpiresAt != 0 && found.IsExpired(Stopwatch.GetTimestamp()))
        {
            RemoveExact(found);
            return false;
        }

        entry = found;
        return true;
    }

    /// <summary>Stores <paramref name="entry"/> unless its folder was removed meanwhile.</summary>
    internal bool Put(CacheEntry entry)
    {
        lock (_sync)
        {
            if (entry.Owner is { Removed: true })
                return false;
            if (!_entries.ContainsKey(entry.CacheKey))
                _count++;
            _entries[entry.CacheKey] = entry;
            if (entry.CacheKey.Length > _longestKey)
                Volatile.Write(ref _longestKey, entry.CacheKey.Length);
            return true;
        }
    }

    /// <summary>Removes <paramref name="key"/> if its value still came from <paramref name="file"/> of <paramref name="folder"/>.</summary>
    internal void RemoveOwned(string key, WatchedFolder folder, string file)
    {
        var cacheKey = CacheKey.Of(key);
        lock (_sync)
        {
            if (_entries.TryGetValue(cacheKey, out var entry) && entry.Owner == folder && entry.File == file && _entries.TryRemove(cacheKey, out _))
                _count--;
        }
    }

    internal void Report(string message, Exception? inner) => Error?.Invoke(this, new ErrorEventArgs(new IOException(message, inner)));

    internal void RaiseUpdated() => Updated?.Invoke();

    private bool Insert(string path, string prefix, string filter, TimeSpan timeout, InsertHandler? handler)
    {
        if (path is null)
            ThrowHelper.ThrowArgumentNull(nameof(path));
        if (_disposed)
            ThrowHelper.ThrowObjectDisposed(nameof(FileCache));
        if (!WatchedFolder.TryGetRoot(path, out var root))
            return false;
        if (!Directory.Exists(root))
        {
            RemovePath(root); // what was inserted there is gone
            return false;
        }

        var folder = new WatchedFolder(this, root, prefix, filter, timeout, handler);
        WatchedFolder? previous;
        lock (_sync)
        {
            if (_disposed)
                ThrowHelper.ThrowObjectDisposed(nameof(FileCache)); // disposed meanwhile: nothing would stop this folder's watcher
            _folders.TryGetValue(root, out previous);
            _folders[root] = folder;
            if (previous is not null)
                previous.Removed = true;
        }

        previous?.Dispose();
        var loaded = folder.Start();

        // The previous insert's values stay until the new ones replace them, so a re-insert leaves no gap.
        if (previous is not null)
            RemoveOwnedBy(previous);
        return loaded;
    }

    private void RemoveOwnedBy(WatchedFolder folder)
    {
        lock (_sync)
        {
            foreach (var pair in _entries)
            {
                if (pair.Value.Owner == folder && _entries.TryRemove(pair.Key, out _))
                    _count--;
            }
        }
    }

    private void RemoveExact(CacheEntry entry)
    {
        lock (_sync)
        {
            if (_entries.TryGetValue(entry.CacheKey, out var current) && current == entry && _entries.TryRemove(entry.CacheKey, out _))
                _count--;
        }
    }

    private static long TicksOf(TimeSpan timeout)
    {
        var seconds = Math.Min(timeout.TotalSeconds, 100L * 365 * 24 * 60 * 60);
        return (long)(seconds * Stopwatch.Frequency);
    }
}
