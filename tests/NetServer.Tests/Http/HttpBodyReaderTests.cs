using System;
using NetServer.Http;
using Xunit;

namespace NetServer.Tests.Http;

/// <summary>
/// The body reader over Content-Length, chunked (RFC 9112 section 7.1) and until-close bodies,
/// each case fed whole, byte by byte and in random splits; the bytes after a body stay unconsumed.
/// </summary>
public sealed class HttpBodyReaderTests
{
    private const string Next = "GET /next HTTP/1.1\r\n";

    [Theory]
    [InlineData("hello", 5, "hello", 5)]
    [InlineData("hello" + Next, 5, "hello", 5)]
    [InlineData("", 0, "", 0)]
    [InlineData(Next, 0, "", 0)]
    [InlineData("a", 1, "a", 1)]
    public void A_Content_Length_body_is_handed_out_and_the_next_message_left(string raw, long length, string body, int consumed)
    {
        var outcome = HttpFeed.Body(raw, HttpBodyFraming.ContentLength, length);

        Assert.Equal(HttpBodyStatus.Done, outcome.Status);
        Assert.Equal(body, outcome.Body);
        Assert.Equal(consumed, outcome.Consumed);
    }

    [Fact]
    public void A_Content_Length_body_cut_short_waits_for_more()
    {
        var outcome = HttpFeed.Body("hel", HttpBodyFraming.ContentLength, 5);

        Assert.Equal(HttpBodyStatus.NeedMoreData, outcome.Status);
        Assert.Equal("hel", outcome.Body);
    }

    [Fact]
    public void A_Content_Length_over_the_reader_limit_is_413_before_any_byte()
    {
        var outcome = HttpFeed.Body("hello", HttpBodyFraming.ContentLength, 5, maxBodySize: 4);

        Assert.Equal(HttpBodyStatus.Error, outcome.Status);
        Assert.Equal(413, outcome.ErrorStatus);
        Assert.Equal(0, outcome.Consumed);
        Assert.Equal("hello", HttpFeed.Body("hello", HttpBodyFraming.ContentLength, 5, maxBodySize: 5).Body);
    }

    [Fact]
    public void No_body_is_done_at_once_and_consumes_nothing()
    {
        var outcome = HttpFeed.Body(Next, HttpBodyFraming.None);

        Assert.Equal(HttpBodyStatus.Done, outcome.Status);
        Assert.Equal(0, outcome.Consumed);
    }

    [Fact]
    public void An_until_close_body_is_everything_and_never_done()
    {
        var outcome = HttpFeed.Body("all of it\r\n0\r\n\r\n", HttpBodyFraming.UntilClose);

        Assert.Equal(HttpBodyStatus.NeedMoreData, outcome.Status);
        Assert.Equal("all of it\r\n0\r\n\r\n", outcome.Body);
    }

    [Theory]
    [InlineData("5\r\nhello\r\n0\r\n\r\n", "hello")]
    [InlineData("5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n", "hello world")]
    [InlineData("0\r\n\r\n", "")]
    [InlineData("000\r\n\r\n", "")]
    [InlineData("A\r\n0123456789\r\n0\r\n\r\n", "0123456789")]
    [InlineData("a\r\n0123456789\r\n0\r\n\r\n", "0123456789")]
    [InlineData("0005\r\nhello\r\n0\r\n\r\n", "hello")]
    [InlineData("1\r\n\r\r\n1\r\n\n\r\n0\r\n\r\n", "\r\n")]                      // CR and LF as data
    [InlineData("5;name=value\r\nhello\r\n0\r\n\r\n", "hello")]
    [InlineData("5;a;b=c;d=\"e f\"\r\nhello\r\n0;last\r\n\r\n", "hello")]
    [InlineData("5 ;a=b\r\nhello\r\n0\t;x\r\n\r\n", "hello")]                    // BWS before ";"
    [InlineData("5;\r\nhello\r\n0\r\n\r\n", "hello")]
    [InlineData("5;caf\xC3\xA9\r\nhello\r\n0\r\n\r\n", "hello")]
    public void Chunked_bodies_are_decoded_and_extensions_skipped(string raw, string body)
    {
        var outcome = HttpFeed.Body(raw + Next, HttpBodyFraming.Chunked);

        Assert.Equal(HttpBodyStatus.Done, outcome.Status);
        Assert.Equal(body, outcome.Body);
        Assert.Equal("", outcome.Trailers);
        Assert.Equal(raw.Length, outcome.Consumed);
    }

    [Theory]
    [InlineData("0\r\nX-Sum: 1\r\n\r\n", "X-Sum=1\n")]
    [InlineData("0\r\nX-Sum: 1\r\nServer-Timing:  db;dur=53 \r\n\r\n", "X-Sum=1\nServer-Timing=db;dur=53\n")]
    [InlineData("0\r\nContent-Length: 50\r\n\r\n", "Content-Length=50\n")]     // kept, never merged into the head
    [InlineData("3\r\nabc\r\n0;ext\r\nA:\r\n\r\n", "A=\n")]
    public void Trailers_are_parsed_with_the_field_rules_and_handed_over(string raw, string trailers)
    {
        var outcome = HttpFeed.Body(raw + Next, HttpBodyFraming.Chunked);

        Assert.Equal(HttpBodyStatus.Done, outcome.Status);
        Assert.Equal(trailers, outcome.Trailers);
        Assert.Equal(raw.Length, outcome.Consumed);
    }

    [Theory]
    [InlineData("x\r\nhello\r\n0\r\n\r\n", 400)]
    [InlineData("\r\nhello\r\n0\r\n\r\n", 400)]                   // no size
    [InlineData("-5\r\nhello\r\n0\r\n\r\n", 400)]
    [InlineData("+5\r\nhello\r\n0\r\n\r\n", 400)]
    [InlineData("0x5\r\nhello\r\n0\r\n\r\n", 400)]
    [InlineData(" 5\r\nhello\r\n0\r\n\r\n", 400)]                 // leading whitespace
    [InlineData("5 \r\nhello\r\n0\r\n\r\n", 400)]                 // trailing whitespace without an extension
    [InlineData("5_0\r\nhello\r\n0\r\n\r\n", 400)]
    [InlineData("5\nhello\r\n0\r\n\r\n", 400)]                    // bare LF after the size
    [InlineData("5\rhello\r\n0\r\n\r\n", 400)]                    // bare CR after the size
    [InlineData("5\r\nhelloX\r\n0\r\n\r\n", 400)]                 // data longer than the size
    [InlineData("5\r\nhell\r\n0\r\n\r\n", 400)]                   // data shorter than the size
    [InlineData("5\r\nhello\n0\r\n\r\n", 400)]                    // bare LF after the data
    [InlineData("5\r\nhello\r0\r\n\r\n", 400)]                    // bare CR after the data
    [InlineData("5\r\nhelloX\n0\r\n\r\n", 400)]                   // another byte where the CR goes
    [InlineData("5\r\nhello\n\n0\r\n\r\n", 400)]
    [InlineData("5;a\x01\r\nhello\r\n0\r\n\r\n", 400)]            // control byte in an extension
    [InlineData("5;a\nhello\r\n0\r\n\r\n", 400)]                  // bare LF ends an extension
    [InlineData("5;a\rb\r\nhello\r\n0\r\n\r\n", 400)]             // bare CR in an extension
    [InlineData("5;a\0\r\nhello\r\n0\r\n\r\n", 400)]
    [InlineData("10000000000000000\r\n", 400)]                      // 2^64
    [InlineData("8000000000000000\r\n", 400)]                       // 2^63
    [InlineData("FFFFFFFFFFFFFFFFF\r\n", 400)]
    [InlineData("0\r\nX : y\r\n\r\n", 400)]                         // trailer field rules
    [InlineData("0\r\nX: y\r\n z\r\n\r\n", 400)]
    [InlineData("0\r\nX: y\n\r\n", 400)]
    [InlineData("0\r\nX: y\0\r\n\r\n", 400)]
    [InlineData("0\r\nNoColon\r\n\r\n", 400)]
    [InlineData("0\r\n\n", 400)]
    public void Malformed_chunked_bodies_are_refused(string raw, int status)
    {
        var outcome = HttpFeed.Body(raw, HttpBodyFraming.Chunked);

        Assert.Equal(HttpBodyStatus.Error, outcome.Status);
        Assert.Equal(status, outcome.ErrorStatus);
    }

    [Fact]
    public void The_largest_chunk_size_is_accepted_when_there_is_no_body_limit()
    {
        var outcome = HttpFeed.Body("7FFFFFFFFFFFFFFF\r\nabc", HttpBodyFraming.Chunked);

        Assert.Equal(HttpBodyStatus.NeedMoreData, outcome.Status);
        Assert.Equal("abc", outcome.Body);
    }

    [Theory]
    [InlineData("5\r\nhello\r\n5\r\nworld\r\n0\r\n\r\n", 10, "Done", 0)]
    [InlineData("5\r\nhello\r\n6\r\nworld!\r\n0\r\n\r\n", 10, "Error", 413)]
    [InlineData("B\r\nhello world\r\n0\r\n\r\n", 10, "Error", 413)]
    public void A_chunked_body_over_the_limit_is_413_when_the_chunk_that_crosses_it_is_announced(string raw, long max, string status, int error)
    {
        var outcome = HttpFeed.Body(raw, HttpBodyFraming.Chunked, maxBodySize: max);

        Assert.Equal(Enum.Parse<HttpBodyStatus>(status), outcome.Status);
        Assert.Equal(error, outcome.ErrorStatus);
    }

    [Fact]
    public void A_413_chunk_hands_out_none_of_its_bytes()
    {
        var outcome = HttpFeed.Body("5\r\nhello\r\n6\r\nworld!\r\n0\r\n\r\n", HttpBodyFraming.Chunked, maxBodySize: 10);

        Assert.Equal("hello", outcome.Body);
    }

    [Fact]
    public void Chunk_extensions_are_bounded_per_line_and_per_body()
    {
        var limits = new HttpLimits { MaxRequestLineSize = 32, MaxRequestHeadersTotalSize = 40 };
        // A size line of 32 bytes with its CR (the LF is not counted) is the most.
        var ext30 = new string('e', 29);
        Assert.Equal(HttpBodyStatus.Done, HttpFeed.Body($"1;{ext30}\r\nx\r\n0\r\n\r\n", HttpBodyFraming.Chunked, limits: limits).Status);
        Assert.Equal(400, HttpFeed.Body($"1;{ext30}e\r\nx\r\n0\r\n\r\n", HttpBodyFraming.Chunked, limits: limits).ErrorStatus);

        // Each line fits, but the extensions of the whole body add up to more than 40 bytes.
        var ext20 = new string('e', 20);
        Assert.Equal(HttpBodyStatus.Done, HttpFeed.Body($"1;{ext20}\r\nx\r\n1;{ext20.Substring(2)}\r\ny\r\n0\r\n\r\n", HttpBodyFraming.Chunked, limits: limits).Status);
        Assert.Equal(400, HttpFeed.Body($"1;{ext20}\r\nx\r\n1;{ext20}e\r\ny\r\n0\r\n\r\n", HttpBodyFraming.Chunked, limits: limits).ErrorStatus);
    }

    [Fact]
    public void Leading_zeros_cannot_make_a_size_line_unbounded()
    {
        var limits = new HttpLimits { MaxRequestLineSize = 32 };
        var outcome = HttpFeed.Body(new string('0', 100) + "5\r\nhello\r\n0\r\n\r\n", HttpBodyFraming.Chunked, limits: limits);

        Assert.Equal(400, outcome.ErrorStatus);
    }

    [Fact]
    public void Trailers_are_bounded_by_the_header_limits()
    {
        var limits = new HttpLimits { MaxRequestHeadersTotalSize = 20, MaxRequestHeaderCount = 2 };
        Assert.Equal("A=123456789012345\n", HttpFeed.Body("0\r\nA: 123456789012345\r\n\r\n", HttpBodyFraming.Chunked, limits: limits).Trailers);
        Assert.Equal(431, HttpFeed.Body("0\r\nA: 1234567890123456\r\n\r\n", HttpBodyFraming.Chunked, limits: limits).ErrorStatus);
        Assert.Equal(431, HttpFeed.Body("0\r\nA: 1\r\nB: 2\r\nC: 3\r\n\r\n", HttpBodyFraming.Chunked, limits: limits).ErrorStatus);

        // An endless trailer is refused once it crosses the limit, before its line ends.
        Assert.Equal(431, HttpFeed.Body("0\r\nA: " + new string('v', 100), HttpBodyFraming.Chunked, limits: limits).ErrorStatus);
    }

    [Fact]
    public void Trailer_bytes_stay_unconsumed_until_the_section_is_whole()
    {
        var trailers = new HttpHead();
        var reader = new HttpBodyReader(HttpBodyFraming.Chunked, -1, null, new HttpLimits(), trailers);
        var bytes = HttpFeed.Bytes("2\r\nhi\r\n0\r\nX: 1\r\n");

        Assert.Equal(HttpBodyStatus.Data, reader.Read(bytes, out var data, out var consumed));
        Assert.Equal("hi", HttpFeed.Text(data));
        Assert.Equal(5, consumed);
        // The CRLF after the data and the last chunk's line are consumed; the trailer line waits for the empty line.
        Assert.Equal(HttpBodyStatus.NeedMoreData, reader.Read(bytes.AsSpan(5), out _, out consumed));
        Assert.Equal(5, consumed);
        Assert.False(reader.IsDone);
        var rest = HttpFeed.Bytes("X: 1\r\n\r\nGET");
        Assert.Equal(HttpBodyStatus.Done, reader.Read(rest, out data, out consumed));
        Assert.Equal(8, consumed);
        Assert.Equal("X: 1\r\n", HttpFeed.Text(data));
        Assert.Equal(1, trailers.HeaderCount);
        Assert.True(reader.IsDone);
        Assert.Equal(HttpBodyStatus.Done, reader.Read(rest.AsSpan(8), out _, out consumed));
        Assert.Equal(0, consumed);
    }

    [Fact]
    public void A_chunked_body_split_everywhere_gives_the_same_bytes_and_trailers()
    {
        // Many chunks of every size from 1 to 300 with and without extensions, then trailers.
        var expected = new System.Text.StringBuilder();
        var raw = new System.Text.StringBuilder();
        for (var size = 1; size <= 300; size += 7)
        {
            var data = new string((char)('a' + (size % 26)), size);
            expected.Append(data);
            raw.Append(size.ToString("x", System.Globalization.CultureInfo.InvariantCulture));
            if (size % 3 == 0)
                raw.Append(";n=").Append(size);
            raw.Append("\r\n").Append(data).Append("\r\n");
        }

        raw.Append("0\r\nChecksum: abc\r\nX-Count: 43\r\n\r\n");
        var outcome = HttpFeed.Body(raw + Next, HttpBodyFraming.Chunked);

        Assert.Equal(HttpBodyStatus.Done, outcome.Status);
        Assert.Equal(expected.ToString(), outcome.Body);
        Assert.Equal("Checksum=abc\nX-Count=43\n", outcome.Trailers);
        Assert.Equal(raw.Length, outcome.Consumed);
    }

    [Fact]
    public void A_body_without_trailer_target_still_checks_trailers()
    {
        var reader = new HttpBodyReader(HttpBodyFraming.Chunked, -1, null, new HttpLimits(), trailers: null);
        Assert.Equal(HttpBodyStatus.Done, reader.Read(HttpFeed.Bytes("0\r\nA: 1\r\n\r\n"), out _, out var consumed));
        Assert.Equal(11, consumed);

        reader = new HttpBodyReader(HttpBodyFraming.Chunked, -1, null, new HttpLimits(), trailers: null);
        Assert.Equal(HttpBodyStatus.Error, reader.Read(HttpFeed.Bytes("0\r\nA : 1\r\n\r\n"), out _, out _));
        Assert.Equal(400, reader.Error.Status);
    }

    [Fact]
    public void Data_is_a_slice_of_the_input_not_a_copy()
    {
        var reader = new HttpBodyReader(HttpBodyFraming.Chunked, -1, null, new HttpLimits(), null);
        var bytes = HttpFeed.Bytes("5\r\nhello\r\n");

        reader.Read(bytes, out var data, out _);

        Assert.True(System.Runtime.CompilerServices.Unsafe.AreSame(ref System.Runtime.InteropServices.MemoryMarshal.GetReference(data), ref bytes[3]));
    }
}
