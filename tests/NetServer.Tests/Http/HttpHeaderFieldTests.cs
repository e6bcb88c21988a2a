using System;
using System.Linq;
using System.Text;
using NetServer.Http;
using Xunit;

namespace NetServer.Tests.Http;

/// <summary>Header field lines (RFC 9112 section 5) and the head limits, each case fed whole, byte by byte and in random splits.</summary>
public sealed class HttpHeaderFieldTests
{
    private static string Get(string fields) => "GET / HTTP/1.1\r\nHost: a\r\n" + fields + "\r\n";

    [Theory]
    [InlineData("X:b\r\n", "b")]
    [InlineData("X:   b  \t\r\n", "b")]
    [InlineData("X: \t\r\n", "")]
    [InlineData("X:\r\n", "")]
    [InlineData("X: b c\r\n", "b c")]
    [InlineData("X: b\tc\r\n", "b\tc")]
    [InlineData("X: caf\xC3\xA9\r\n", "caf\xC3\xA9")]             // obs-text
    [InlineData("X: \"quoted, list\"; q=0.5\r\n", "\"quoted, list\"; q=0.5")]
    [InlineData("X: a:b:c\r\n", "a:b:c")]                            // only the first colon splits
    [InlineData("!#$%&'*+-.^_`|~09azAZ: v\r\n", "v")]               // every tchar in a name
    public void Field_values_are_trimmed_of_OWS_and_kept_as_sent(string field, string value)
    {
        var outcome = HttpFeed.Request(Get(field));

        Assert.Equal(HttpParseStatus.Complete, outcome.Status);
        var name = field.Substring(0, field.IndexOf(':'));
        Assert.Equal($"Host=a\n{name}={value}\n", outcome.Headers);
    }

    [Theory]
    [InlineData("X Y: z\r\n")]            // space inside a name
    [InlineData("X : z\r\n")]             // space before the colon
    [InlineData("X\t: z\r\n")]            // tab before the colon
    [InlineData(": z\r\n")]               // empty name
    [InlineData("NoColon\r\n")]
    [InlineData("X(: z\r\n")]             // not a tchar
    [InlineData("X\x01: z\r\n")]
    [InlineData("\xC4: z\r\n")]           // non-ASCII name
    [InlineData("X: b\0c\r\n")]           // NUL
    [InlineData("X: b\rc\r\n")]           // bare CR
    [InlineData("X: b\r\r\n")]            // CR CR LF
    [InlineData("X: b\nY: c\r\n")]        // bare LF ends a field line
    [InlineData("X: b\x7F\r\n")]          // DEL
    [InlineData("X: b\u000Bc\r\n")]         // vertical tab
    [InlineData("X: b\u000Cc\r\n")]         // form feed
    [InlineData("X: b\u001Bc\r\n")]         // escape
    [InlineData("X: b\r\n c\r\n")]        // obs-fold with a space
    [InlineData("X: b\r\n\tc\r\n")]       // obs-fold with a tab
    [InlineData("X: b\r\n\n")]            // the empty line is a bare LF
    public void Malformed_field_lines_are_400(string fields)
    {
        var outcome = HttpFeed.Request(Get(fields));

        Assert.Equal(HttpParseStatus.Error, outcome.Status);
        Assert.Equal(400, outcome.ErrorStatus);
    }

    [Theory]
    [InlineData("GET / HTTP/1.1\r\n Host: a\r\n\r\n")]   // whitespace before the first field
    [InlineData("GET / HTTP/1.1\r\n\tHost: a\r\n\r\n")]
    public void Whitespace_between_the_request_line_and_the_first_field_is_400(string raw)
    {
        Assert.Equal(400, HttpFeed.Request(raw).ErrorStatus);
    }

    [Fact]
    public void Fields_keep_their_order_and_duplicates()
    {
        var outcome = HttpFeed.Request(Get("Accept: a\r\nX-B: 1\r\naccept: b\r\n"));

        Assert.Equal("Host=a\nAccept=a\nX-B=1\naccept=b\n", outcome.Headers);
    }

    [Fact]
    public void TryGetHeader_finds_the_first_field_of_a_name_in_any_case()
    {
        var raw = HttpFeed.Bytes(Get("Content-Type: text/plain\r\nX-Two: 1\r\nx-two: 2\r\n"));
        var parser = default(HttpHeadParser);
        var head = new HttpHead();
        Assert.Equal(HttpParseStatus.Complete, parser.ParseRequestHead(raw, new HttpLimits(), head, out var consumed));
        var bytes = raw.AsSpan(0, consumed);

        Assert.True(HttpHeadParser.TryGetHeader(head, bytes, "content-type"u8, out var type));
        Assert.Equal("text/plain", Encoding.ASCII.GetString(type));
        Assert.True(HttpHeadParser.TryGetHeader(head, bytes, "CONTENT-TYPE"u8, out _));
        Assert.True(HttpHeadParser.TryGetHeader(head, bytes, "X-TWO"u8, out var two));
        Assert.Equal("1", Encoding.ASCII.GetString(two));
        Assert.False(HttpHeadParser.TryGetHeader(head, bytes, "Content-Typ"u8, out _));
        Assert.False(HttpHeadParser.TryGetHeader(head, bytes, "Content-Typf"u8, out _));
        Assert.False(HttpHeadParser.TryGetHeader(head, bytes, "X-Tw\r"u8, out _));
    }

    [Fact]
    public void Header_fields_of_exactly_the_total_limit_parse_and_one_byte_more_is_431()
    {
        var limits = new HttpLimits();
        // "Host: a\r\n" (9 bytes) and one field filling the rest of MaxRequestHeadersTotalSize.
        var filler = "X: " + new string('v', limits.MaxRequestHeadersTotalSize - 9 - "X: \r\n".Length) + "\r\n";
        var atLimit = HttpFeed.Request("GET / HTTP/1.1\r\nHost: a\r\n" + filler + "\r\n");
        Assert.Equal(HttpParseStatus.Complete, atLimit.Status);

        var over = HttpFeed.Request("GET / HTTP/1.1\r\nHost: a\r\n" + filler.Insert(3, "v") + "\r\n");
        Assert.Equal(HttpParseStatus.Error, over.Status);
        Assert.Equal(431, over.ErrorStatus);
    }

    [Fact]
    public void Oversized_header_fields_are_431_as_soon_as_the_bytes_cross_the_limit()
    {
        var limits = new HttpLimits { MaxRequestHeadersTotalSize = 100 };
        var bytes = HttpFeed.Bytes("GET / HTTP/1.1\r\nHost: a\r\nX: " + new string('v', 1000));
        var headers = "GET / HTTP/1.1\r\n".Length;
        var parser = default(HttpHeadParser);
        var head = new HttpHead();

        // 99 bytes of field lines (the partial line's LF still to come makes 100): waiting; one more is over.
        Assert.Equal(HttpParseStatus.NeedMoreData, parser.ParseRequestHead(bytes.AsSpan(0, headers + 99), limits, head, out _));
        Assert.Equal(HttpParseStatus.Error, parser.ParseRequestHead(bytes.AsSpan(0, headers + 100), limits, head, out _));
        Assert.Equal(431, parser.Error.Status);
    }

    [Fact]
    public void The_empty_line_and_the_request_line_do_not_count_toward_the_header_total()
    {
        var limits = new HttpLimits { MaxRequestHeadersTotalSize = 9 };
        Assert.Equal(HttpParseStatus.Complete, HttpFeed.Request(HttpFeed.Bytes("GET /long/target HTTP/1.1\r\nHost: a\r\n\r\n"), limits).Status);
        Assert.Equal(431, HttpFeed.Request(HttpFeed.Bytes("GET / HTTP/1.1\r\nHost: ab\r\n\r\n"), limits).ErrorStatus);
    }

    [Theory]
    [InlineData(100, "Complete", 0)]
    [InlineData(101, "Error", 431)]
    public void The_header_count_limit_is_inclusive(int count, string status, int error)
    {
        var fields = string.Concat(Enumerable.Range(1, count - 1).Select(i => $"X-{i}: {i}\r\n"));
        var outcome = HttpFeed.Request(Get(fields));

        Assert.Equal(Enum.Parse<HttpParseStatus>(status), outcome.Status);
        Assert.Equal(error, outcome.ErrorStatus);
    }

    [Fact]
    public void A_configured_header_count_limit_is_applied()
    {
        var limits = new HttpLimits { MaxRequestHeaderCount = 3 };
        Assert.Equal(HttpParseStatus.Complete, HttpFeed.Request(HttpFeed.Bytes(Get("A: 1\r\nB: 2\r\n")), limits).Status);
        Assert.Equal(431, HttpFeed.Request(HttpFeed.Bytes(Get("A: 1\r\nB: 2\r\nC: 3\r\n")), limits).ErrorStatus);
    }

    [Fact]
    public void A_line_error_before_the_limit_is_reported_as_that_error_however_the_bytes_arrive()
    {
        // The second field line is malformed and the third crosses the limit: the first broken rule wins.
        var limits = new HttpLimits { MaxRequestHeadersTotalSize = 40 };
        var outcome = HttpFeed.Request(HttpFeed.Bytes("GET / HTTP/1.1\r\nHost: a\r\nBad Name: x\r\nX: " + new string('v', 100) + "\r\n\r\n"), limits);

        Assert.Equal(400, outcome.ErrorStatus);
    }
}
