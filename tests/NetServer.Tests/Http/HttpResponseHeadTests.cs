using System;
using System.Linq;
using NetServer.Http;
using Xunit;

namespace NetServer.Tests.Http;

/// <summary>Response heads as the client parses them (RFC 9112 sections 4 and 6.3), fed whole, byte by byte and in random splits.</summary>
public sealed class HttpResponseHeadTests
{
    [Theory]
    [InlineData("HTTP/1.1 200 OK\r\n\r\n", 200, "OK", 1)]
    [InlineData("HTTP/1.1 404 Not Found\r\n\r\n", 404, "Not Found", 1)]
    [InlineData("HTTP/1.1 200 \r\n\r\n", 200, "", 1)]
    [InlineData("HTTP/1.1 200\r\n\r\n", 200, "", 1)]                 // no space before an empty reason
    [InlineData("HTTP/1.0 500 Internal\tError\r\n\r\n", 500, "Internal\tError", 0)]
    [InlineData("HTTP/1.1 599 caf\xC3\xA9\r\n\r\n", 599, "caf\xC3\xA9", 1)]
    [InlineData("HTTP/1.2 200 OK\r\n\r\n", 200, "OK", 1)]            // a later 1.x minor is read as 1.1
    [InlineData("HTTP/1.1 999 Odd\r\n\r\n", 999, "Odd", 1)]
    public void Status_lines_give_status_reason_and_version(string raw, int status, string reason, int minor)
    {
        var outcome = HttpFeed.Response(raw);

        Assert.Equal(HttpParseStatus.Complete, outcome.Status);
        Assert.Equal(status, outcome.ResponseStatus);
        Assert.Equal(reason, outcome.Reason);
        Assert.Equal(minor, outcome.MinorVersion);
        Assert.Equal(raw.Length, outcome.Consumed);
    }

    [Theory]
    [InlineData("HTTP/1.1 20 OK\r\n\r\n")]
    [InlineData("HTTP/1.1 2000 OK\r\n\r\n")]
    [InlineData("HTTP/1.1 abc OK\r\n\r\n")]
    [InlineData("HTTP/1.1 099 Low\r\n\r\n")]
    [InlineData("HTTP/1.1  200 OK\r\n\r\n")]
    [InlineData("HTTP/1.1 200 O\x01K\r\n\r\n")]
    [InlineData("HTTP/2 200 OK\r\n\r\n")]
    [InlineData("http/1.1 200 OK\r\n\r\n")]
    [InlineData("HTTP/1.1 200 OK\n\r\n")]
    [InlineData("HTTP/1.1 200 OK\r\nX : y\r\n\r\n")]
    [InlineData("HTTP/1.1 200 OK\r\nContent-Length: abc\r\n\r\n")]   // invalid length, no Transfer-Encoding
    [InlineData("HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n")]
    [InlineData("HTTP/3.0 200 OK\r\n\r\n")]
    public void Malformed_responses_are_errors(string raw)
    {
        Assert.Equal(HttpParseStatus.Error, HttpFeed.Response(raw).Status);
    }

    [Theory]
    [InlineData("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n", false, "ContentLength", 5, false)]
    [InlineData("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", false, "ContentLength", 0, false)]
    [InlineData("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", false, "Chunked", -1, false)]
    [InlineData("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", false, "Chunked", -1, false)]
    [InlineData("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n", false, "Chunked", -1, true)]
    [InlineData("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: junk\r\n\r\n", false, "Chunked", -1, true)]
    [InlineData("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n", false, "UntilClose", -1, true)]
    [InlineData("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, gzip\r\nContent-Length: 5\r\n\r\n", false, "UntilClose", -1, true)]
    [InlineData("HTTP/1.0 200 OK\r\nTransfer-Encoding: chunked\r\nConnection: keep-alive\r\n\r\n", false, "Chunked", -1, true)]
    [InlineData("HTTP/1.1 200 OK\r\n\r\n", false, "UntilClose", -1, true)]
    [InlineData("HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\n", false, "ContentLength", 2, true)]
    [InlineData("HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\n", false, "ContentLength", 2, true)]
    [InlineData("HTTP/1.0 200 OK\r\nContent-Length: 2\r\nConnection: keep-alive\r\n\r\n", false, "ContentLength", 2, false)]
    [InlineData("HTTP/1.1 204 No Content\r\nContent-Length: 5\r\n\r\n", false, "None", -1, false)]
    [InlineData("HTTP/1.1 304 Not Modified\r\nContent-Length: 5\r\n\r\n", false, "None", -1, false)]
    [InlineData("HTTP/1.1 304 Not Modified\r\nTransfer-Encoding: chunked\r\n\r\n", false, "None", -1, false)]
    [InlineData("HTTP/1.1 100 Continue\r\n\r\n", false, "None", -1, false)]
    [InlineData("HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n", false, "None", -1, false)]
    [InlineData("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n", true, "None", -1, false)]
    [InlineData("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", true, "None", -1, false)]
    [InlineData("HTTP/1.1 200 OK\r\n\r\n", true, "None", -1, false)]
    [InlineData("HTTP/1.1 204 No Content\r\nContent-Length: x\r\n\r\n", false, "None", -1, false)]
    public void Responses_are_framed_by_RFC_9112_section_6_3(string raw, bool requestWasHead, string framing, long length, bool closeAfter)
    {
        var outcome = HttpFeed.Response(raw, requestWasHead);

        Assert.Equal(HttpParseStatus.Complete, outcome.Status);
        Assert.Equal(Enum.Parse<HttpBodyFraming>(framing), outcome.Framing);
        Assert.Equal(length, outcome.ContentLength);
        Assert.Equal(closeAfter, outcome.CloseAfter);
    }

    [Fact]
    public void Switching_Protocols_marks_an_upgrade()
    {
        var outcome = HttpFeed.Response("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n");

        Assert.True(outcome.IsUpgrade);
        Assert.Equal(HttpBodyFraming.None, outcome.Framing);
        Assert.False(HttpFeed.Response("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n").IsUpgrade);
    }

    [Fact]
    public void A_response_may_carry_more_header_fields_than_the_request_limit()
    {
        var fields = string.Concat(Enumerable.Range(0, 150).Select(i => $"Set-Cookie: c{i}=v\r\n"));
        var outcome = HttpFeed.Response($"HTTP/1.1 200 OK\r\n{fields}Content-Length: 0\r\n\r\n");

        Assert.Equal(HttpParseStatus.Complete, outcome.Status);
        Assert.Equal(HttpBodyFraming.ContentLength, outcome.Framing);
    }

    [Fact]
    public void A_response_head_of_exactly_the_limit_parses_and_one_byte_more_is_refused_as_it_arrives()
    {
        var limits = new HttpLimits { MaxResponseHeadersTotalSize = 64 };
        static string Head(int length) => "HTTP/1.1 200 OK\r\nX: " + new string('v', length - "HTTP/1.1 200 OK\r\nX: \r\n\r\n".Length) + "\r\n\r\n";

        var atLimit = HttpFeed.Response(Head(64), limits: limits);
        Assert.Equal(HttpParseStatus.Complete, atLimit.Status);
        Assert.Equal(64, atLimit.Consumed);
        Assert.Equal(HttpParseStatus.Error, HttpFeed.Response(Head(65), limits: limits).Status);

        // A status line that cannot leave room for the empty line is refused before its end arrives.
        var parser = default(HttpHeadParser);
        var bytes = HttpFeed.Bytes("HTTP/1.1 200 " + new string('r', 100));
        Assert.Equal(HttpParseStatus.NeedMoreData, parser.ParseResponseHead(bytes.AsSpan(0, 61), false, limits, new HttpHead(), out _));
        Assert.Equal(HttpParseStatus.Error, parser.ParseResponseHead(bytes.AsSpan(0, 62), false, limits, new HttpHead(), out _));
    }
}
