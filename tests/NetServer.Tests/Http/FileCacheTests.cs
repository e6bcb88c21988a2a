using System;
using System.IO;
using System.Text;
using System.Threading;
using System.Threading.Tasks;
using NetServer.Tests.Infrastructure;
using Xunit;

namespace NetServer.Tests.Http;

public class FileCacheTests
{
    // Written as a NetCoreServer application uses its FileCache: only the namespace differs.
    [Fact]
    public void Compatible_surface_compiles_and_behaves_as_NetCoreServer_users_expect()
    {
        using var folder = new TempFolder();
        folder.Write("a.txt", "alpha");
        folder.Write("sub/b.txt", "beta");

        using var cache = new FileCache();
        Assert.True(cache.Empty);
        Assert.Equal(0, cache.Size);

        Assert.True(cache.Add("/key", Encoding.UTF8.GetBytes("value"), TimeSpan.FromHours(1)));
        Assert.True(cache.Add("/forever", new byte[] { 1, 2, 3 }));
        var (found, value) = cache.Find("/key");
        Assert.True(found);
        Assert.Equal("value", Encoding.UTF8.GetString(value));
        var result = cache.Find("/missing");
        Assert.False(result.Item1);
        Assert.Empty(result.Item2);
        Assert.True(cache.Remove("/key"));
        Assert.False(cache.Remove("/key"));

        FileCache.InsertHandler handler = Handler;
        Assert.True(cache.InsertPath(folder.Path, "/", "*.*", TimeSpan.FromHours(1), handler));
        Assert.True(cache.FindPath(folder.Path));
        Assert.Equal("ALPHA", cache.Find("/a.txt").Text());
        Assert.Equal("BETA", cache.Find("/sub/b.txt").Text());
        Assert.Equal(3, cache.Size);

        // The lambda form of the handler, and the defaults (prefix "/", all files, no timeout, Add).
        Assert.True(cache.InsertPath(folder.Path, "/static", "*.*", TimeSpan.Zero, (FileCache c, string key, byte[] v, TimeSpan t) => c.Add(key, v, t)));
        Assert.Equal("alpha", cache.Find("/static/a.txt").Text());
        Assert.False(cache.Find("/a.txt").Item1); // the path was re-inserted: its old keys went
        Assert.True(cache.InsertPath(folder.Path));
        Assert.Equal("beta", cache.Find("/sub/b.txt").Text());

        Assert.True(cache.RemovePath(folder.Path));
        Assert.False(cache.FindPath(folder.Path));
        Assert.False(cache.Find("/sub/b.txt").Item1);
        Assert.False(cache.RemovePath(folder.Path));
        Assert.Equal(1, cache.Size); // "/forever"

        cache.Clear();
        Assert.True(cache.Empty);

        static bool Handler(FileCache cache, string key, byte[] value, TimeSpan timeout) =>
            cache.Add(key, Encoding.UTF8.GetBytes(Encoding.UTF8.GetString(value).ToUpperInvariant()), timeout);
    }

    [Fact]
    public async Task A_value_added_with_a_timeout_stops_being_found_after_it()
    {
        using var cache = new FileCache();
        cache.Add("/short", [1], TimeSpan.FromMilliseconds(50));
        cache.Add("/long", [2], TimeSpan.FromHours(1));
        cache.Add("/never", [3]);

        var deadline = DateTime.UtcNow + CacheWaits.Timeout;
        while (cache.Find("/short").Item1)
        {
            Assert.True(DateTime.UtcNow < deadline, "the value never expired");
            await Task.Delay(20);
        }

        Assert.True(cache.Find("/long").Item1);
        Assert.True(cache.Find("/never").Item1);
        Assert.Equal(2, cache.Size); // the expired one went when it was looked up
    }

    [Fact]
    public void Prefix_and_filter_choose_keys_and_files()
    {
        using var folder = new TempFolder();
        folder.Write("page.html", "<p>");
        folder.Write("notes.txt", "text");
        folder.Write("deep/er/more.html", "<b>");
        folder.Write("README", "no extension");

        using var cache = new FileCache();
        Assert.True(cache.InsertPath(folder.Path, "/static/", "*.html"));
        Assert.Equal("<p>", cache.Find("/static/page.html").Text());
        Assert.Equal("<b>", cache.Find("/static/deep/er/more.html").Text());
        Assert.False(cache.Find("/static/notes.txt").Item1);
        Assert.Equal(2, cache.Size);

        using var all = new FileCache();
        Assert.True(all.InsertPath(folder.Path, "", "*.*"));
        Assert.Equal("no extension", all.Find("/README").Text()); // "*.*" takes names without a dot, as Directory.GetFiles does
        Assert.False(all.Find("/readme").Item1); // keys are case-sensitive
        Assert.Equal(4, all.Size);
    }

    [Fact]
    public void A_missing_folder_is_not_inserted()
    {
        using var cache = new FileCache();
        var missing = Path.Combine(Path.GetTempPath(), "netserver-static-missing-" + Guid.NewGuid().ToString("N"));
        Assert.False(cache.InsertPath(missing));
        Assert.False(cache.FindPath(missing));
    }

    [Fact]
    public void A_handler_that_refuses_a_file_fails_the_insert_but_the_others_are_cached()
    {
        using var folder = new TempFolder();
        folder.Write("good.txt", "ok");
        folder.Write("bad.txt", "refused");
        using var cache = new FileCache();

        Assert.False(cache.InsertPath(folder.Path, handler: (c, key, v, t) => key != "/bad.txt" && c.Add(key, v, t)));
        Assert.True(cache.Find("/good.txt").Item1);
        Assert.True(cache.FindPath(folder.Path)); // still watched
    }

    [Fact]
    public void Files_over_the_size_limit_are_skipped_and_reported()
    {
        using var folder = new TempFolder();
        folder.Write("small.bin", new byte[100]);
        folder.Write("large.bin", new byte[101]);
        using var cache = new FileCache { OptionMaxFileSize = 100 };
        var errors = CacheWaits.CollectErrors(cache);

        Assert.True(cache.InsertPath(folder.Path));
        Assert.True(cache.Find("/small.bin").Item1);
        Assert.False(cache.Find("/large.bin").Item1);
        Assert.Contains(errors, e => e.Contains("large.bin", StringComparison.Ordinal) && e.Contains("OptionMaxFileSize", StringComparison.Ordinal));
        Assert.Equal(16 * 1024 * 1024, new FileCache().OptionMaxFileSize);
        Assert.Throws<ArgumentOutOfRangeException>(() => cache.OptionMaxFileSize = -1);
    }

    [Fact]
    public async Task Created_changed_and_deleted_files_update_the_cache()
    {
        using var folder = new TempFolder();
        folder.Write("keep.txt", "keep");
        using var cache = new FileCache { OptionChangeDelay = TimeSpan.FromMilliseconds(20) };
        Assert.True(cache.InsertPath(folder.Path));

        folder.Write("new.txt", "created");
        await CacheWaits.UntilAsync(cache, () => cache.Find("/new.txt").Text() == "created", "a created file");

        folder.Write("new.txt", "changed, and longer");
        await CacheWaits.UntilAsync(cache, () => cache.Find("/new.txt").Text() == "changed, and longer", "a changed file");

        File.Delete(folder["new.txt"]);
        await CacheWaits.UntilAsync(cache, () => !cache.Find("/new.txt").Item1, "a deleted file to go");
        Assert.Equal("keep", cache.Find("/keep.txt").Text());
    }

    [Fact]
    public async Task A_renamed_file_moves_to_its_new_key()
    {
        using var folder = new TempFolder();
        folder.Write("old.txt", "content");
        using var cache = new FileCache { OptionChangeDelay = TimeSpan.FromMilliseconds(20) };
        Assert.True(cache.InsertPath(folder.Path));

        File.Move(folder["old.txt"], folder["renamed.txt"]);
        await CacheWaits.UntilAsync(cache, () => cache.Find("/renamed.txt").Item1 && !cache.Find("/old.txt").Item1, "the rename");
        Assert.Equal("content", cache.Find("/renamed.txt").Text());
    }

    [Fact]
    public async Task A_folder_moved_in_is_scanned_and_one_deleted_is_dropped()
    {
        using var folder = new TempFolder();
        using var outside = new TempFolder();
        outside.Write("docs/a.txt", "a");
        outside.Write("docs/inner/b.txt", "b");
        using var cache = new FileCache { OptionChangeDelay = TimeSpan.FromMilliseconds(20) };
        Assert.True(cache.InsertPath(folder.Path, "/", "*.txt"));

        // A folder moved in raises one event for itself, none for the files it holds.
        Directory.Move(outside["docs"], folder["docs"]);
        await CacheWaits.UntilAsync(cache, () => cache.Find("/docs/a.txt").Item1 && cache.Find("/docs/inner/b.txt").Item1, "the moved folder's files");

        Directory.Delete(folder["docs"], recursive: true);
        await CacheWaits.UntilAsync(cache, () => cache.Empty, "the deleted folder's files to go");
    }

    [Fact]
    public async Task Values_a_handler_adds_belong_to_their_file()
    {
        using var folder = new TempFolder();
        folder.Write("page.html", "v1");
        using var cache = new FileCache { OptionChangeDelay = TimeSpan.FromMilliseconds(20) };

        // Also under the key without its extension, as a site with "clean URLs" would.
        Assert.True(cache.InsertPath(folder.Path, handler: (c, key, v, t) => c.Add(key, v, t) && c.Add(key[..key.LastIndexOf('.')], v, t)));
        Assert.Equal("v1", cache.Find("/page").Text());

        File.Delete(folder["page.html"]);
        await CacheWaits.UntilAsync(cache, () => cache.Empty, "both keys of the deleted file to go");
    }

    [Fact]
    public async Task A_file_written_in_steps_ends_up_cached_whole()
    {
        using var folder = new TempFolder();
        using var cache = new FileCache { OptionChangeDelay = TimeSpan.FromMilliseconds(20) };
        Assert.True(cache.InsertPath(folder.Path));

        var first = new string('a', 4096);
        var second = new string('b', 4096);
        using (var writer = new FileStream(folder["growing.txt"], FileMode.CreateNew, FileAccess.Write, FileShare.ReadWrite))
        {
            writer.Write(Encoding.ASCII.GetBytes(first));
            writer.Flush();

            // The cache takes what is there once the folder is quiet...
            await CacheWaits.UntilAsync(cache, () => cache.Find("/growing.txt").Text() == first, "the first half");

            // ...and reads it again when the writer goes on.
            writer.Write(Encoding.ASCII.GetBytes(second));
        }

        await CacheWaits.UntilAsync(cache, () => cache.Find("/growing.txt").Text() == first + second, "the whole file");
    }

    [Fact]
    public async Task A_burst_of_changes_is_read_once_the_folder_is_quiet()
    {
        using var folder = new TempFolder();
        folder.Write("burst.txt", "0");
        var reads = 0;
        using var cache = new FileCache { OptionChangeDelay = TimeSpan.FromSeconds(1) };
        Assert.True(cache.InsertPath(folder.Path, handler: (c, key, v, t) =>
        {
            Interlocked.Increment(ref reads);
            return c.Add(key, v, t);
        }));
        Assert.Equal(1, reads);

        for (var i = 1; i <= 20; i++)
            folder.Write("burst.txt", i.ToString(System.Globalization.CultureInfo.InvariantCulture));
        await CacheWaits.UntilAsync(cache, () => cache.Find("/burst.txt").Text() == "20", "the last write");

        // 20 writes well inside one delay: read once or twice, not 20 times.
        Assert.InRange(Volatile.Read(ref reads) - 1, 1, 3);
    }

    [Fact]
    public async Task The_timed_rescan_finds_changes_without_a_watcher()
    {
        using var folder = new TempFolder();
        folder.Write("a.txt", "before");
        using var cache = new FileCache { WatchFolders = false };
        Assert.True(cache.InsertPath(folder.Path, timeout: TimeSpan.FromMilliseconds(100)));

        folder.Write("a.txt", "after, longer");
        folder.Write("b.txt", "new");
        await CacheWaits.UntilAsync(cache, () => cache.Find("/a.txt").Text() == "after, longer" && cache.Find("/b.txt").Item1, "the rescan");
    }

    [Fact]
    public async Task RemovePath_and_Dispose_stop_watching()
    {
        using var folder = new TempFolder();
        using var other = new TempFolder();
        var cache = new FileCache { OptionChangeDelay = TimeSpan.FromMilliseconds(20) };
        Assert.True(cache.InsertPath(folder.Path));
        Assert.True(cache.InsertPath(other.Path, "/other"));
        Assert.True(cache.RemovePath(folder.Path));

        // A change in each: only the folder still inserted is seen. (Each folder has its own
        // watcher and a timer of the same delay, so by the time one change shows the other
        // would have had about as long: evidence, not proof, that nothing watches it.)
        folder.Write("late.txt", "x");
        other.Write("seen.txt", "y");
        await CacheWaits.UntilAsync(cache, () => cache.Find("/other/seen.txt").Item1, "the watched folder's change");
        Assert.False(cache.Find("/late.txt").Item1);

        cache.Dispose();
        Assert.True(cache.Empty);
        Assert.False(cache.FindPath(other.Path));
        Assert.Throws<ObjectDisposedException>(() => cache.InsertPath(other.Path));
    }

    [Fact]
    public void A_link_to_a_file_outside_the_folder_is_not_cached()
    {
        using var folder = new TempFolder();
        using var outside = new TempFolder();
        var secret = outside.Write("secret.txt", "secret");
        outside.Write("dir/also-secret.txt", "secret");
        folder.Write("plain.txt", "plain");
        File.CreateSymbolicLink(folder["leak.txt"], secret);
        Directory.CreateSymbolicLink(folder["leakdir"], outside["dir"]);
        using var cache = new FileCache();
        var errors = CacheWaits.CollectErrors(cache);

        cache.InsertPath(folder.Path);
        Assert.True(cache.Find("/plain.txt").Item1);
        Assert.False(cache.Find("/leak.txt").Item1);
        Assert.False(cache.Find("/leakdir/also-secret.txt").Item1);
        Assert.Equal(1, cache.Size);
        Assert.Contains(errors, e => e.Contains("leak.txt", StringComparison.Ordinal));
    }

    [Net10Fact("links are resolved with FileSystemInfo.LinkTarget; the netstandard builds follow no link")]
    public void A_link_inside_the_folder_is_followed_and_a_loop_is_not()
    {
        using var folder = new TempFolder();
        folder.Write("v2/app.js", "v2");
        File.CreateSymbolicLink(folder["current.js"], folder["v2/app.js"]);
        Directory.CreateSymbolicLink(folder["latest"], folder["v2"]);
        Directory.CreateSymbolicLink(folder["v2/loop"], folder.Path);
        using var cache = new FileCache();

        Assert.True(cache.InsertPath(folder.Path));
        Assert.Equal("v2", cache.Find("/current.js").Text());
        Assert.Equal("v2", cache.Find("/latest/app.js").Text());
        Assert.Equal("v2", cache.Find("/v2/app.js").Text());
        Assert.False(cache.Find("/v2/loop/v2/app.js").Item1);
        Assert.Equal(3, cache.Size);
    }
}
