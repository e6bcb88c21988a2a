using System;
using NetServer.Http;
using Xunit;

namespace NetServer.Tests.Http;

/// <summary>
/// Request body framing and the smuggling rules (RFC 9112 section 6), Host (section 3.2),
/// Connection and Expect; each case fed whole, byte by byte and in random splits.
/// </summary>
public sealed class HttpRequestFramingTests
{
    private static string Post(string fields, string version = "HTTP/1.1") => $"POST /upload {version}\r\nHost: a\r\n{fields}\r\n";

    [Theory]
    [InlineData("", "None", -1)]
    [InlineData("Content-Length: 0\r\n", "ContentLength", 0)]
    [InlineData("Content-Length: 5\r\n", "ContentLength", 5)]
    [InlineData("content-length:5\r\n", "ContentLength", 5)]
    [InlineData("Content-Length: 0005\r\n", "ContentLength", 5)]
    [InlineData("Content-Length: 30000000\r\n", "ContentLength", 30_000_000)]
    [InlineData("Transfer-Encoding: chunked\r\n", "Chunked", -1)]
    [InlineData("Transfer-Encoding: Chunked\r\n", "Chunked", -1)]
    [InlineData("transfer-encoding: CHUNKED  \r\n", "Chunked", -1)]
    [InlineData("Transfer-Encoding: , chunked\r\n", "Chunked", -1)]      // empty list elements are ignored
    [InlineData("Transfer-Encoding: chunked,\r\n", "Chunked", -1)]
    [InlineData("Transfer_Encoding: chunked\r\n", "None", -1)]           // another field
    [InlineData("Content-Lengths: 5\r\n", "None", -1)]
    public void Requests_are_framed_by_Content_Length_or_chunked(string fields, string framing, long length)
    {
        var outcome = HttpFeed.Request(Post(fields));

        Assert.Equal(HttpParseStatus.Complete, outcome.Status);
        Assert.Equal(Enum.Parse<HttpBodyFraming>(framing), outcome.Framing);
        Assert.Equal(length, outcome.ContentLength);
        Assert.False(outcome.CloseAfter);
    }

    [Theory]
    [InlineData("Content-Length: 5\r\nTransfer-Encoding: chunked\r\n")]
    [InlineData("Transfer-Encoding: chunked\r\nContent-Length: 5\r\n")]
    [InlineData("Transfer-Encoding: chunked\r\nContent-Length: 0\r\n")]
    public void Transfer_Encoding_wins_over_Content_Length_and_the_connection_closes_after(string fields)
    {
        var outcome = HttpFeed.Request(Post(fields));

        Assert.Equal(HttpParseStatus.Complete, outcome.Status);
        Assert.Equal(HttpBodyFraming.Chunked, outcome.Framing);
        Assert.Equal(-1, outcome.ContentLength);
        Assert.True(outcome.CloseAfter);
    }

    [Theory]
    [InlineData("Content-Length: \r\n", 400)]
    [InlineData("Content-Length: -1\r\n", 400)]
    [InlineData("Content-Length: +5\r\n", 400)]
    [InlineData("Content-Length: 5 5\r\n", 400)]
    [InlineData("Content-Length: 0x5\r\n", 400)]
    [InlineData("Content-Length: 5.0\r\n", 400)]
    [InlineData("Content-Length: 1_000\r\n", 400)]
    [InlineData("Content-Length: 5,\r\n", 400)]
    [InlineData("Content-Length: ,5\r\n", 400)]
    [InlineData("Content-Length: 5, 6\r\n", 400)]
    [InlineData("Content-Length: 5\r\nContent-Length: 6\r\n", 400)]
    [InlineData("Content-Length: 5\r\nContent-Length: 5, 6\r\n", 400)]
    [InlineData("Content-Length: 9223372036854775808\r\n", 400)]        // over long.MaxValue
    [InlineData("Content-Length: 99999999999999999999999\r\n", 400)]
    [InlineData("Content-Length : 5\r\n", 400)]                          // whitespace before the colon
    [InlineData("Content-Length: 30000001\r\n", 413)]                    // one over MaxRequestBodySize
    [InlineData("Content-Length: 9223372036854775807\r\n", 413)]
    [InlineData("Transfer-Encoding: gzip\r\n", 400)]                     // final coding not chunked
    [InlineData("Transfer-Encoding: identity\r\n", 400)]
    [InlineData("Transfer-Encoding: chunked, gzip\r\n", 400)]
    [InlineData("Transfer-Encoding: chunked\r\nTransfer-Encoding: gzip\r\n", 400)]
    [InlineData("Transfer-Encoding: xchunked\r\n", 400)]
    [InlineData("Transfer-Encoding: chunked;q=1\r\n", 400)]
    [InlineData("Transfer-Encoding: \"chunked\"\r\n", 400)]
    [InlineData("Transfer-Encoding: \r\n", 400)]
    [InlineData("Transfer-Encoding: ,\r\n", 400)]
    [InlineData("Transfer-Encoding: chunked, chunked\r\n", 400)]         // chunked twice
    [InlineData("Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n", 400)]
    [InlineData("Transfer-Encoding : chunked\r\n", 400)]
    [InlineData("Transfer-Encoding:\u000Bchunked\r\n", 400)]
    [InlineData("Transfer-Encoding: chunked\r\n  , gzip\r\n", 400)]      // obs-fold
    [InlineData("Transfer-Encoding: chunked\r\nContent-Length: x\r\n", 400)]
    [InlineData("Transfer-Encoding: gzip, chunked\r\n", 501)]            // understood framing, unknown coding
    [InlineData("Transfer-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n", 501)]
    public void Ambiguous_or_invalid_framing_is_refused(string fields, int status)
    {
        var outcome = HttpFeed.Request(Post(fields));

        Assert.Equal(HttpParseStatus.Error, outcome.Status);
        Assert.Equal(status, outcome.ErrorStatus);
    }

    /// <summary>
    /// Two Content-Length fields, or one holding a list, are refused even when the values agree,
    /// as Kestrel does (RFC 9110 8.6 would allow taking them as one; a proxy in front that decides
    /// otherwise is how request smuggling starts).
    /// </summary>
    [Theory]
    [InlineData("Content-Length: 5, 5\r\n")]
    [InlineData("Content-Length: 5,5,5\r\n")]
    [InlineData("Content-Length: 0, 0\r\n")]
    [InlineData("Content-Length: 5\r\nContent-Length: 5\r\n")]
    [InlineData("Content-Length: 5\r\ncontent-length: 5\r\n")]
    [InlineData("Content-Length: 5\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n")]
    public void Repeated_Content_Length_values_are_400_even_when_equal(string fields)
    {
        var outcome = HttpFeed.Request(Post(fields));

        Assert.Equal(HttpParseStatus.Error, outcome.Status);
        Assert.Equal(400, outcome.ErrorStatus);
    }

    [Theory]
    [InlineData("Transfer-Encoding: chunked\r\n")]
    [InlineData("Transfer-Encoding: chunked\r\nContent-Length: 5\r\n")]
    public void Transfer_Encoding_in_an_HTTP_1_0_request_is_400(string fields)
    {
        Assert.Equal(400, HttpFeed.Request(Post(fields, "HTTP/1.0")).ErrorStatus);
    }

    [Fact]
    public void The_body_size_limit_is_inclusive_and_null_turns_it_off()
    {
        var limits = new HttpLimits { MaxRequestBodySize = 10 };
        Assert.Equal(10, HttpFeed.Request(HttpFeed.Bytes(Post("Content-Length: 10\r\n")), limits).ContentLength);
        Assert.Equal(413, HttpFeed.Request(HttpFeed.Bytes(Post("Content-Length: 11\r\n")), limits).ErrorStatus);

        limits.MaxRequestBodySize = null;
        Assert.Equal(long.MaxValue, HttpFeed.Request(HttpFeed.Bytes(Post("Content-Length: 9223372036854775807\r\n")), limits).ContentLength);
    }

    [Theory]
    [InlineData("a")]
    [InlineData("example.com")]
    [InlineData("example.com:8080")]
    [InlineData("EXAMPLE.com:")]
    [InlineData("127.0.0.1:80")]
    [InlineData("[::1]")]
    [InlineData("[::1]:8080")]
    [InlineData("[2001:db8::7]")]
    [InlineData("xn--bcher-kva.example")]
    [InlineData("%41.example")]
    [InlineData("a-b_c~d!$&'()*+,;=")]
    [InlineData("")]
    public void Valid_Host_values_are_accepted(string host)
    {
        Assert.Equal(HttpParseStatus.Complete, HttpFeed.Request($"GET / HTTP/1.1\r\nHost: {host}\r\n\r\n").Status);
    }

    [Theory]
    [InlineData("a b")]
    [InlineData("localhost:8080, other.example")]
    [InlineData("a/b")]
    [InlineData("user@a")]
    [InlineData("a:8x")]
    [InlineData("a:80:80")]
    [InlineData("a?b")]
    [InlineData("a#b")]
    [InlineData("a\\b")]
    [InlineData("[::1")]
    [InlineData("[]")]
    [InlineData("[zz::1]")]
    [InlineData("[::1]x")]
    [InlineData("%4")]
    [InlineData("%zz.example")]
    [InlineData("caf\xC3\xA9.example")]
    [InlineData("a\"b")]
    public void Invalid_Host_values_are_400(string host)
    {
        Assert.Equal(400, HttpFeed.Request($"GET / HTTP/1.1\r\nHost: {host}\r\n\r\n").ErrorStatus);
    }

    [Fact]
    public void An_HTTP_1_1_request_without_Host_is_400_unless_the_check_is_relaxed()
    {
        const string raw = "GET / HTTP/1.1\r\nAccept: */*\r\n\r\n";
        Assert.Equal(400, HttpFeed.Request(raw).ErrorStatus);

        var relaxed = HttpFeed.Request(HttpFeed.Bytes(raw), new HttpLimits { RelaxHostCheck = true });
        Assert.Equal(HttpParseStatus.Complete, relaxed.Status);
    }

    [Fact]
    public void An_HTTP_1_0_request_may_leave_Host_out()
    {
        Assert.Equal(HttpParseStatus.Complete, HttpFeed.Request("GET / HTTP/1.0\r\n\r\n").Status);
    }

    [Theory]
    [InlineData("GET / HTTP/1.1\r\nHost: a\r\nHost: a\r\n\r\n")]
    [InlineData("GET / HTTP/1.1\r\nHost: a\r\nhost: b\r\n\r\n")]
    [InlineData("GET / HTTP/1.0\r\nHost: a\r\nHost: b\r\n\r\n")]
    public void More_than_one_Host_is_400_even_relaxed_or_in_HTTP_1_0(string raw)
    {
        Assert.Equal(400, HttpFeed.Request(raw).ErrorStatus);
        Assert.Equal(400, HttpFeed.Request(HttpFeed.Bytes(raw), new HttpLimits { RelaxHostCheck = true }).ErrorStatus);
    }

    [Theory]
    [InlineData("HTTP/1.1", "", false)]
    [InlineData("HTTP/1.1", "Connection: close\r\n", true)]
    [InlineData("HTTP/1.1", "Connection: CLOSE\r\n", true)]
    [InlineData("HTTP/1.1", "Connection: keep-alive, close\r\n", true)]
    [InlineData("HTTP/1.1", "Connection: keep-alive\r\nConnection: close\r\n", true)]
    [InlineData("HTTP/1.1", "Connection: keep-alive\r\n", false)]
    [InlineData("HTTP/1.1", "Connection: closed\r\n", false)]
    [InlineData("HTTP/1.1", "Connection: x-close\r\n", false)]
    [InlineData("HTTP/1.0", "", true)]
    [InlineData("HTTP/1.0", "Connection: keep-alive\r\n", false)]
    [InlineData("HTTP/1.0", "Connection: Keep-Alive\r\n", false)]
    [InlineData("HTTP/1.0", "Connection: te, keep-alive\r\n", false)]
    [InlineData("HTTP/1.0", "Connection: keep-alive, close\r\n", true)]
    [InlineData("HTTP/1.0", "Keep-Alive: timeout=5\r\n", true)]
    public void Connection_options_and_the_version_decide_whether_the_connection_closes_after(string version, string fields, bool closeAfter)
    {
        var outcome = HttpFeed.Request($"GET / {version}\r\nHost: a\r\n{fields}\r\n");

        Assert.Equal(HttpParseStatus.Complete, outcome.Status);
        Assert.Equal(closeAfter, outcome.CloseAfter);
    }

    [Theory]
    [InlineData("Connection: Upgrade\r\nUpgrade: websocket\r\n", true)]
    [InlineData("Connection: keep-alive, upgrade\r\nUpgrade: websocket\r\n", true)]
    [InlineData("Upgrade: websocket\r\nConnection: upgrade\r\n", true)]
    [InlineData("Connection: upgrade\r\n", false)]                    // no Upgrade field
    [InlineData("Connection: upgrade\r\nUpgrade: \r\n", false)]
    [InlineData("Upgrade: websocket\r\n", false)]                     // not a connection option
    public void Upgrade_needs_the_connection_option_and_an_Upgrade_field(string fields, bool upgrade)
    {
        Assert.Equal(upgrade, HttpFeed.Request($"GET /chat HTTP/1.1\r\nHost: a\r\n{fields}\r\n").IsUpgrade);
    }

    [Theory]
    [InlineData("HTTP/1.1", "Expect: 100-continue\r\n", true)]
    [InlineData("HTTP/1.1", "Expect: 100-Continue\r\n", true)]
    [InlineData("HTTP/1.1", "Expect:  100-continue \r\n", true)]
    [InlineData("HTTP/1.1", "Expect: \r\n", false)]
    [InlineData("HTTP/1.1", "", false)]
    [InlineData("HTTP/1.0", "Expect: 100-continue\r\n", false)]      // ignored in HTTP/1.0 (RFC 9110 10.1.1)
    public void Expect_100_continue_is_recognised(string version, string fields, bool expectContinue)
    {
        var outcome = HttpFeed.Request($"POST / {version}\r\nHost: a\r\nContent-Length: 1\r\n{fields}\r\n");

        Assert.Equal(HttpParseStatus.Complete, outcome.Status);
        Assert.Equal(expectContinue, outcome.ExpectContinue);
    }

    [Theory]
    [InlineData("Expect: 200-ok\r\n")]
    [InlineData("Expect: 100-continue, 200-ok\r\n")]
    [InlineData("Expect: 100-continuee\r\n")]
    [InlineData("Expect: 100-continue\r\nExpect: x\r\n")]
    public void Other_expectations_are_417(string fields)
    {
        Assert.Equal(417, HttpFeed.Request($"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\n{fields}\r\n").ErrorStatus);
    }
}
