using System;
using System.Text;
using BenchmarkDotNet.Attributes;
using NetServer.Http;

namespace NetServer.MicroBenchmarks;

/// <summary>
/// The HTTP/1.1 head parser on a typical browser GET (request line and 11 header fields, 480 bytes)
/// in one read and in two (the first ending mid-field, so the second call resumes), and the body
/// reader on a chunked body (8 chunks of 512 bytes, extensions on some, two trailers). Hot paths:
/// 0 B/op expected.
/// </summary>
[MemoryDiagnoser]
public class HttpParserBenchmarks
{
    private static readonly string s_browserGet =
        "GET /articles/2026/http-parsing?page=2&sort=new HTTP/1.1\r\n" +
        "Host: www.example.com\r\n" +
        "Connection: keep-alive\r\n" +
        "sec-ch-ua: \"Chromium\";v=\"124\", \"Not-A.Brand\";v=\"99\"\r\n" +
        "Upgrade-Insecure-Requests: 1\r\n" +
        "User-Agent: Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36\r\n" +
        "Accept: text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8\r\n" +
        "Sec-Fetch-Site: same-origin\r\n" +
        "Sec-Fetch-Mode: navigate\r\n" +
        "Referer: https://www.example.com/articles/2026\r\n" +
        "Accept-Encoding: gzip, deflate, br\r\n" +
        "Accept-Language: en-US,en;q=0.9\r\n" +
        "\r\n";

    private readonly HttpLimits _limits = new();
    private readonly HttpHead _head = new();
    private readonly HttpHead _trailers = new();
    private HttpHeadParser _parser;
    private byte[] _get = null!;
    private byte[] _chunked = null!;
    private int _bodyLength;

    [GlobalSetup]
    public void Setup()
    {
        _get = Encoding.ASCII.GetBytes(s_browserGet);
        var body = new StringBuilder();
        for (var i = 0; i < 8; i++)
            body.Append(i % 3 == 0 ? "200;name=value\r\n" : "200\r\n").Append('x', 512).Append("\r\n");
        body.Append("0\r\nChecksum: 0123456789abcdef\r\nX-Count: 8\r\n\r\n");
        _chunked = Encoding.ASCII.GetBytes(body.ToString());

        // Check one round before measuring.
        if (ParseGet() != _get.Length || ParseGetInTwoReads() != _get.Length || _head.HeaderCount != 11)
            throw new InvalidOperationException("The GET head did not parse whole.");
        _bodyLength = 8 * 512;
        if (ReadChunkedBody() != _bodyLength || _trailers.HeaderCount != 2)
            throw new InvalidOperationException("The chunked body did not read whole.");
    }

    [Benchmark(Baseline = true)]
    public int ParseGet()
    {
        _parser.ParseRequestHead(_get, _limits, _head, out var consumed);
        return consumed;
    }

    [Benchmark]
    public int ParseGetInTwoReads()
    {
        var half = _get.AsSpan(0, 200);
        _parser.ParseRequestHead(half, _limits, _head, out _);
        _parser.ParseRequestHead(_get, _limits, _head, out var consumed);
        return consumed;
    }

    [Benchmark]
    public int ReadChunkedBody()
    {
        var reader = new HttpBodyReader(HttpBodyFraming.Chunked, -1, _limits.MaxRequestBodySize, _limits, _trailers);
        ReadOnlySpan<byte> input = _chunked;
        var total = 0;
        while (true)
        {
            var status = reader.Read(input, out var data, out var consumed);
            input = input.Slice(consumed);
            if (status == HttpBodyStatus.Data)
                total += data.Length;
            else if (status == HttpBodyStatus.Done)
                return total;
            else
                return -1;
        }
    }
}
