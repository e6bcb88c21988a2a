using System;
using System.IO;
using System.Runtime.InteropServices;
using System.Text;
using System.Threading;
using System.Threading.Tasks;
using NetServer.Http;
using NetServer.Tests.Infrastructure;
using Xunit;

namespace NetServer.Tests.Http;

public sealed class StaticContentTests : IDisposable
{
    private const string Alphabet = "0123456789abcdefghij"; // a.txt: 20 bytes
    private const string LastModified = "Tue, 02 Jan 2024 03:04:05 GMT";
    private static readonly DateTime s_modified = new(2024, 1, 2, 3, 4, 5, DateTimeKind.Utc);

    private readonly TempFolder _folder = new();
    private readonly FileCache _cache = new() { OptionChangeDelay = TimeSpan.FromMilliseconds(20) };
    private readonly byte[] _scratch = new byte[StaticContent.MinScratchSize];

    public StaticContentTests()
    {
        // The site is www/; secret.txt beside it is what the traversal attempts aim at.
        _folder.Write("secret.txt", "TOP SECRET");
        _folder.Write("www/index.html", "<h1>home</h1>");
        _folder.Write("www/docs/index.html", "<h1>docs</h1>");
        _folder.Write("www/style.css", "h1{}");
        _folder.Write("www/data.bin", [1, 2, 3]);
        _folder.Write("www/empty.txt", []);
        File.SetLastWriteTimeUtc(_folder.Write("www/a.txt", Alphabet), s_modified);
        Assert.True(_cache.InsertStaticPath(_folder["www"], "/", "*.*", TimeSpan.FromHours(1)));
    }

    public void Dispose()
    {
        _cache.Dispose();
        _folder.Dispose();
    }

    [Fact]
    public void A_GET_gets_the_precomputed_response_with_validators_and_caching_headers()
    {
        var reply = Serve("/a.txt");

        Assert.Equal(StaticReplyKind.Whole, reply.Kind);
        Assert.Equal(0, reply.HeadLength);
        var wire = Wire(reply);
        Assert.StartsWith("HTTP/1.1 200 OK\r\n", wire, StringComparison.Ordinal);
        Assert.Equal("20", Header(wire, "Content-Length"));
        Assert.Equal("text/plain; charset=utf-8", Header(wire, "Content-Type"));
        Assert.Equal(LastModified, Header(wire, "Last-Modified"));
        Assert.Equal("max-age=3600", Header(wire, "Cache-Control"));
        Assert.Equal("bytes", Header(wire, "Accept-Ranges"));
        Assert.Equal("nosniff", Header(wire, "X-Content-Type-Options"));
        Assert.Matches("^\"[0-9a-f]{32}\"$", Header(wire, "ETag"));
        Assert.Equal(Alphabet, Body(wire));

        // One array, the one the cache holds (what Find returns to NetCoreServer-style code), sent as is.
        Assert.True(MemoryMarshal.TryGetArray(reply.Cached, out var segment));
        Assert.Same(_cache.Find("/a.txt").Item2, segment.Array);
        Assert.Same(segment.Array, reply.Content);
        Assert.Equal(segment.Array!.Length, segment.Count);
    }

    [Fact]
    public void The_content_type_comes_from_the_extension()
    {
        Assert.Equal("text/html; charset=utf-8", Header(Wire(Serve("/index.html")), "Content-Type"));
        Assert.Equal("text/css; charset=utf-8", Header(Wire(Serve("/style.css")), "Content-Type"));
        Assert.Equal("application/octet-stream", Header(Wire(Serve("/data.bin")), "Content-Type"));
        Assert.Equal("text/html; charset=utf-8", HttpContentTypes.ForFile("/UPPER.HTML"));
        Assert.Equal("application/octet-stream", HttpContentTypes.ForFile("/.htaccess"));
    }

    [Fact]
    public void HEAD_gets_the_same_head_without_the_body_as_a_slice_of_the_cached_response()
    {
        var get = Wire(Serve("/a.txt"));
        var reply = Serve("/a.txt", "HEAD");

        Assert.Equal(StaticReplyKind.Head, reply.Kind);
        Assert.Equal(get[..(get.IndexOf("\r\n\r\n", StringComparison.Ordinal) + 4)], Wire(reply));
        Assert.Equal("20", Header(Wire(reply), "Content-Length"));
        Assert.True(MemoryMarshal.TryGetArray(reply.Cached, out var segment));
        Assert.Same(_cache.Find("/a.txt").Item2, segment.Array);
    }

    [Theory]
    [InlineData("/", "<h1>home</h1>")]
    [InlineData("/docs/", "<h1>docs</h1>")]
    [InlineData("/docs/index.html", "<h1>docs</h1>")]
    [InlineData("/a.txt?v=3&x=/../..", Alphabet)]
    [InlineData("/a%2Etxt", Alphabet)]
    [InlineData("/docs/./../a.txt", Alphabet)]
    [InlineData("http://example.com/a.txt", Alphabet)]
    [InlineData("http://example.com?q", "<h1>home</h1>")]
    public void Paths_resolve_to_files_and_folders_to_their_index(string target, string body)
    {
        var reply = Serve(target);
        Assert.Equal(StaticReplyKind.Whole, reply.Kind);
        Assert.Equal(body, Body(Wire(reply)));
    }

    [Theory]
    [InlineData("/docs", "/docs/")]
    [InlineData("/docs?page=2", "/docs/?page=2")]
    [InlineData("http://example.com/docs", "/docs/")]
    public void A_folder_path_without_its_slash_is_redirected(string target, string location)
    {
        var reply = Serve(target);
        Assert.Equal(StaticReplyKind.Redirect, reply.Kind);
        var wire = Wire(reply);
        Assert.StartsWith("HTTP/1.1 301 Moved Permanently\r\n", wire, StringComparison.Ordinal);
        Assert.Equal(location, Header(wire, "Location"));
        Assert.Equal("0", Header(wire, "Content-Length"));
    }

    [Theory]
    [InlineData("GET", "/missing.txt")]
    [InlineData("GET", "/A.TXT")] // keys are case-sensitive
    [InlineData("GET", "/a.txt/")]
    [InlineData("GET", "*")]
    [InlineData("GET", "example.com:443")]
    [InlineData("POST", "/a.txt")] // the application decides what other methods mean
    [InlineData("DELETE", "/a.txt")]
    [InlineData("get", "/a.txt")] // methods are case-sensitive
    public void Anything_else_is_left_to_the_application(string method, string target)
    {
        Assert.Equal(StaticReplyKind.NotStatic, Serve(target, method).Kind);
        Assert.Equal(0, Serve(target, method).Status);
    }

    [Fact]
    public void A_value_added_by_hand_is_sent_as_it_is_for_GET_only()
    {
        var response = Encoding.ASCII.GetBytes("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi");
        _cache.Add("/hand", response);

        var reply = Serve("/hand", headers: [("Range", "bytes=0-0")]);
        Assert.Equal(StaticReplyKind.Whole, reply.Kind);
        Assert.Same(response, reply.Content);
        Assert.Equal(StaticReplyKind.NotStatic, Serve("/hand", "HEAD").Kind);
    }

    [Theory]
    [InlineData("If-None-Match", "{etag}", 304)]
    [InlineData("If-None-Match", "W/{etag}", 304)] // weak comparison
    [InlineData("If-None-Match", "\"other\", {etag}", 304)]
    [InlineData("If-None-Match", "  \"other\" ,W/{etag} ", 304)]
    [InlineData("If-None-Match", "*", 304)]
    [InlineData("If-None-Match", "\"other\"", 200)]
    [InlineData("If-Modified-Since", LastModified, 304)]
    [InlineData("If-Modified-Since", "Tue, 02 Jan 2024 03:04:06 GMT", 304)]
    [InlineData("If-Modified-Since", "Tue, 02 Jan 2024 03:04:04 GMT", 200)]
    [InlineData("If-Modified-Since", "Tuesday, 02-Jan-24 03:04:05 GMT", 304)] // RFC 850
    [InlineData("If-Modified-Since", "Tue Jan  2 03:04:05 2024", 304)] // asctime
    [InlineData("If-Modified-Since", "yesterday", 200)]
    [InlineData("If-Match", "{etag}", 200)]
    [InlineData("If-Match", "*", 200)]
    [InlineData("If-Match", "\"other\"", 412)]
    [InlineData("If-Match", "W/{etag}", 412)] // strong comparison
    [InlineData("If-Unmodified-Since", LastModified, 200)]
    [InlineData("If-Unmodified-Since", "Tue, 02 Jan 2024 03:04:04 GMT", 412)]
    public void Conditional_requests(string field, string value, int status)
    {
        var reply = Serve("/a.txt", headers: [(field, value.Replace("{etag}", ETagOf("/a.txt"), StringComparison.Ordinal))]);

        Assert.Equal(status, reply.Status);
        var wire = Wire(reply);
        Assert.StartsWith($"HTTP/1.1 {status} ", wire, StringComparison.Ordinal);
        if (status == 304)
        {
            Assert.Equal(ETagOf("/a.txt"), Header(wire, "ETag"));
            Assert.Equal(LastModified, Header(wire, "Last-Modified"));
            Assert.Equal("max-age=3600", Header(wire, "Cache-Control"));
            Assert.Null(Header(wire, "Content-Length"));
            Assert.EndsWith("\r\n\r\n", wire, StringComparison.Ordinal);
        }
    }

    [Fact]
    public void If_None_Match_takes_precedence_over_If_Modified_Since()
    {
        var reply = Serve("/a.txt", headers: [("If-None-Match", "\"other\""), ("If-Modified-Since", LastModified)]);
        Assert.Equal(200, reply.Status);

        // ...and a HEAD is answered 304 the same way.
        Assert.Equal(304, Serve("/a.txt", "HEAD", ("If-None-Match", ETagOf("/a.txt"))).Status);
    }

    [Theory]
    [InlineData("bytes=0-9", 0, 9)]
    [InlineData("bytes=-5", 15, 19)] // suffix
    [InlineData("bytes=10-", 10, 19)] // open-ended
    [InlineData("bytes=5-100000", 5, 19)] // past the end: clamped
    [InlineData("bytes=-100", 0, 19)] // a suffix longer than the file: all of it
    [InlineData("bytes=19-19", 19, 19)]
    [InlineData("BYTES=0-0", 0, 0)] // the unit is case-insensitive
    [InlineData("bytes= 3-4 ,", 3, 4)] // one range, with list whitespace and an empty element
    [InlineData("bytes=0-99999999999999999999999", 0, 19)] // saturates instead of overflowing
    public void A_single_range_gets_206_with_a_slice_of_the_cached_body(string range, int first, int last)
    {
        var reply = Serve("/a.txt", headers: [("Range", range)]);

        Assert.Equal(StaticReplyKind.Partial, reply.Kind);
        var wire = Wire(reply);
        Assert.StartsWith("HTTP/1.1 206 Partial Content\r\n", wire, StringComparison.Ordinal);
        Assert.Equal($"bytes {first}-{last}/20", Header(wire, "Content-Range"));
        Assert.Equal((last - first + 1).ToString(System.Globalization.CultureInfo.InvariantCulture), Header(wire, "Content-Length"));
        Assert.Equal(ETagOf("/a.txt"), Header(wire, "ETag"));
        Assert.Equal("text/plain; charset=utf-8", Header(wire, "Content-Type"));
        Assert.Equal(Alphabet.Substring(first, last - first + 1), Body(wire));
        Assert.True(MemoryMarshal.TryGetArray(reply.Cached, out var segment));
        Assert.Same(_cache.Find("/a.txt").Item2, segment.Array); // not copied
    }

    [Theory]
    [InlineData("bytes=20-")]
    [InlineData("bytes=20-30")]
    [InlineData("bytes=99999999999999999999-")]
    [InlineData("bytes=-0")]
    public void A_range_past_the_end_gets_416(string range)
    {
        var reply = Serve("/a.txt", headers: [("Range", range)]);

        Assert.Equal(StaticReplyKind.RangeNotSatisfiable, reply.Kind);
        var wire = Wire(reply);
        Assert.StartsWith("HTTP/1.1 416 Range Not Satisfiable\r\n", wire, StringComparison.Ordinal);
        Assert.Equal("bytes */20", Header(wire, "Content-Range"));
        Assert.Equal("0", Header(wire, "Content-Length"));
        Assert.EndsWith("\r\n\r\n", wire, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData("bytes=0-1,3-4")] // several ranges: the whole file instead (RFC 9110 14.2 allows it)
    [InlineData("bytes=0-1, -2")]
    [InlineData("bytes=abc")]
    [InlineData("bytes=5-2")] // last before first: invalid
    [InlineData("bytes=1-2-3")]
    [InlineData("bytes=")]
    [InlineData("bytes 0-1")]
    [InlineData("items=0-1")]
    [InlineData("bytes=+1-2")]
    [InlineData("bytes=--1")]
    public void A_range_that_is_not_one_valid_byte_range_is_ignored(string range)
    {
        var reply = Serve("/a.txt", headers: [("Range", range)]);
        Assert.Equal(StaticReplyKind.Whole, reply.Kind);
        Assert.Equal(Alphabet, Body(Wire(reply)));
    }

    [Fact]
    public void Range_is_ignored_for_HEAD_and_for_an_empty_file()
    {
        Assert.Equal(StaticReplyKind.Head, Serve("/a.txt", "HEAD", ("Range", "bytes=0-1")).Kind);
        var empty = Serve("/empty.txt", headers: [("Range", "bytes=0-")]);
        Assert.Equal(StaticReplyKind.Whole, empty.Kind);
        Assert.Equal("0", Header(Wire(empty), "Content-Length"));
    }

    [Theory]
    [InlineData("{etag}", nameof(StaticReplyKind.Partial))]
    [InlineData("\"other\"", nameof(StaticReplyKind.Whole))]
    [InlineData("W/{etag}", nameof(StaticReplyKind.Whole))] // a weak tag never matches If-Range
    [InlineData(LastModified, nameof(StaticReplyKind.Partial))]
    [InlineData("Tue, 02 Jan 2024 03:04:06 GMT", nameof(StaticReplyKind.Whole))] // only an exact date matches
    [InlineData("garbage", nameof(StaticReplyKind.Whole))]
    public void If_Range_lets_the_range_through_only_for_the_same_representation(string validator, string kind)
    {
        var reply = Serve("/a.txt", headers: [("Range", "bytes=0-3"), ("If-Range", validator.Replace("{etag}", ETagOf("/a.txt"), StringComparison.Ordinal))]);
        Assert.Equal(kind, reply.Kind.ToString());
    }

    [Theory]
    [InlineData("/../secret.txt", nameof(StaticReplyKind.BadRequest))]
    [InlineData("/../etc/passwd", nameof(StaticReplyKind.BadRequest))]
    [InlineData("/%2e%2e/secret.txt", nameof(StaticReplyKind.BadRequest))]
    [InlineData("/%2E%2E/secret.txt", nameof(StaticReplyKind.BadRequest))]
    [InlineData("/.%2e/secret.txt", nameof(StaticReplyKind.BadRequest))]
    [InlineData("/..%2fsecret.txt", nameof(StaticReplyKind.BadRequest))]
    [InlineData("/..%2Fsecret.txt", nameof(StaticReplyKind.BadRequest))]
    [InlineData("/..%5csecret.txt", nameof(StaticReplyKind.BadRequest))]
    [InlineData("/..\\secret.txt", nameof(StaticReplyKind.BadRequest))]
    [InlineData("/\\..\\secret.txt", nameof(StaticReplyKind.BadRequest))]
    [InlineData("/a/../../secret.txt", nameof(StaticReplyKind.BadRequest))]
    [InlineData("/docs/../../secret.txt", nameof(StaticReplyKind.BadRequest))]
    [InlineData("/docs/%2e%2e/%2e%2e/secret.txt", nameof(StaticReplyKind.BadRequest))]
    [InlineData("/C:/Windows/win.ini", nameof(StaticReplyKind.BadRequest))]
    [InlineData("/c:\\secret.txt", nameof(StaticReplyKind.BadRequest))]
    [InlineData("/a.txt%00.html", nameof(StaticReplyKind.BadRequest))]
    [InlineData("/%zz", nameof(StaticReplyKind.BadRequest))]
    [InlineData("/a.txt%2", nameof(StaticReplyKind.BadRequest))]
    [InlineData("/%252e%252e/secret.txt", nameof(StaticReplyKind.NotStatic))] // decoded once: the literal name "%2e%2e"
    [InlineData("/%252e%252e%252fsecret.txt", nameof(StaticReplyKind.NotStatic))]
    [InlineData("//etc/passwd", nameof(StaticReplyKind.NotStatic))] // "/etc/passwd" of the site: there is none
    [InlineData("///secret.txt", nameof(StaticReplyKind.NotStatic))]
    [InlineData("http://example.com/../secret.txt", nameof(StaticReplyKind.BadRequest))]
    public void Traversal_attempts_are_refused(string target, string kind)
    {
        var reply = Serve(target);

        Assert.Equal(kind, reply.Kind.ToString());
        if (reply.Kind == StaticReplyKind.BadRequest)
            Assert.Equal("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n", Wire(reply));
        Assert.DoesNotContain("TOP SECRET", Wire(reply), StringComparison.Ordinal);
    }

    [Fact]
    public void A_link_to_a_file_outside_the_folder_is_not_served()
    {
        using var folder = new TempFolder();
        using var outside = new TempFolder();
        File.CreateSymbolicLink(folder["passwd"], outside.Write("passwd", "root:x:0:0"));
        using var cache = new FileCache();
        cache.InsertStaticPath(folder.Path, "/", "*.*", TimeSpan.Zero);

        Assert.Equal(StaticReplyKind.NotStatic, StaticContent.Serve(cache, "GET"u8, "/passwd"u8, default(TestHeaders), _scratch).Kind);
    }

    [Net10Fact("links are resolved with FileSystemInfo.LinkTarget; the netstandard builds follow no link")]
    public void A_link_to_a_file_inside_the_folder_is_served_with_its_target_content()
    {
        using var folder = new TempFolder();
        folder.Write("real.txt", "inside");
        File.CreateSymbolicLink(folder["alias.txt"], folder["real.txt"]);
        using var cache = new FileCache();
        cache.InsertStaticPath(folder.Path, "/", "*.*", TimeSpan.Zero);

        var reply = StaticContent.Serve(cache, "GET"u8, "/alias.txt"u8, default(TestHeaders), _scratch);
        Assert.Equal("inside", Body(Wire(reply)));
        Assert.Equal("6", Header(Wire(reply), "Content-Length")); // the target's length, not the link's
    }

    [Fact]
    public async Task A_changed_file_gets_a_new_response_and_entity_tag()
    {
        var before = ETagOf("/a.txt");
        File.WriteAllText(_folder["www/a.txt"], "changed");
        await CacheWaits.UntilAsync(_cache, () => Body(Wire(Serve("/a.txt"))) == "changed", "the new content");

        Assert.NotEqual(before, ETagOf("/a.txt"));
        Assert.Equal("7", Header(Wire(Serve("/a.txt")), "Content-Length"));
        Assert.Equal(200, Serve("/a.txt", headers: [("If-None-Match", before)]).Status);
    }

    [Fact]
    public async Task Readers_see_one_whole_version_or_the_next_while_a_file_is_replaced()
    {
        using var staging = new TempFolder();
        static string Version(int i) => new((char)('a' + i), 1000 + (i * 37));
        var stop = false;
        var seen = 0;
        string? wrong = null;
        void Read()
        {
            var scratch = new byte[StaticContent.MinScratchSize];
            var target = "/a.txt"u8.ToArray();
            while (!Volatile.Read(ref stop))
            {
                var reply = StaticContent.Serve(_cache, "GET"u8, target, default(TestHeaders), scratch);
                var wire = Encoding.Latin1.GetString(reply.Cached.Span);
                var body = Body(wire);
                var whole = body == Alphabet || (body.Length > 0 && body == Version(body[0] - 'a'));
                if (!whole || Header(wire, "Content-Length") != body.Length.ToString(System.Globalization.CultureInfo.InvariantCulture))
                    wrong ??= wire;
                Interlocked.Increment(ref seen);
            }
        }

        var readers = new[] { Task.Run(Read), Task.Run(Read) };
        for (var i = 1; i <= 15; i++)
        {
            // Replaced the way a deploy should: written beside, then renamed over (atomic on one file system).
            File.WriteAllText(staging["next.txt"], Version(i));
            File.Move(staging["next.txt"], _folder["www/a.txt"], overwrite: true);
            var expected = Version(i);
            await CacheWaits.UntilAsync(_cache, () => Body(Wire(Serve("/a.txt"))) == expected, $"version {i}");
        }

        Volatile.Write(ref stop, true);
        await Task.WhenAll(readers).WaitAsync(CacheWaits.Timeout);
        Assert.Null(wrong);
        Assert.True(Volatile.Read(ref seen) > 15);
    }

    [Fact]
    public void The_entity_tag_is_a_hash_of_the_content()
    {
        using var folder = new TempFolder();
        File.SetLastWriteTimeUtc(folder.Write("x/same.txt", "same"), s_modified);
        File.SetLastWriteTimeUtc(folder.Write("y/same.txt", "same"), s_modified.AddDays(1));
        folder.Write("z/same.txt", "diff");
        using var cache = new FileCache();
        cache.InsertStaticPath(folder.Path, "/", "*.*", TimeSpan.Zero);

        // Same bytes, same tag whatever the time (a farm of servers agrees); other bytes, another tag.
        var x = Header(Wire(StaticContent.Serve(cache, "GET"u8, "/x/same.txt"u8, default(TestHeaders), _scratch)), "ETag");
        var y = Header(Wire(StaticContent.Serve(cache, "GET"u8, "/y/same.txt"u8, default(TestHeaders), _scratch)), "ETag");
        var z = Header(Wire(StaticContent.Serve(cache, "GET"u8, "/z/same.txt"u8, default(TestHeaders), _scratch)), "ETag");
        Assert.Equal(x, y);
        Assert.NotEqual(x, z);
        Assert.Equal("max-age=0", Header(Wire(StaticContent.Serve(cache, "GET"u8, "/x/same.txt"u8, default(TestHeaders), _scratch)), "Cache-Control"));
    }

    [Fact]
    public void Serving_from_the_cache_allocates_nothing()
    {
        var get = "GET"u8.ToArray();
        var head = "HEAD"u8.ToArray();
        var target = "/a.txt?cache=bust"u8.ToArray();
        var index = "/docs/"u8.ToArray();
        var plain = new TestHeaders(("Host", "example.com"), ("Accept", "*/*"));
        var conditional = new TestHeaders(("Host", "example.com"), ("If-None-Match", ETagOf("/a.txt")));
        var range = new TestHeaders(("Host", "example.com"), ("Range", "bytes=2-5"), ("If-Range", LastModified));

        long sent = 0;
        void Round()
        {
            sent += Serve(get, target, plain).Cached.Length;
            sent += Serve(get, index, plain).Cached.Length;
            sent += Serve(head, target, plain).Cached.Length;
            sent += Serve(get, target, conditional).HeadLength;
            sent += Serve(get, target, range).Cached.Length;
            sent += _cache.Find("/a.txt").Item2.Length;
        }

        var allocated = Allocations.Least(Round, roundsPerWindow: 10_000);

        Assert.Equal(0, allocated);
        Assert.True(sent > 0);
    }

    [Fact]
    public void The_parsed_head_adapter_finds_fields_by_name_ignoring_case()
    {
        var bytes = Encoding.ASCII.GetBytes("GET /a.txt HTTP/1.1\r\nHost: example.com\r\nIf-None-Match: \"tag\"\r\n\r\n");
        var text = Encoding.ASCII.GetString(bytes);
        var head = new HttpHead();
        head.Reset();
        AddField(head, text, "Host", "example.com");
        AddField(head, text, "If-None-Match", "\"tag\"");
        var fields = new HttpHeadFields(head, bytes);

        Assert.True(fields.TryGetHeader("if-none-match"u8, out var value));
        Assert.Equal("\"tag\"", Encoding.ASCII.GetString(value));
        Assert.True(fields.TryGetHeader("HOST"u8, out value));
        Assert.Equal("example.com", Encoding.ASCII.GetString(value));
        Assert.False(fields.TryGetHeader("Range"u8, out _));

        static void AddField(HttpHead head, string text, string name, string value)
        {
            var at = text.IndexOf(name + ": ", StringComparison.Ordinal);
            head.AddHeader(new HttpRange(at, name.Length), new HttpRange(at + name.Length + 2, value.Length));
        }
    }

    private StaticReply Serve(string target, string method = "GET", params (string Name, string Value)[] headers) =>
        Serve(Encoding.ASCII.GetBytes(method), Encoding.ASCII.GetBytes(target), new TestHeaders(headers));

    private StaticReply Serve(byte[] method, byte[] target, TestHeaders headers) =>
        StaticContent.Serve(_cache, method, target, headers, _scratch);

    private string ETagOf(string target) => Header(Wire(Serve(target)), "ETag")!;

    /// <summary>What would go on the wire: the head written into the scratch, then the cached bytes.</summary>
    private string Wire(StaticReply reply) =>
        Encoding.Latin1.GetString(_scratch, 0, reply.HeadLength) + Encoding.Latin1.GetString(reply.Cached.Span);

    private static string? Header(string wire, string name)
    {
        var end = wire.IndexOf("\r\n\r\n", StringComparison.Ordinal);
        foreach (var line in wire[..end].Split("\r\n")[1..])
        {
            var colon = line.IndexOf(':', StringComparison.Ordinal);
            if (string.Equals(line[..colon], name, StringComparison.OrdinalIgnoreCase))
                return line[(colon + 1)..].Trim();
        }

        return null;
    }

    private static string Body(string wire) => wire[(wire.IndexOf("\r\n\r\n", StringComparison.Ordinal) + 4)..];
}
