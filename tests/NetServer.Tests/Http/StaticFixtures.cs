using System;
using System.Collections.Concurrent;
using System.IO;
using System.Text;
using System.Threading.Tasks;
using NetServer.Http;
using Xunit.Sdk;

namespace NetServer.Tests.Http;

/// <summary>A folder of its own under the temp path for one test, deleted with it.</summary>
internal sealed class TempFolder : IDisposable
{
    public TempFolder()
    {
        Path = System.IO.Path.Combine(System.IO.Path.GetTempPath(), "netserver-static-" + Guid.NewGuid().ToString("N")[..12]);
        Directory.CreateDirectory(Path);
    }

    public string Path { get; }

    public string this[string relative] => System.IO.Path.Combine(Path, relative.Replace('/', System.IO.Path.DirectorySeparatorChar));

    public string Write(string relative, string content) => Write(relative, Encoding.UTF8.GetBytes(content));

    public string Write(string relative, byte[] content)
    {
        var file = this[relative];
        Directory.CreateDirectory(System.IO.Path.GetDirectoryName(file)!);
        File.WriteAllBytes(file, content);
        return file;
    }

    public string Folder(string relative)
    {
        var folder = this[relative];
        Directory.CreateDirectory(folder);
        return folder;
    }

    public void Dispose()
    {
        try
        {
            Directory.Delete(Path, recursive: true);
        }
        catch (IOException)
        {
            // a watcher of a failed test may still hold it on Windows; the temp folder is cleaned by the OS
        }
    }
}

/// <summary>Request header fields for <see cref="StaticContent.Serve"/>, as bytes made once, so lookups allocate nothing.</summary>
internal readonly struct TestHeaders : IHttpHeaderSource
{
    private readonly (byte[] Name, byte[] Value)[] _fields;

    public TestHeaders(params (string Name, string Value)[] fields)
    {
        _fields = new (byte[], byte[])[fields.Length];
        for (var i = 0; i < fields.Length; i++)
            _fields[i] = (Encoding.ASCII.GetBytes(fields[i].Name), Encoding.ASCII.GetBytes(fields[i].Value));
    }

    public bool TryGetHeader(ReadOnlySpan<byte> name, out ReadOnlySpan<byte> value)
    {
        foreach (var (n, v) in _fields ?? [])
        {
            if (HttpSyntax.EqualsIgnoreCase(n, name))
            {
                value = HttpSyntax.TrimWhitespace(v);
                return true;
            }
        }

        value = default;
        return false;
    }
}

internal static class CacheWaits
{
    public static readonly TimeSpan Timeout = TimeSpan.FromSeconds(15);

    /// <summary>
    /// Waits until <paramref name="condition"/> holds, checking it now and after every change the
    /// cache applies from a watched folder; fails after <see cref="Timeout"/>.
    /// </summary>
    public static async Task UntilAsync(FileCache cache, Func<bool> condition, string what)
    {
        var done = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        void Check()
        {
            if (condition())
                done.TrySetResult();
        }

        cache.Updated += Check;
        try
        {
            Check();
            await done.Task.WaitAsync(Timeout);
        }
        catch (TimeoutException)
        {
            throw new XunitException($"Timed out after {Timeout.TotalSeconds} s waiting for {what}.");
        }
        finally
        {
            cache.Updated -= Check;
        }
    }

    /// <summary>Collects the messages of <see cref="FileCache.Error"/>.</summary>
    public static ConcurrentQueue<string> CollectErrors(FileCache cache)
    {
        var errors = new ConcurrentQueue<string>();
        cache.Error += (_, e) => errors.Enqueue(e.GetException().Message);
        return errors;
    }

    public static string Text(this (bool Found, byte[] Value) found) => found.Found ? Encoding.UTF8.GetString(found.Value) : "<none>";
}
