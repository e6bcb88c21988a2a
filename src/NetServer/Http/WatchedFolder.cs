using System.Collections.Generic;
using System.Diagnostics;
using System.IO;
using System.Runtime.InteropServices;
using System.Security;

namespace NetServer.Http;

/// <summary>
/// One folder inserted into a <see cref="FileCache"/>: what its files produced, the watcher that
/// reports changes, and the timers that read them. All file reading happens under one lock per
/// folder (<see cref="_work"/>), one batch at a time; the cache's own lock is taken only to store.
/// </summary>
/// <remarks>
/// Changes are debounced: events only name paths; once the folder has been quiet for the cache's
/// change delay (ten delays at most after the first event), each named path is compared with the
/// disk: a file is read again, a folder scanned, a missing path forgotten. A file that changed while
/// it was read (size or time differ after the read) is not stored but queued again, so a half
/// written file does not stay cached. A full scan also runs every timeout, for events a watcher
/// missed (its buffer overflowed, or the platform has none).
/// </remarks>
internal sealed partial class WatchedFolder : IDisposable
{
    public static readonly bool IsWindows = RuntimeInformation.IsOSPlatform(OSPlatform.Windows);
    public static readonly StringComparer PathComparer = IsWindows ? StringComparer.OrdinalIgnoreCase : StringComparer.Ordinal;
    public static readonly StringComparison PathComparison = IsWindows ? StringComparison.OrdinalIgnoreCase : StringComparison.Ordinal;

    private const int MaxDepth = 64;
    private const int MaxRetries = 20;
    private const int MaxFoldersPerScan = 100_000;
    private const int MaxPathsPerBatch = 1000;

    [ThreadStatic]
    private static LoadScope? t_load;

    private readonly FileCache _cache;
    private readonly string _root;
    private readonly string _realRoot;
    private readonly string _keyPrefix;
    private readonly FilePattern _filter;
    private readonly TimeSpan _timeout;
    private readonly FileCache.InsertHandler? _handler;

    // Held while files are read and the results stored: one batch at a time.
    private readonly object _work = new();
    private readonly Dictionary<string, FileRecord> _files = new(PathComparer);
    private readonly Dictionary<string, int> _retries = new(PathComparer);
    private int _foldersLeft;

    // Guards what the watcher's threads touch: the pending paths and the watcher and timers themselves.
    private readonly object _pendingLock = new();
    private HashSet<string> _pending = new(PathComparer);
    private bool _rescanAll;
    private long _firstPending;
    private FileSystemWatcher? _watcher;

    // System.Threading.Timer, not the shared TimerWheel: a rescan armed an hour ahead would keep
    // the wheel's tick thread running in an otherwise idle process, and reading files must not
    // run on that thread anyway. A folder has two timers; a process has a few folders.
    private Timer? _changeTimer;
    private Timer? _rescanTimer;
    private volatile bool _removed;

    public WatchedFolder(FileCache cache, string root, string prefix, string? filter, TimeSpan timeout, FileCache.InsertHandler? handler)
    {
        _cache = cache;
        _root = root;
        _realRoot = FileLinks.RealRoot(root);
        _keyPrefix = KeyPrefixOf(prefix);
        _filter = new FilePattern(filter);
        _timeout = timeout;
        _handler = handler;
    }

    /// <summary>Set (under the cache's lock) when the folder was removed or replaced: nothing it reads is stored any more.</summary>
    public bool Removed
    {
        get => _removed;
        set => _removed = value;
    }

    /// <summary>The full path of a folder as the cache knows it: no trailing separator (a drive or file-system root keeps its one).</summary>
    public static bool TryGetRoot(string path, out string root)
    {
        root = string.Empty;
        if (string.IsNullOrEmpty(path))
            return false;
        try
        {
            root = Path.GetFullPath(path);
        }
        catch (Exception e) when (e is ArgumentException or NotSupportedException or PathTooLongException or SecurityException)
        {
            return false;
        }

        var minimum = (Path.GetPathRoot(root) ?? string.Empty).Length;
        var end = root.Length;
        while (end > minimum && (root[end - 1] == Path.DirectorySeparatorChar || root[end - 1] == Path.AltDirectorySeparatorChar))
            end--;
        root = root.Substring(0, end);
        return true;
    }

    /// <summary>The load in progress on this thread for <paramref name="cache"/>, so values its handler adds belong to the file.</summary>
    public static LoadScope? CurrentLoad(FileCache cache) => t_load is { } load && load.Cache == cache ? load : null;

    /// <summary>Starts watching, then loads every file; returns whether all of them were taken.</summary>
    public bool Start()
    {
        Exception? watchError = null;
        lock (_pendingLock)
        {
            if (_removed)
                return false;

            // The watcher starts first, so nothing written during the first scan goes unseen.
            if (_cache.WatchFolders)
                watchError = StartWatcher();
            if (_timeout > TimeSpan.Zero)
            {
                var period = _timeout < TimeSpan.FromDays(1) ? _timeout : TimeSpan.FromDays(1);
                _rescanTimer = new Timer(static state => ((WatchedFolder)state!).OnRescan(), this, period, period);
            }
        }

        if (watchError is not null)
            _cache.Report($"'{_root}' cannot be watched; changes are seen only by the periodic scan.", watchError);
        lock (_work)
            return Reconcile(_root, force: false);
    }

    /// <summary>Stops the watcher and timers; a batch running now stores nothing more.</summary>
    public void Dispose()
    {
        lock (_pendingLock)
        {
            _removed = true;
            _watcher?.Dispose();
            _changeTimer?.Dispose();
            _rescanTimer?.Dispose();
            _watcher = null;
            _changeTimer = null;
            _rescanTimer = null;
            _pending.Clear();
        }
    }

    private Exception? StartWatcher()
    {
        // No Filter on the watcher: it would hide folder events (a folder moved in holds files
        // that raise none of their own); the cache's filter applies to file names below.
        var watcher = new FileSystemWatcher();
        try
        {
            watcher.Path = _root;
            watcher.IncludeSubdirectories = true;
            watcher.NotifyFilter = NotifyFilters.FileName | NotifyFilters.DirectoryName | NotifyFilters.LastWrite | NotifyFilters.Size;
            watcher.InternalBufferSize = 64 * 1024;
            watcher.Created += OnChanged;
            watcher.Changed += OnChanged;
            watcher.Deleted += OnChanged;
            watcher.Renamed += OnRenamed;
            watcher.Error += OnWatcherError;
            watcher.EnableRaisingEvents = true;
            _watcher = watcher;
            return null;
        }
        catch (Exception e) when (e is IOException or ArgumentException or PlatformNotSupportedException or UnauthorizedAccessException)
        {
            watcher.Dispose();
            return e;
        }
    }

    private void OnChanged(object sender, FileSystemEventArgs e) => Queue(e.FullPath);

    private void OnRenamed(object sender, RenamedEventArgs e)
    {
        Queue(e.OldFullPath);
        Queue(e.FullPath);
    }

    private void OnWatcherError(object sender, ErrorEventArgs e)
    {
        // Typically an overflow of the event buffer: which paths changed is lost, so look at all of them.
        lock (_pendingLock)
        {
            if (_removed)
                return;
            _rescanAll = true;
            ArmChangeTimer();
        }

        _cache.Report($"Watching '{_root}' failed; the folder is scanned again.", e.GetException());
    }

    private void OnRescan()
    {
        lock (_pendingLock)
            _rescanAll = true;
        Process();
    }

    /// <summary>Notes that <paramref name="path"/> changed; it is looked at once the folder is quiet.</summary>
    private void Queue(string path)
    {
        lock (_pendingLock)
        {
            if (_removed)
                return;
            if (_pending.Count == 0 && !_rescanAll)
                _firstPending = Stopwatch.GetTimestamp();
            _pending.Add(path);
            ArmChangeTimer();
        }
    }

    // Under _pendingLock. Each event pushes the timer back by the delay, up to ten delays after the first.
    private void ArmChangeTimer()
    {
        var delay = _cache.OptionChangeDelay;
        var waited = TimeSpan.FromSeconds((double)(Stopwatch.GetTimestamp() - _firstPending) / Stopwatch.Frequency);
        var left = TimeSpan.FromTicks(delay.Ticks * 10) - waited;
        if (left < delay)
            delay = left > TimeSpan.Zero ? left : TimeSpan.Zero;
        _changeTimer ??= new Timer(static state => ((WatchedFolder)state!).Process(), this, Timeout.Infinite, Timeout.Infinite);
        _changeTimer.Change(delay, Timeout.InfiniteTimeSpan);
    }

    private void Process()
    {
        if (_removed)
            return;
        lock (_work)
        {
            HashSet<string> paths;
            bool all;
            lock (_pendingLock)
            {
                paths = _pending;
                all = _rescanAll;
                if (paths.Count == 0 && !all)
                    return;
                _pending = new HashSet<string>(PathComparer);
                _rescanAll = false;
            }

            // A flood of events (a checkout, an unpacked archive) is one scan of everything instead.
            if (all || paths.Count > MaxPathsPerBatch)
            {
                Reconcile(_root, force: false);
            }
            else
            {
                // A path named by an event is read again even when its size and time look the same.
                foreach (var path in paths)
                    Reconcile(path, force: true);
            }
        }

        _cache.RaiseUpdated();
    }

    private static string KeyPrefixOf(string? prefix)
    {
        if (string.IsNullOrEmpty(prefix))
            return string.Empty;
        var trimmed = prefix!.TrimEnd('/');
        return trimmed.Length == 0 || trimmed[0] == '/' ? trimmed : "/" + trimmed;
    }

    /// <summary>What one file produced: the keys its handler added, and the size and time they were read at.</summary>
    private sealed class FileRecord
    {
        public FileRecord(long length, DateTime lastWrite, string[] keys)
        {
            Length = length;
            LastWrite = lastWrite;
            Keys = keys;
        }

        public long Length { get; }

        public DateTime LastWrite { get; }

        public string[] Keys { get; }
    }
}

/// <summary>A file being handed to an insert handler on this thread: what the handler adds belongs to it.</summary>
internal sealed class LoadScope
{
    public LoadScope(FileCache cache, WatchedFolder folder, string file)
    {
        Cache = cache;
        Folder = folder;
        File = file;
    }

    public FileCache Cache { get; }

    public WatchedFolder Folder { get; }

    public string File { get; }

    public List<string> Keys { get; } = [];
}
