using System;
using System.Text;
using Xunit;

namespace NetServer.Tests.Http;

public class HttpResponseTests
{
    private static string Wire(HttpResponse response) => Encoding.UTF8.GetString(response.Cache.Data, 0, (int)response.Cache.Size);

    [Fact]
    public void MakeGetResponse_with_text_sets_the_type_and_the_UTF8_body()
    {
        var response = new HttpResponse().MakeGetResponse("héllo");
        Assert.Equal("HTTP/1.1 200 OK\r\nContent-Type: text/plain; charset=UTF-8\r\nContent-Length: 6\r\n\r\nhéllo", Wire(response));
        Assert.Equal(200, response.Status);
        Assert.Equal("OK", response.StatusPhrase);
        Assert.Equal("HTTP/1.1", response.Protocol);
        Assert.Equal(2, response.Headers);
        Assert.Equal(("Content-Type", "text/plain; charset=UTF-8"), response.Header(0));
        Assert.Equal(("Content-Length", "6"), response.Header(1));
        Assert.Equal("héllo", response.Body);
        Assert.Equal(6, response.BodyLength);
        Assert.True(response.BodySpan.SequenceEqual(Encoding.UTF8.GetBytes("héllo")));
    }

    [Fact]
    public void MakeGetResponse_with_bytes_has_no_type_unless_given()
    {
        var content = Encoding.ASCII.GetBytes("{\"a\":1}");
        var response = new HttpResponse().MakeGetResponse(content);
        Assert.Equal("HTTP/1.1 200 OK\r\nContent-Length: 7\r\n\r\n{\"a\":1}", Wire(response));
        Assert.Equal(content, response.BodyBytes);

        response.MakeGetResponse(content.AsSpan(), "application/json");
        Assert.Equal("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 7\r\n\r\n{\"a\":1}", Wire(response));

        response.MakeGetResponse("x".AsSpan());
        Assert.Equal("HTTP/1.1 200 OK\r\nContent-Type: text/plain; charset=UTF-8\r\nContent-Length: 1\r\n\r\nx", Wire(response));

        response.MakeGetResponse();
        Assert.Equal("HTTP/1.1 200 OK\r\nContent-Type: text/plain; charset=UTF-8\r\nContent-Length: 0\r\n\r\n", Wire(response));
    }

    [Fact]
    public void The_other_makers_produce_NetCoreServers_messages()
    {
        var response = new HttpResponse();
        Assert.Equal("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", Wire(response.MakeHeadResponse()));
        Assert.Equal("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", Wire(response.MakeOkResponse()));
        // RFC 9110 8.6: no Content-Length in a 204 (or 1xx) answer; NetCoreServer wrote "Content-Length: 0".
        Assert.Equal("HTTP/1.1 204 No Content\r\n\r\n", Wire(response.MakeOkResponse(204)));
        Assert.Equal("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n", Wire(response.SetBegin(101).SetHeader("Upgrade", "websocket").SetBody()));
        Assert.Equal(
            "HTTP/1.1 500 Internal Server Error\r\nContent-Type: text/plain; charset=UTF-8\r\nContent-Length: 0\r\n\r\n",
            Wire(response.MakeErrorResponse()));
        Assert.Equal(
            "HTTP/1.1 500 Internal Server Error\r\nContent-Type: text/plain; charset=UTF-8\r\nContent-Length: 4\r\n\r\noops",
            Wire(response.MakeErrorResponse("oops")));
        Assert.Equal(
            "HTTP/1.1 404 Not Found\r\nContent-Type: text/html\r\nContent-Length: 4\r\n\r\nnope",
            Wire(response.MakeErrorResponse(404, "nope", "text/html")));
        Assert.Equal("HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n", Wire(response.MakeErrorResponse(404, string.Empty, string.Empty)));
        Assert.Equal(
            "HTTP/1.1 200 OK\r\nAllow: HEAD,GET,POST,PUT,DELETE,OPTIONS,TRACE\r\nContent-Length: 0\r\n\r\n",
            Wire(response.MakeOptionsResponse()));
        Assert.Equal("HTTP/1.1 200 OK\r\nAllow: GET\r\nContent-Length: 0\r\n\r\n", Wire(response.MakeOptionsResponse("GET")));
        Assert.Equal("HTTP/1.1 200 OK\r\nContent-Type: message/http\r\nContent-Length: 2\r\n\r\nhi", Wire(response.MakeTraceResponse("hi")));
        Assert.Equal("HTTP/1.1 200 OK\r\nContent-Type: message/http\r\nContent-Length: 2\r\n\r\nhi", Wire(response.MakeTraceResponse("hi".AsSpan())));
        Assert.Equal("HTTP/1.1 200 OK\r\nContent-Type: message/http\r\nContent-Length: 1\r\n\r\n\x07", Wire(response.MakeTraceResponse(new byte[] { 7 })));
    }

    [Fact]
    public void MakeTraceResponse_echoes_a_request_as_received()
    {
        var request = TestHeads.LoadRequest("TRACE /t HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\n\r\n");
        Assert.True(request.AppendBody("abc"u8, 3));
        var response = new HttpResponse().MakeTraceResponse(request);
        const string Echo = "TRACE /t HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\n\r\nabc";
        Assert.Equal("HTTP/1.1 200 OK\r\nContent-Type: message/http\r\nContent-Length: 52\r\n\r\n" + Echo, Wire(response));
        Assert.Equal(Echo, response.Body);

        var built = new HttpRequest().MakeGetRequest("/b");
        Assert.EndsWith("\r\n\r\nGET /b HTTP/1.1\r\nContent-Length: 0\r\n\r\n", Wire(new HttpResponse().MakeTraceResponse(built)), StringComparison.Ordinal);
    }

    [Fact]
    public void SetBegin_writes_the_status_line()
    {
        Assert.Equal("HTTP/1.0 299 Custom phrase\r\n", Wire(new HttpResponse(299, "Custom phrase", "HTTP/1.0")));
        Assert.Equal("HTTP/1.1 599 Unknown\r\n", Wire(new HttpResponse(599)));
        Assert.Equal("HTTP/1.1 100 \r\n", Wire(new HttpResponse().SetBegin(100, string.Empty, "HTTP/1.1")));
        var response = new HttpResponse(404, "HTTP/1.0");
        Assert.Equal(404, response.Status);
        Assert.Equal("Not Found", response.StatusPhrase);
        Assert.Equal("HTTP/1.0", response.Protocol);
    }

    [Theory]
    [InlineData(99)]
    [InlineData(1000)]
    [InlineData(-200)]
    public void A_status_without_three_digits_is_refused(int status)
    {
        Assert.Throws<ArgumentOutOfRangeException>(() => new HttpResponse(status));
        Assert.Throws<ArgumentOutOfRangeException>(() => new HttpResponse().MakeErrorResponse(status));
    }

    [Theory]
    [InlineData(100, "Continue")]
    [InlineData(101, "Switching Protocols")]
    [InlineData(102, "Processing")]
    [InlineData(103, "Early Hints")]
    [InlineData(200, "OK")]
    [InlineData(201, "Created")]
    [InlineData(202, "Accepted")]
    [InlineData(203, "Non-Authoritative Information")]
    [InlineData(204, "No Content")]
    [InlineData(205, "Reset Content")]
    [InlineData(206, "Partial Content")]
    [InlineData(207, "Multi-Status")]
    [InlineData(208, "Already Reported")]
    [InlineData(226, "IM Used")]
    [InlineData(300, "Multiple Choices")]
    [InlineData(301, "Moved Permanently")]
    [InlineData(302, "Found")]
    [InlineData(303, "See Other")]
    [InlineData(304, "Not Modified")]
    [InlineData(305, "Use Proxy")]
    [InlineData(307, "Temporary Redirect")]
    [InlineData(308, "Permanent Redirect")]
    [InlineData(400, "Bad Request")]
    [InlineData(401, "Unauthorized")]
    [InlineData(402, "Payment Required")]
    [InlineData(403, "Forbidden")]
    [InlineData(404, "Not Found")]
    [InlineData(405, "Method Not Allowed")]
    [InlineData(406, "Not Acceptable")]
    [InlineData(407, "Proxy Authentication Required")]
    [InlineData(408, "Request Timeout")]
    [InlineData(409, "Conflict")]
    [InlineData(410, "Gone")]
    [InlineData(411, "Length Required")]
    [InlineData(412, "Precondition Failed")]
    [InlineData(413, "Content Too Large")]
    [InlineData(414, "URI Too Long")]
    [InlineData(415, "Unsupported Media Type")]
    [InlineData(416, "Range Not Satisfiable")]
    [InlineData(417, "Expectation Failed")]
    [InlineData(421, "Misdirected Request")]
    [InlineData(422, "Unprocessable Content")]
    [InlineData(423, "Locked")]
    [InlineData(424, "Failed Dependency")]
    [InlineData(425, "Too Early")]
    [InlineData(426, "Upgrade Required")]
    [InlineData(428, "Precondition Required")]
    [InlineData(429, "Too Many Requests")]
    [InlineData(431, "Request Header Fields Too Large")]
    [InlineData(451, "Unavailable For Legal Reasons")]
    [InlineData(500, "Internal Server Error")]
    [InlineData(501, "Not Implemented")]
    [InlineData(502, "Bad Gateway")]
    [InlineData(503, "Service Unavailable")]
    [InlineData(504, "Gateway Timeout")]
    [InlineData(505, "HTTP Version Not Supported")]
    [InlineData(506, "Variant Also Negotiates")]
    [InlineData(507, "Insufficient Storage")]
    [InlineData(508, "Loop Detected")]
    [InlineData(510, "Not Extended")]
    [InlineData(511, "Network Authentication Required")]
    public void Every_registered_status_has_its_phrase(int status, string phrase)
    {
        var response = new HttpResponse(status);
        Assert.Equal(phrase, response.StatusPhrase);
        Assert.Equal($"HTTP/1.1 {status} {phrase}\r\n", Wire(response));
    }

    [Theory]
    [InlineData(".html", "text/html")]
    [InlineData("html", "text/html")]
    [InlineData(".HTML", "text/html")]
    [InlineData(".css", "text/css")]
    [InlineData(".js", "text/javascript")]
    [InlineData(".json", "application/json")]
    [InlineData(".png", "image/png")]
    [InlineData(".jpg", "image/jpeg")]
    [InlineData(".svg", "image/svg+xml")]
    [InlineData(".ico", "image/x-icon")]
    [InlineData(".txt", "text/plain")]
    [InlineData(".xml", "text/xml")]
    [InlineData(".wasm", "application/wasm")]
    [InlineData(".pdf", "application/pdf")]
    [InlineData(".woff", "font/woff")]
    [InlineData(".woff2", "font/woff2")]
    [InlineData(".mp4", "video/mp4")]
    public void SetContentType_maps_an_extension_to_its_media_type(string extension, string type)
    {
        var response = new HttpResponse(200).SetContentType(extension);
        Assert.Equal($"HTTP/1.1 200 OK\r\nContent-Type: {type}\r\n", Wire(response));
    }

    [Theory]
    [InlineData(".unknown")]
    [InlineData("")]
    [InlineData(".")]
    public void SetContentType_writes_nothing_for_an_unknown_extension(string extension)
    {
        var response = new HttpResponse(200).SetContentType(extension);
        Assert.Equal("HTTP/1.1 200 OK\r\n", Wire(response));
        Assert.Equal(0, response.Headers);
    }

    [Fact]
    public void SetCookie_writes_NetCoreServers_attributes()
    {
        var response = new HttpResponse(200).SetCookie("id", "42");
        Assert.Equal("HTTP/1.1 200 OK\r\nSet-Cookie: id=42; Max-Age=86400; Secure; SameSite=Strict; HttpOnly\r\n", Wire(response));

        response = new HttpResponse(200).SetCookie("id", "42", 60, "/app", "example.com", secure: false, strict: false, httpOnly: false);
        Assert.Equal("HTTP/1.1 200 OK\r\nSet-Cookie: id=42; Max-Age=60; Domain=example.com; Path=/app\r\n", Wire(response));
        Assert.Equal(1, response.Cookies);
        Assert.Equal(("id", "42"), response.Cookie(0));
        Assert.Equal(("Set-Cookie", "id=42; Max-Age=60; Domain=example.com; Path=/app"), response.Header(0));
    }

    [Theory]
    [InlineData("X-Evil", "a\r\nSet-Cookie: admin=1")]
    [InlineData("X-Evil", "\r\n\r\n<html>")]
    [InlineData("X-Evil", "a\0")]
    [InlineData("X-Evil:", "1")]
    [InlineData("X-Evil\r\n", "1")]
    public void Response_splitting_through_a_header_is_refused(string name, string value)
    {
        var response = new HttpResponse(200);
        Assert.ThrowsAny<ArgumentException>(() => response.SetHeader(name, value));
        Assert.Equal("HTTP/1.1 200 OK\r\n", Wire(response));
    }

    [Fact]
    public void Response_splitting_through_the_status_line_or_a_cookie_is_refused()
    {
        Assert.ThrowsAny<ArgumentException>(() => new HttpResponse(200, "OK\r\nX: 1", "HTTP/1.1"));
        Assert.ThrowsAny<ArgumentException>(() => new HttpResponse(200, "HTTP/1.1\r\n"));
        Assert.ThrowsAny<ArgumentException>(() => new HttpResponse(200, "HTTP/1.1 "));
        var response = new HttpResponse(200);
        Assert.ThrowsAny<ArgumentException>(() => response.SetCookie("a", "1; Domain=evil.example"));
        Assert.ThrowsAny<ArgumentException>(() => response.SetCookie("a", "1", path: "/\r\nX: 1"));
        Assert.ThrowsAny<ArgumentException>(() => response.SetCookie("a", "1", domain: "x; HttpOnly"));
        Assert.ThrowsAny<ArgumentException>(() => response.SetCookie("a b", "1"));
        Assert.ThrowsAny<ArgumentException>(() => response.MakeGetResponse("x", "text/plain\r\nX: 1"));
        Assert.Equal("HTTP/1.1 200 OK\r\n", Wire(response));
    }

    [Fact]
    public void A_chunked_response_is_still_one_whole_message_in_Cache()
    {
        var response = new HttpResponse(200).SetHeader("Transfer-Encoding", "chunked").SetBody("Wikipedia in \r\n\r\nchunks.");
        Assert.Equal("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n18\r\nWikipedia in \r\n\r\nchunks.\r\n0\r\n\r\n", Wire(response));
        Assert.True(response.Store.IsChunked);

        // With SetBodyLength only the head is built: the session chunk-encodes what follows.
        response = new HttpResponse(200).SetHeader("Transfer-Encoding", "chunked").SetBodyLength(100);
        Assert.Equal("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", Wire(response));
        Assert.Equal(response.Cache.Size, response.Store.HeadLength);
        Assert.Equal(0, response.BodyLength);
    }

    [Fact]
    public void IsEmpty_is_true_for_an_empty_response()
    {
        var response = new HttpResponse();
        Assert.True(response.IsEmpty);
        response.MakeOkResponse();
        Assert.False(response.IsEmpty);
        Assert.True(response.Clear().IsEmpty);
        Assert.Equal(0, response.Status);
        Assert.Equal(string.Empty, response.StatusPhrase);
    }

    [Fact]
    public void A_loaded_head_reads_as_the_response_it_describes()
    {
        var (bytes, head) = TestHeads.Response(
            "HTTP/1.1 201 Created\r\nContent-Length: 4\r\nSet-Cookie: a=1; Path=/\r\nSet-Cookie: b = two ; HttpOnly\r\nLocation: /items/7\r\n\r\n");
        var response = new HttpResponse();
        response.LoadHead(bytes, head);
        Assert.Equal(201, response.Status);
        Assert.Equal("Created", response.StatusPhrase);
        Assert.Equal("HTTP/1.1", response.Protocol);
        Assert.Equal(4, response.Headers);
        Assert.Equal(2, response.Cookies);
        Assert.Equal(("a", "1"), response.Cookie(0));
        Assert.Equal(("b", "two"), response.Cookie(1));
        Assert.True(response.TryGetHeader("location", out var location));
        Assert.Equal("/items/7", location);
        Assert.Equal(4, response.BodyLength);
        Assert.True(response.AppendBody("done"u8, 4));
        Assert.Equal("done", response.Body);
        Assert.Equal(4, response.BodyBytes.Length);
    }

    [Fact]
    public void ToString_dumps_the_response()
    {
        var text = new HttpResponse().MakeGetResponse("body").ToString();
        Assert.Contains("Status: 200", text, StringComparison.Ordinal);
        Assert.Contains("Status phrase: OK", text, StringComparison.Ordinal);
        Assert.Contains("Content-Length : 4", text, StringComparison.Ordinal);
        Assert.Contains("Body: 4", text, StringComparison.Ordinal);
    }
}
