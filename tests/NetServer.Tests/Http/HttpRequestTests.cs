using System;
using System.Text;
using System.Threading.Tasks;
using NetServer.Http;
using NetServer.Tests.Infrastructure;
using Xunit;

namespace NetServer.Tests.Http;

public class HttpRequestTests
{
    private static string Wire(HttpRequest request) => Encoding.UTF8.GetString(request.Cache.Data, 0, (int)request.Cache.Size);

    [Fact]
    public void MakeGetRequest_writes_the_request_line_and_an_empty_body()
    {
        var request = new HttpRequest().MakeGetRequest("/index.html");
        Assert.Equal("GET /index.html HTTP/1.1\r\nContent-Length: 0\r\n\r\n", Wire(request));
        Assert.Same("GET", request.Method);
        Assert.Equal("/index.html", request.Url);
        Assert.Equal("HTTP/1.1", request.Protocol);
        Assert.Equal(1, request.Headers);
        Assert.Equal(("Content-Length", "0"), request.Header(0));
        Assert.Equal(0, request.BodyLength);
        Assert.Equal(string.Empty, request.Body);
    }

    [Theory]
    [InlineData("HEAD")]
    [InlineData("DELETE")]
    [InlineData("OPTIONS")]
    [InlineData("TRACE")]
    public void The_other_bodiless_requests_differ_only_by_method(string method)
    {
        var request = new HttpRequest();
        _ = method switch
        {
            "HEAD" => request.MakeHeadRequest("/a"),
            "DELETE" => request.MakeDeleteRequest("/a"),
            "OPTIONS" => request.MakeOptionsRequest("/a"),
            _ => request.MakeTraceRequest("/a"),
        };
        Assert.Equal(method + " /a HTTP/1.1\r\nContent-Length: 0\r\n\r\n", Wire(request));
        Assert.Equal(method, request.Method);
    }

    [Fact]
    public void MakePostRequest_with_text_sends_it_as_UTF8_with_its_byte_length()
    {
        var request = new HttpRequest().MakePostRequest("/api", "héllo");
        Assert.Equal("POST /api HTTP/1.1\r\nContent-Type: text/plain; charset=UTF-8\r\nContent-Length: 6\r\n\r\nhéllo", Wire(request));
        Assert.Equal("héllo", request.Body);
        Assert.Equal(6, request.BodyLength);
        Assert.Equal(Encoding.UTF8.GetBytes("héllo"), request.BodyBytes);

        request.MakePutRequest("/api", "x".AsSpan(), "application/json");
        Assert.Equal("PUT /api HTTP/1.1\r\nContent-Type: application/json\r\nContent-Length: 1\r\n\r\nx", Wire(request));
    }

    [Fact]
    public void Binary_posts_and_puts_have_no_content_type_unless_given()
    {
        var request = new HttpRequest().MakePostRequest("/b", new byte[] { 1, 2, 3 });
        Assert.Equal("POST /b HTTP/1.1\r\nContent-Length: 3\r\n\r\n\x01\x02\x03", Wire(request));
        Assert.Equal(new byte[] { 1, 2, 3 }, request.BodySpan.ToArray());

        request.MakePutRequest("/b", new byte[] { 9 }.AsSpan(), "application/octet-stream");
        Assert.Equal("PUT /b HTTP/1.1\r\nContent-Type: application/octet-stream\r\nContent-Length: 1\r\n\r\n\x09", Wire(request));
    }

    [Fact]
    public void Headers_and_cookies_go_on_the_wire_in_the_order_set()
    {
        var request = new HttpRequest("POST", "/form")
            .SetHeader("Host", "example.com")
            .SetCookie("session", "abc")
            .AddCookie("theme", "dark")
            .SetHeader("Accept", "*/*")
            .AddCookie("lang", "en")
            .SetBody("a=1");

        Assert.Equal(
            "POST /form HTTP/1.1\r\n" +
            "Host: example.com\r\n" +
            "Cookie: session=abc; theme=dark\r\n" +
            "Accept: */*\r\n" +
            "Cookie: lang=en\r\n" +
            "Content-Length: 3\r\n" +
            "\r\n" +
            "a=1",
            Wire(request));
        Assert.Equal(5, request.Headers);
        Assert.Equal(("Cookie", "session=abc; theme=dark"), request.Header(1));
        Assert.Equal(3, request.Cookies);
        Assert.Equal(("session", "abc"), request.Cookie(0));
        Assert.Equal(("theme", "dark"), request.Cookie(1));
        Assert.Equal(("lang", "en"), request.Cookie(2));
        Assert.Equal((string.Empty, string.Empty), request.Cookie(3));
        Assert.Equal((string.Empty, string.Empty), request.Header(5));
        Assert.Equal((string.Empty, string.Empty), request.Header(-1));
    }

    [Fact]
    public void The_builder_hands_back_the_strings_it_was_given()
    {
        var url = "/path?x=" + 42;
        var body = "payload " + 7;
        var request = new HttpRequest("GET", url).SetBody(body);
        Assert.Same(url, request.Url);
        Assert.Same(body, request.Body);
        Assert.Same(request.BodyBytes, request.BodyBytes);
    }

    [Fact]
    public void SetBodyLength_ends_the_head_for_a_body_sent_later()
    {
        var request = new HttpRequest("PUT", "/upload").SetBodyLength(1000);
        Assert.Equal("PUT /upload HTTP/1.1\r\nContent-Length: 1000\r\n\r\n", Wire(request));
        Assert.Equal(1000, request.BodyLength);
        Assert.True(request.BodySpan.IsEmpty);
        Assert.Equal(request.Cache.Size, request.Store.HeadLength);
        Assert.Throws<ArgumentOutOfRangeException>(() => new HttpRequest("PUT", "/").SetBodyLength(-1));
    }

    [Theory]
    [InlineData("X-Evil", "a\r\nInjected: 1")]
    [InlineData("X-Evil", "a\nb")]
    [InlineData("X-Evil", "a\rb")]
    [InlineData("X-Evil", "a\0b")]
    [InlineData("X-Evil", "a\x1b")]
    [InlineData("X-Evil\r\nInjected", "1")]
    [InlineData("Bad Name", "1")]
    [InlineData("Bad:Name", "1")]
    [InlineData("", "1")]
    public void Header_injection_is_refused_and_leaves_the_request_unchanged(string name, string value)
    {
        var request = new HttpRequest("GET", "/").SetHeader("Host", "h");
        var before = Wire(request);
        Assert.ThrowsAny<ArgumentException>(() => request.SetHeader(name, value));
        Assert.Equal(before, Wire(request));
        Assert.Equal(1, request.Headers);
    }

    [Theory]
    [InlineData("GET", "/a b", "HTTP/1.1")]
    [InlineData("GET", "/a\r\nX: 1", "HTTP/1.1")]
    [InlineData("GET", "", "HTTP/1.1")]
    [InlineData("GE T", "/", "HTTP/1.1")]
    [InlineData("GET\n", "/", "HTTP/1.1")]
    [InlineData("GET", "/", "HTTP/1.1\r\nX: 1")]
    public void A_request_line_that_would_break_is_refused(string method, string url, string protocol)
    {
        Assert.ThrowsAny<ArgumentException>(() => new HttpRequest(method, url, protocol));
        Assert.Throws<ArgumentNullException>(() => new HttpRequest().SetBegin(null!, "/"));
    }

    [Theory]
    [InlineData("a", "1;Path=/")]
    [InlineData("a=b", "1")]
    [InlineData("a", "1\r\nX: 1")]
    [InlineData("", "1")]
    public void Cookies_that_would_add_attributes_or_lines_are_refused(string name, string value)
    {
        var request = new HttpRequest("GET", "/").SetCookie("ok", "1");
        var before = Wire(request);
        Assert.ThrowsAny<ArgumentException>(() => request.SetCookie(name, value));
        Assert.ThrowsAny<ArgumentException>(() => request.AddCookie(name, value));
        Assert.Equal(before, Wire(request));
    }

    [Fact]
    public void Headers_before_the_request_line_or_after_the_body_are_refused()
    {
        Assert.Throws<InvalidOperationException>(() => new HttpRequest().SetHeader("Host", "h"));
        Assert.Throws<InvalidOperationException>(() => new HttpRequest().SetBody("x"));
        var request = new HttpRequest("GET", "/").SetBody("x");
        Assert.Throws<InvalidOperationException>(() => request.SetHeader("Host", "h"));
        Assert.Throws<InvalidOperationException>(() => request.SetBody("again"));
        Assert.Throws<InvalidOperationException>(() => request.AddCookie("a", "1"));
    }

    [Fact]
    public void A_Content_Length_of_the_application_replaces_the_written_one()
    {
        var request = new HttpRequest("POST", "/").SetHeader("Content-Length", "5").SetBody("hello");
        Assert.Equal("POST / HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello", Wire(request));
        Assert.Equal(5, request.BodyLength);

        Assert.ThrowsAny<ArgumentException>(() => new HttpRequest("POST", "/").SetHeader("Content-Length", "5x"));
        Assert.Throws<InvalidOperationException>(() => new HttpRequest("POST", "/").SetHeader("Content-Length", "5").SetHeader("content-length", "6"));
        Assert.Throws<InvalidOperationException>(() => new HttpRequest("POST", "/").SetHeader("Content-Length", "5").SetHeader("Transfer-Encoding", "chunked"));
        Assert.Throws<InvalidOperationException>(() => new HttpRequest("POST", "/").SetHeader("Transfer-Encoding", "chunked").SetHeader("Content-Length", "5"));
    }

    [Fact]
    public void A_chunked_request_carries_its_body_as_one_chunk_and_the_last_chunk()
    {
        var request = new HttpRequest("POST", "/").SetHeader("Transfer-Encoding", "gzip, chunked").SetBody("hello world, 16 b");
        Assert.Equal("POST / HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n11\r\nhello world, 16 b\r\n0\r\n\r\n", Wire(request));
        Assert.True(request.Store.IsChunked);
        Assert.Equal("hello world, 16 b", request.Body);
        Assert.Equal(17, request.BodyLength);

        var empty = new HttpRequest("POST", "/").SetHeader("Transfer-Encoding", "chunked").SetBody();
        Assert.Equal("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", Wire(empty));

        // Only a final "chunked" coding frames the body.
        Assert.False(new HttpRequest("POST", "/").SetHeader("Transfer-Encoding", "chunked, gzip").Store.IsChunked);
        Assert.False(new HttpRequest("POST", "/").SetHeader("Transfer-Encoding", "notchunked").Store.IsChunked);
    }

    [Fact]
    public void Clear_forgets_everything()
    {
        var request = new HttpRequest("GET", "/x").SetHeader("A", "b").SetBody("c");
        Assert.False(request.IsEmpty);
        request.Clear();
        Assert.True(request.IsEmpty);
        Assert.Equal(string.Empty, request.Method);
        Assert.Equal(string.Empty, request.Url);
        Assert.Equal(string.Empty, request.Protocol);
        Assert.Equal(0, request.Headers);
        Assert.Equal(0, request.Cookies);
        Assert.Equal(string.Empty, request.Body);
        Assert.Equal(0, request.BodyLength);
        Assert.False(request.IsErrorSet);
    }

    [Fact]
    public void A_loaded_head_reads_as_the_request_it_describes()
    {
        const string Head = "GET /index.html?x=1 HTTP/1.1\r\nHost: example.com\r\nCookie: a=1; b = 2 ;c=\"q\"; novalue\r\nUser-Agent: test/1.0\r\n\r\n";
        var request = TestHeads.LoadRequest(Head);

        Assert.False(request.IsEmpty);
        Assert.Same("GET", request.Method);
        Assert.Equal("/index.html?x=1", request.Url);
        Assert.Equal("HTTP/1.1", request.Protocol);
        Assert.Equal(3, request.Headers);
        Assert.Equal(("Host", "example.com"), request.Header(0));
        Assert.Equal(("User-Agent", "test/1.0"), request.Header(2));
        Assert.Equal(3, request.Cookies);
        Assert.Equal(("a", "1"), request.Cookie(0));
        Assert.Equal(("b", "2"), request.Cookie(1));
        Assert.Equal(("c", "\"q\""), request.Cookie(2));
        Assert.Equal(Head, Wire(request));
        Assert.Equal(0, request.BodyLength);
        Assert.True(request.MethodBytes.SequenceEqual("GET"u8));
        Assert.True(request.TargetBytes.SequenceEqual("/index.html?x=1"u8));
    }

    [Fact]
    public void Strings_are_made_once_per_request_and_reused_when_the_next_request_repeats_them()
    {
        var (bytes, head) = TestHeads.Request("GET /same HTTP/1.1\r\nHost: h\r\nX-Id: 1\r\n\r\n");
        var request = new HttpRequest();
        request.LoadHead(bytes, head);
        var url = request.Url;
        var host = request.Header(0).Item2;
        var id = request.Header(1);
        Assert.Same(url, request.Url);
        Assert.Same(host, request.Header(0).Item2);
        Assert.Same("Host", request.Header(0).Item1); // a common name: the constant
        Assert.Equal("X-Id", id.Item1);

        request.LoadHead(bytes, head);
        Assert.Same(url, request.Url);
        Assert.Same(host, request.Header(0).Item2);
        Assert.Same(id.Item1, request.Header(1).Item1);

        var (other, otherHead) = TestHeads.Request("GET /else HTTP/1.1\r\nHost: h\r\nX-Id: 2\r\n\r\n");
        request.LoadHead(other, otherHead);
        Assert.Equal("/else", request.Url);
        Assert.Same(host, request.Header(0).Item2);
        Assert.Equal(("X-Id", "2"), request.Header(1));
    }

    [Theory]
    [InlineData("GET")]
    [InlineData("POST")]
    [InlineData("PUT")]
    [InlineData("DELETE")]
    [InlineData("HEAD")]
    [InlineData("OPTIONS")]
    [InlineData("TRACE")]
    [InlineData("PATCH")]
    [InlineData("CONNECT")]
    public void Standard_methods_are_the_interned_constants(string method)
    {
        var request = TestHeads.LoadRequest(method + " / HTTP/1.1\r\n\r\n");
        Assert.Same(string.IsInterned(method), request.Method);
    }

    [Fact]
    public void Other_methods_are_decoded()
    {
        var request = TestHeads.LoadRequest("PURGE / HTTP/1.1\r\n\r\n");
        Assert.Equal("PURGE", request.Method);
        Assert.Equal("get", TestHeads.LoadRequest("get / HTTP/1.1\r\n\r\n").Method); // methods are case-sensitive
    }

    [Fact]
    public void TryGetHeader_finds_the_first_field_in_any_case()
    {
        var request = TestHeads.LoadRequest("GET / HTTP/1.1\r\nhost: one\r\nAccept: */*\r\nHOST: two\r\n\r\n");
        Assert.True(request.TryGetHeader("Host", out var host));
        Assert.Equal("one", host);
        Assert.False(request.TryGetHeader("Hos", out var missing));
        Assert.Equal(string.Empty, missing);
        Assert.True(request.TryGetHeader("accept"u8, out var accept));
        Assert.True(accept.SequenceEqual("*/*"u8));
        Assert.False(request.TryGetHeader("Cookie"u8, out var none));
        Assert.True(none.IsEmpty);
        Assert.Throws<ArgumentNullException>(() => request.TryGetHeader((string)null!, out _));
    }

    [Fact]
    public void A_received_body_accumulates_up_to_the_limit()
    {
        var request = TestHeads.LoadRequest("POST /p HTTP/1.1\r\nContent-Length: 11\r\n\r\n");
        Assert.Equal(11, request.BodyLength);
        Assert.True(request.AppendBody("hello "u8, 11));
        Assert.Equal("hello ", request.Body);
        Assert.True(request.AppendBody("world"u8, 11));
        Assert.Equal("hello world", request.Body);
        Assert.False(request.AppendBody("!"u8, 11));
        Assert.Equal("hello world", request.Body);
        Assert.Equal("hello world"u8.ToArray(), request.BodyBytes);
        Assert.True(request.BodySpan.SequenceEqual("hello world"u8));
        Assert.EndsWith("\r\n\r\nhello world", Wire(request), StringComparison.Ordinal);
        Assert.Equal(HttpBodyFraming.ContentLength, request.Store.Framing);
    }

    [Fact]
    public void A_chunked_body_counts_what_arrived_and_keeps_its_trailers()
    {
        var request = TestHeads.LoadRequest("POST /p HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n");
        Assert.True(request.AppendBody("abc"u8, 100));
        Assert.True(request.AppendBody("de"u8, 100));
        Assert.Equal(5, request.BodyLength);
        Assert.Equal(0, request.Trailers);

        var fields = "Checksum: 1234\r\nX-Done: yes\r\n"u8;
        request.SetTrailers(fields, [new HttpHeaderRange(new HttpRange(0, 8), new HttpRange(10, 4)), new HttpHeaderRange(new HttpRange(16, 6), new HttpRange(24, 3))]);
        Assert.Equal(2, request.Trailers);
        Assert.Equal(("Checksum", "1234"), request.Trailer(0));
        Assert.Equal(("X-Done", "yes"), request.Trailer(1));
        Assert.Equal((string.Empty, string.Empty), request.Trailer(2));
        Assert.Equal("abcde", request.Body);

        request.LoadHead(TestHeads.Request("GET / HTTP/1.1\r\n\r\n").Bytes, TestHeads.Request("GET / HTTP/1.1\r\n\r\n").Head);
        Assert.Equal(0, request.Trailers);
    }

    [Fact]
    public void A_body_needs_a_head()
    {
        Assert.Throws<InvalidOperationException>(() => new HttpRequest().AppendBody("x"u8, 10));
    }

    [Fact]
    public async Task Body_storage_grows_no_further_than_the_limit_needs()
    {
        var pool = new LeakCheckingBufferPool();
        var request = new HttpRequest(pool);
        var (bytes, head) = TestHeads.Request("POST / HTTP/1.1\r\nContent-Length: 100000\r\n\r\n");
        request.LoadHead(bytes, head);
        Assert.True(request.AppendBody(new byte[50_000], 100_000));
        Assert.True(request.AppendBody(new byte[40_000], 100_000));
        Assert.Equal(bytes.Length + 100_000, request.Cache.Capacity); // doubling stopped at head + limit
        Assert.False(request.AppendBody(new byte[10_001], 100_000));
        Assert.True(request.AppendBody(new byte[10_000], 100_000));
        Assert.Equal(bytes.Length + 100_000, request.Cache.Capacity);
        request.Release();
        await pool.AssertAllReturnedAsync();
    }

    [Fact]
    public async Task A_large_body_goes_back_to_the_pool_when_the_request_is_cleared()
    {
        var pool = new LeakCheckingBufferPool();
        var request = new HttpRequest(pool);
        var (bytes, head) = TestHeads.Request("POST /upload HTTP/1.1\r\nContent-Length: 1048576\r\n\r\n");
        request.LoadHead(bytes, head);
        var chunk = new byte[64 * 1024];
        for (var i = 0; i < 16; i++)
        {
            chunk.AsSpan().Fill((byte)i);
            Assert.True(request.AppendBody(chunk, 2 * 1024 * 1024));
        }

        Assert.Equal(1024 * 1024, request.BodySpan.Length);
        Assert.Equal(15, request.BodySpan[^1]);
        Assert.True(pool.OutstandingBytes >= 1024 * 1024);

        // The next request on the connection starts small again.
        request.LoadHead(TestHeads.Request("GET / HTTP/1.1\r\n\r\n").Bytes, TestHeads.Request("GET / HTTP/1.1\r\n\r\n").Head);
        Assert.True(request.Cache.Capacity <= HttpMessageStore.KeptCapacity);
        Assert.True(pool.OutstandingBytes <= HttpMessageStore.KeptCapacity);
        Assert.Equal("/", request.Url);

        // So does a cleared one; a small one keeps its storage.
        Assert.True(request.AppendBody(new byte[100_000], 200_000));
        request.Clear();
        Assert.Equal(0, request.Cache.Capacity);
        request.LoadHead(bytes, head);
        var small = request.Cache.Data;
        request.Clear();
        Assert.Same(small, request.Cache.Data);

        request.Release();
        await pool.AssertAllReturnedAsync();
    }

    [Fact]
    public void ToString_dumps_the_request()
    {
        var text = new HttpRequest("POST", "/t").SetHeader("Host", "h").SetBody("body").ToString();
        Assert.Contains("Request method: POST", text, StringComparison.Ordinal);
        Assert.Contains("Request URL: /t", text, StringComparison.Ordinal);
        Assert.Contains("Host : h", text, StringComparison.Ordinal);
        Assert.Contains("Request body: 4", text, StringComparison.Ordinal);
        Assert.Contains("body", text, StringComparison.Ordinal);
    }
}
