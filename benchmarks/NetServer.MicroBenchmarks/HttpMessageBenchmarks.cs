using System;
using System.Text;
using BenchmarkDotNet.Attributes;
using NetServer.Http;

namespace NetServer.MicroBenchmarks;

/// <summary>
/// The HTTP model's share of a request: load a parsed head (ranges made here by hand, so the
/// figures do not include the parser), read it as handlers do, answer with a cached body.
/// 0 B/op is the goal: strings are constants or reused from the previous request.
/// </summary>
[MemoryDiagnoser]
public class HttpMessageBenchmarks
{
    private const string RequestText =
        "GET /api/items?page=2 HTTP/1.1\r\nHost: localhost:8080\r\nUser-Agent: bench/1.0\r\n" +
        "Accept: application/json\r\nCookie: session=abc123\r\nX-Request-Id: 42\r\n\r\n";

    private readonly byte[] _cachedBody = Encoding.UTF8.GetBytes("{\"status\":\"ok\",\"items\":[1,2,3]}");
    private readonly HttpRequest _request = new();
    private readonly HttpResponse _response = new();
    private byte[] _head = null!;
    private HttpHead _parsed = null!;

    [GlobalSetup]
    public void Setup()
    {
        _head = Encoding.ASCII.GetBytes(RequestText);
        _parsed = new HttpHead();
        _parsed.Reset();
        _parsed.Length = _head.Length;
        var span = _head.AsSpan();
        var lineEnd = span.IndexOf("\r\n"u8);
        var first = span.IndexOf((byte)' ');
        var second = first + 1 + span.Slice(first + 1).IndexOf((byte)' ');
        _parsed.Method = new HttpRange(0, first);
        _parsed.Target = new HttpRange(first + 1, second - first - 1);
        _parsed.Version = new HttpRange(second + 1, lineEnd - second - 1);
        for (var start = lineEnd + 2; span[start] != (byte)'\r';)
        {
            var end = start + span.Slice(start).IndexOf("\r\n"u8);
            var colon = start + span.Slice(start).IndexOf((byte)':');
            _parsed.AddHeader(new HttpRange(start, colon - start), new HttpRange(colon + 2, end - colon - 2));
            start = end + 2;
        }

        if (Answer() == 0)
            throw new InvalidOperationException("The request did not read as expected.");
    }

    /// <summary>Copy the head into the request's storage.</summary>
    [Benchmark(Baseline = true)]
    public int LoadHead()
    {
        _request.LoadHead(_head, _parsed);
        return (int)_request.Headers;
    }

    /// <summary>Load, then read with the span API: no strings at all.</summary>
    [Benchmark]
    public int ReadSpans()
    {
        _request.LoadHead(_head, _parsed);
        var found = _request.TryGetHeader("accept"u8, out var accept) ? accept.Length : 0;
        return found + _request.MethodBytes.Length + _request.TargetBytes.Length;
    }

    /// <summary>Load, then read with NetCoreServer's string API: Method, Url, every header, a lookup, the decoded path.</summary>
    [Benchmark]
    public int ReadStrings()
    {
        _request.LoadHead(_head, _parsed);
        var seen = _request.Method == "GET" ? _request.Url.Length : 0;
        for (var i = 0; i < _request.Headers; i++)
            seen += _request.Header(i).Item2.Length;
        if (_request.TryGetHeader("Host", out var host))
            seen += host.Length;
        if (_request.TryGetPath(out var path))
            seen += path.Length;
        return seen;
    }

    /// <summary>Build "200 OK" with a Content-Type and the cached body.</summary>
    [Benchmark]
    public long MakeGetResponse() => _response.MakeGetResponse(_cachedBody, "application/json").Cache.Size;

    /// <summary>The whole exchange: load, read strings, answer.</summary>
    [Benchmark]
    public long Answer() => ReadStrings() + MakeGetResponse();
}
