using System;
using System.IO;
using System.Text;
using BenchmarkDotNet.Attributes;
using NetServer.Http;

namespace NetServer.MicroBenchmarks;

/// <summary>
/// Deciding the answer to one static-file request (docs/http-static.md): a plain GET (the cached
/// response as it is), a conditional GET answered 304, a one-range GET answered 206, and
/// <see cref="FileCache.Find"/> by string. The request target and headers are bytes, as the
/// parser hands them over; the folder holds one 4 KiB page. Sending is not measured. 0 B/op.
/// </summary>
[MemoryDiagnoser]
#pragma warning disable CA1001 // GlobalCleanup disposes the cache.
public class StaticContentBenchmarks
#pragma warning restore CA1001
{
    private readonly byte[] _scratch = new byte[StaticContent.MinScratchSize];
    private readonly byte[] _target = Encoding.ASCII.GetBytes("/docs/page.html?v=12");
    private string _folder = null!;
    private FileCache _cache = null!;
    private Fields _plain;
    private Fields _conditional;
    private Fields _range;

    [GlobalSetup]
    public void Setup()
    {
        _folder = Path.Combine(Path.GetTempPath(), "netserver-bench-static-" + Guid.NewGuid().ToString("N"));
        Directory.CreateDirectory(Path.Combine(_folder, "docs"));
        File.WriteAllText(Path.Combine(_folder, "docs", "page.html"), new string('x', 4096));
        _cache = new FileCache();
        _cache.InsertStaticPath(_folder, "/", "*.*", TimeSpan.FromHours(1));

        var headers = Encoding.ASCII.GetString(_cache.Find("/docs/page.html").Item2, 0, 400);
        var eTagAt = headers.IndexOf("ETag: ", StringComparison.Ordinal) + 6;
        var eTag = headers.Substring(eTagAt, StaticResponse.ETagLength);
        _plain = new Fields(("Host", "example.com"), ("User-Agent", "bench"), ("Accept", "*/*"));
        _conditional = new Fields(("Host", "example.com"), ("User-Agent", "bench"), ("If-None-Match", eTag));
        _range = new Fields(("Host", "example.com"), ("User-Agent", "bench"), ("Range", "bytes=100-199"));
    }

    [GlobalCleanup]
    public void Cleanup()
    {
        _cache.Dispose();
        Directory.Delete(_folder, recursive: true);
    }

    [Benchmark(Baseline = true)]
    public int Get() => StaticContent.Serve(_cache, "GET"u8, _target, _plain, _scratch).Cached.Length;

    [Benchmark]
    public int GetNotModified() => StaticContent.Serve(_cache, "GET"u8, _target, _conditional, _scratch).HeadLength;

    [Benchmark]
    public int GetRange() => StaticContent.Serve(_cache, "GET"u8, _target, _range, _scratch).HeadLength;

    [Benchmark]
    public int FindByString() => _cache.Find("/docs/page.html").Item2.Length;

    private readonly struct Fields : IHttpHeaderSource
    {
        private readonly (byte[] Name, byte[] Value)[] _fields;

        public Fields(params (string Name, string Value)[] fields)
        {
            _fields = new (byte[], byte[])[fields.Length];
            for (var i = 0; i < fields.Length; i++)
                _fields[i] = (Encoding.ASCII.GetBytes(fields[i].Name), Encoding.ASCII.GetBytes(fields[i].Value));
        }

        public bool TryGetHeader(ReadOnlySpan<byte> name, out ReadOnlySpan<byte> value)
        {
            foreach (var (n, v) in _fields)
            {
                if (HttpSyntax.EqualsIgnoreCase(n, name))
                {
                    value = v;
                    return true;
                }
            }

            value = default;
            return false;
        }
    }
}
