using System.Collections.Generic;
using System.IO;
using System.Security;

namespace NetServer.Http;

// Reading files and storing what they produce; everything here runs under _work.
internal sealed partial class WatchedFolder
{
    /// <summary>
    /// Makes the cache agree with the disk at <paramref name="path"/> (a file, a folder, or nothing
    /// any more): files there are read when new or changed (always, with <paramref name="force"/>),
    /// files known there but gone are forgotten. Returns false when something could not be taken.
    /// </summary>
    private bool Reconcile(string path, bool force)
    {
        if (!FileLinks.IsAtOrUnder(path, _root))
            return true;

        if (path.Length > _root.Length && File.Exists(path))
        {
            if (_filter.IsMatch(Path.GetFileName(path)) && Admit(path, out var realPath))
                return Load(path, realPath, force); // nothing lies below a file: nothing else to forget
            Forget(path);
            return true;
        }

        var seen = new HashSet<string>(PathComparer);
        var taken = true;
        _foldersLeft = MaxFoldersPerScan;
        if (Directory.Exists(path))
        {
            var realFolder = _realRoot;
            if (path.Length == _root.Length || Admit(path, out realFolder))
                taken = Scan(path, realFolder, seen, new HashSet<string>(PathComparer), 0);
        }

        List<string>? gone = null;
        foreach (var file in _files.Keys)
        {
            if (!seen.Contains(file) && FileLinks.IsAtOrUnder(file, path))
                (gone ??= []).Add(file);
        }

        if (gone is not null)
        {
            foreach (var file in gone)
                Forget(file);
        }

        return taken;
    }

    /// <summary>Loads the files below <paramref name="folder"/>; <paramref name="enclosing"/> holds the real paths of the folders being scanned around it.</summary>
    private bool Scan(string folder, string realFolder, HashSet<string> seen, HashSet<string> enclosing, int depth)
    {
        if (depth > MaxDepth || --_foldersLeft < 0)
        {
            _cache.Report($"'{folder}' is nested more than {MaxDepth} folders deep, or past {MaxFoldersPerScan} folders in one scan (links can multiply them); not scanned.", null);
            return false;
        }

        // A linked folder that leads back into one being scanned would loop; one reached twice by
        // two paths that do not nest (a "latest" link beside its target) is cached under both.
        if (!enclosing.Add(realFolder))
            return true;
        var taken = true;
        try
        {
            foreach (var item in new DirectoryInfo(folder).EnumerateFileSystemInfos())
            {
                if (_removed)
                    return taken;
                if (item is DirectoryInfo)
                {
                    if (Admit(item.FullName, out var realSubfolder))
                        taken &= Scan(item.FullName, realSubfolder, seen, enclosing, depth + 1);
                }
                else if (_filter.IsMatch(item.Name) && Admit(item.FullName, out var realPath))
                {
                    seen.Add(item.FullName);
                    taken &= Load(item.FullName, realPath, force: false);
                }
            }
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException or SecurityException)
        {
            _cache.Report($"'{folder}' could not be read.", e);
            taken = false;
        }
        finally
        {
            enclosing.Remove(realFolder);
        }

        return taken;
    }

    /// <summary>Whether <paramref name="path"/> lies inside the folder with links followed; <paramref name="realPath"/> is what to read.</summary>
    private bool Admit(string path, out string realPath)
    {
        try
        {
            if (FileLinks.IsInside(_root, _realRoot, path, out realPath))
                return true;
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException or SecurityException)
        {
            realPath = path;
            return false; // gone while looked at: the next event or scan settles it
        }

        _cache.Report($"'{path}' is a link that leads out of '{_root}' (or this build follows no links); not cached.", null);
        return false;
    }

    /// <summary>Reads <paramref name="file"/> (its content at <paramref name="realPath"/>) and stores what it produces.</summary>
    private bool Load(string file, string realPath, bool force)
    {
        long length;
        DateTime lastWrite;
        try
        {
            var info = new FileInfo(realPath);
            if (!info.Exists)
            {
                Forget(file);
                return true;
            }

            length = info.Length;
            lastWrite = info.LastWriteTimeUtc;
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException or SecurityException)
        {
            _cache.Report($"'{file}' could not be read.", e);
            return false;
        }

        _files.TryGetValue(file, out var known);
        if (!force && known is not null && known.Length == length && known.LastWrite == lastWrite)
            return true;
        if (length > _cache.OptionMaxFileSize)
        {
            Forget(file);
            _cache.Report($"'{file}' has {length} bytes, more than OptionMaxFileSize ({_cache.OptionMaxFileSize}); not cached.", null);
            return true;
        }

        var key = KeyOf(file);
        var response = _handler is null ? StaticResponse.Allocate(key, (int)length, LastModifiedOf(lastWrite), _timeout) : null;
        var content = response?.Bytes ?? new byte[length];
        var offset = response?.HeadLength ?? 0;
        try
        {
            if (!ReadWhole(realPath, content, offset, (int)length) || !IsUnchanged(realPath, length, lastWrite))
            {
                Retry(file, null);
                return true;
            }
        }
        catch (Exception e) when (e is FileNotFoundException or DirectoryNotFoundException)
        {
            Forget(file);
            return true;
        }
        catch (Exception e) when (e is IOException)
        {
            Retry(file, e); // most likely a writer holding it open exclusively (Windows)
            return true;
        }
        catch (Exception e) when (e is UnauthorizedAccessException or SecurityException)
        {
            Forget(file);
            _cache.Report($"'{file}' could not be read.", e);
            return false;
        }

        _retries.Remove(file);
        string[] keys;
        var taken = true;
        if (response is not null)
        {
            response.Seal();
            _cache.Put(new CacheEntry(key, CacheKey.Of(key), response.Bytes, response, 0, this, file));
            keys = [key];
        }
        else
        {
            taken = RunHandler(file, key, content, out keys);
        }

        // Keys the file's previous version produced and this one did not.
        if (known is not null)
        {
            foreach (var oldKey in known.Keys)
            {
                if (Array.IndexOf(keys, oldKey) < 0)
                    _cache.RemoveOwned(oldKey, this, file);
            }
        }

        _files[file] = new FileRecord(length, lastWrite, keys);
        return taken;
    }

    private bool RunHandler(string file, string key, byte[] content, out string[] keys)
    {
        var scope = new LoadScope(_cache, this, file);
        var outer = t_load;
        t_load = scope;
        bool taken;
        try
        {
            taken = _handler!(_cache, key, content, _timeout);
        }
        catch (Exception e)
        {
            _cache.Report($"The insert handler failed for '{file}'.", e);
            taken = false;
        }
        finally
        {
            t_load = outer;
        }

        keys = scope.Keys.ToArray();
        return taken;
    }

    private void Forget(string file)
    {
        _retries.Remove(file);
        if (!_files.TryGetValue(file, out var known))
            return;
        _files.Remove(file);
        foreach (var key in known.Keys)
            _cache.RemoveOwned(key, this, file);
    }

    /// <summary>Looks at <paramref name="file"/> again later: it changed while read, or could not be opened.</summary>
    private void Retry(string file, Exception? error)
    {
        _retries.TryGetValue(file, out var tries);
        if (++tries > MaxRetries)
        {
            _retries.Remove(file);
            _cache.Report($"'{file}' kept changing or could not be opened {MaxRetries} times in a row; left as it was.", error);
            return;
        }

        _retries[file] = tries;
        Queue(file);
    }

    private string KeyOf(string file)
    {
        var relative = file.Substring(_root.Length).TrimStart(Path.DirectorySeparatorChar, Path.AltDirectorySeparatorChar);
        if (Path.DirectorySeparatorChar != '/')
            relative = relative.Replace(Path.DirectorySeparatorChar, '/');
        return _keyPrefix + "/" + relative;
    }

    // RFC 9110 8.8.2.1: a Last-Modified in the future is replaced by the current time.
    private static long LastModifiedOf(DateTime lastWriteUtc) =>
        Math.Min(new DateTimeOffset(lastWriteUtc, TimeSpan.Zero).ToUnixTimeSeconds(), DateTimeOffset.UtcNow.ToUnixTimeSeconds());

    /// <summary>Reads exactly <paramref name="count"/> bytes; false when the file ended sooner or goes on after them.</summary>
    private static bool ReadWhole(string path, byte[] buffer, int offset, int count)
    {
        // Shared for writing and deleting: the cache must never stop the owner of a file from changing it.
        using var stream = new FileStream(path, FileMode.Open, FileAccess.Read, FileShare.ReadWrite | FileShare.Delete, bufferSize: 1, FileOptions.SequentialScan);
        var done = 0;
        while (done < count)
        {
            var read = stream.Read(buffer, offset + done, count - done);
            if (read == 0)
                return false;
            done += read;
        }

        return stream.ReadByte() < 0;
    }

    private static bool IsUnchanged(string path, long length, DateTime lastWrite)
    {
        var info = new FileInfo(path);
        return info.Exists && info.Length == length && info.LastWriteTimeUtc == lastWrite;
    }
}
