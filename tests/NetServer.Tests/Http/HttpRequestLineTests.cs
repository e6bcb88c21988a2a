using System;
using System.Linq;
using NetServer.Http;
using Xunit;

namespace NetServer.Tests.Http;

/// <summary>The request line (RFC 9112 section 3), each case fed whole, byte by byte and in random splits.</summary>
public sealed class HttpRequestLineTests
{
    [Theory]
    [InlineData("GET / HTTP/1.1\r\nHost: a\r\n\r\n", "GET", "/", 1)]
    [InlineData("GET /path/to?q=1&b=%20x HTTP/1.1\r\nHost: a\r\n\r\n", "GET", "/path/to?q=1&b=%20x", 1)]
    [InlineData("POST /submit HTTP/1.0\r\n\r\n", "POST", "/submit", 0)]
    [InlineData("OPTIONS * HTTP/1.1\r\nHost: a\r\n\r\n", "OPTIONS", "*", 1)]
    [InlineData("CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n", "CONNECT", "example.com:443", 1)]
    [InlineData("GET http://example.com/a?b HTTP/1.1\r\nHost: example.com\r\n\r\n", "GET", "http://example.com/a?b", 1)]
    [InlineData("GET urn:isbn:0451450523 HTTP/1.1\r\nHost: a\r\n\r\n", "GET", "urn:isbn:0451450523", 1)]
    [InlineData("PURGE /cache HTTP/1.1\r\nHost: a\r\n\r\n", "PURGE", "/cache", 1)]
    [InlineData("M-SEARCH /x HTTP/1.1\r\nHost: a\r\n\r\n", "M-SEARCH", "/x", 1)]
    [InlineData("get / HTTP/1.1\r\nHost: a\r\n\r\n", "get", "/", 1)]
    [InlineData("GET /caf\xC3\xA9 HTTP/1.1\r\nHost: a\r\n\r\n", "GET", "/caf\xC3\xA9", 1)]
    [InlineData("GET /a#frag HTTP/1.1\r\nHost: a\r\n\r\n", "GET", "/a#frag", 1)]
    public void Valid_request_lines_give_method_target_and_version(string raw, string method, string target, int minor)
    {
        var outcome = HttpFeed.Request(raw);

        Assert.Equal(HttpParseStatus.Complete, outcome.Status);
        Assert.Equal(method, outcome.Method);
        Assert.Equal(target, outcome.Target);
        Assert.Equal(minor, outcome.MinorVersion);
        Assert.Equal(raw.Length, outcome.Consumed);
    }

    [Theory]
    [InlineData("\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n")]
    [InlineData("\r\n\r\n\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n")]
    public void Empty_lines_before_the_request_line_are_skipped_and_consumed_with_the_head(string raw)
    {
        var outcome = HttpFeed.Request(raw);

        Assert.Equal(HttpParseStatus.Complete, outcome.Status);
        Assert.Equal("GET", outcome.Method);
        Assert.Equal("/", outcome.Target);
        Assert.Equal(raw.Length, outcome.Consumed);
    }

    [Theory]
    [InlineData("GET  / HTTP/1.1\r\nHost: a\r\n\r\n", 400)]       // two spaces
    [InlineData("GET / HTTP/1.1 \r\nHost: a\r\n\r\n", 400)]       // trailing space
    [InlineData(" GET / HTTP/1.1\r\nHost: a\r\n\r\n", 400)]       // leading space
    [InlineData("GET /a b HTTP/1.1\r\nHost: a\r\n\r\n", 400)]     // space inside the target
    [InlineData("GET\t/ HTTP/1.1\r\nHost: a\r\n\r\n", 400)]       // tab as a separator
    [InlineData("GET /\tx HTTP/1.1\r\nHost: a\r\n\r\n", 400)]     // tab in the target
    [InlineData("G@T / HTTP/1.1\r\nHost: a\r\n\r\n", 400)]        // method not a token
    [InlineData("GE(T / HTTP/1.1\r\nHost: a\r\n\r\n", 400)]
    [InlineData("\0GET / HTTP/1.1\r\nHost: a\r\n\r\n", 400)]
    [InlineData("GET /\x01 HTTP/1.1\r\nHost: a\r\n\r\n", 400)]    // control byte in the target
    [InlineData("GET /\x7F HTTP/1.1\r\nHost: a\r\n\r\n", 400)]    // DEL in the target
    [InlineData("GET /\0 HTTP/1.1\r\nHost: a\r\n\r\n", 400)]
    [InlineData("GET / http/1.1\r\nHost: a\r\n\r\n", 400)]        // version is case-sensitive
    [InlineData("GET / HTTP/1.10\r\nHost: a\r\n\r\n", 400)]
    [InlineData("GET / HTTP/1\r\nHost: a\r\n\r\n", 400)]
    [InlineData("GET / HTTP/1.x\r\nHost: a\r\n\r\n", 400)]
    [InlineData("GET / HTTPS/1.1\r\nHost: a\r\n\r\n", 400)]
    [InlineData("GET / HTTP/1.1\rX\r\nHost: a\r\n\r\n", 400)]    // bare CR inside the line
    [InlineData("GET / HTTP/1.1\nHost: a\r\n\r\n", 400)]         // bare LF ends the line
    [InlineData("\nGET / HTTP/1.1\r\nHost: a\r\n\r\n", 400)]     // bare LF as an empty line
    [InlineData("GET\r\nHost: a\r\n\r\n", 400)]
    [InlineData("GET /\r\n\r\n", 400)]                           // HTTP/0.9 simple request
    [InlineData("GET * HTTP/1.1\r\nHost: a\r\n\r\n", 400)]        // asterisk-form is OPTIONS only
    [InlineData("CONNECT /path HTTP/1.1\r\nHost: a\r\n\r\n", 400)] // CONNECT takes authority-form
    [InlineData("CONNECT a b:1 HTTP/1.1\r\nHost: a\r\n\r\n", 400)]
    [InlineData("GET example.com HTTP/1.1\r\nHost: a\r\n\r\n", 400)] // authority-form without CONNECT
    [InlineData("GET 1http://a/ HTTP/1.1\r\nHost: a\r\n\r\n", 400)]
    [InlineData("GET / HTTP/2.0\r\nHost: a\r\n\r\n", 505)]
    [InlineData("GET / HTTP/1.2\r\nHost: a\r\n\r\n", 505)]
    [InlineData("GET / HTTP/0.9\r\nHost: a\r\n\r\n", 505)]
    [InlineData("GET / HTTP/3.1\r\nHost: a\r\n\r\n", 505)]
    public void Malformed_request_lines_are_refused_with_their_status(string raw, int status)
    {
        var outcome = HttpFeed.Request(raw);

        Assert.Equal(HttpParseStatus.Error, outcome.Status);
        Assert.Equal(status, outcome.ErrorStatus);
    }

    [Fact]
    public void A_request_line_of_exactly_the_limit_parses_and_one_byte_more_is_414()
    {
        var limits = new HttpLimits();
        // "GET /aaa... HTTP/1.1\r\n" of exactly MaxRequestLineSize bytes.
        var target = "/" + new string('a', limits.MaxRequestLineSize - "GET  HTTP/1.1\r\n".Length - 1);
        var atLimit = $"GET {target} HTTP/1.1\r\nHost: a\r\n\r\n";
        Assert.Equal(limits.MaxRequestLineSize, atLimit.IndexOf('\n') + 1);

        var ok = HttpFeed.Request(atLimit);
        Assert.Equal(HttpParseStatus.Complete, ok.Status);
        Assert.Equal(target, ok.Target);

        var over = HttpFeed.Request($"GET {target}a HTTP/1.1\r\nHost: a\r\n\r\n");
        Assert.Equal(HttpParseStatus.Error, over.Status);
        Assert.Equal(414, over.ErrorStatus);
    }

    [Fact]
    public void An_endless_request_line_is_414_as_soon_as_the_limit_is_reached_without_a_line_end()
    {
        var limits = new HttpLimits { MaxRequestLineSize = 64 };
        var bytes = HttpFeed.Bytes("GET /" + new string('a', 200));
        var parser = default(HttpHeadParser);
        var head = new HttpHead();

        // One byte short of the limit: still waiting; at the limit with no LF the line cannot fit.
        Assert.Equal(HttpParseStatus.NeedMoreData, parser.ParseRequestHead(bytes.AsSpan(0, 63), limits, head, out _));
        Assert.Equal(HttpParseStatus.Error, parser.ParseRequestHead(bytes.AsSpan(0, 64), limits, head, out _));
        Assert.Equal(414, parser.Error.Status);
    }

    [Fact]
    public void A_line_that_would_fit_only_without_its_LF_is_414()
    {
        // 62 bytes + CRLF = 64, the limit; 63 bytes + CR fill the limit and the LF would make 65.
        var limits = new HttpLimits { MaxRequestLineSize = 64 };
        static string Line(int length) => "GET /" + new string('a', length - "GET / HTTP/1.1".Length) + " HTTP/1.1";

        var fits = HttpFeed.Request(HttpFeed.Bytes(Line(62) + "\r\nHost: a\r\n\r\n"), limits);
        Assert.Equal(HttpParseStatus.Complete, fits.Status);
        var over = HttpFeed.Request(HttpFeed.Bytes(Line(63) + "\r\nHost: a\r\n\r\n"), limits);
        Assert.Equal(414, over.ErrorStatus);
    }

    [Fact]
    public void Empty_lines_before_the_request_line_count_toward_its_limit()
    {
        var limits = new HttpLimits { MaxRequestLineSize = 32 };
        var line = "GET / HTTP/1.1\r\n"; // 16 bytes
        Assert.Equal(HttpParseStatus.Complete, HttpFeed.Request(HttpFeed.Bytes(string.Concat(Enumerable.Repeat("\r\n", 8)) + line + "Host: a\r\n\r\n"), limits).Status);
        Assert.Equal(414, HttpFeed.Request(HttpFeed.Bytes(string.Concat(Enumerable.Repeat("\r\n", 9)) + line + "Host: a\r\n\r\n"), limits).ErrorStatus);
    }

    [Fact]
    public void An_incomplete_head_waits_and_consumes_nothing()
    {
        var outcome = HttpFeed.Request("GET / HTTP/1.1\r\nHost: a\r\n");

        Assert.Equal(HttpParseStatus.NeedMoreData, outcome.Status);
        Assert.Equal(0, outcome.Consumed);
    }
}
