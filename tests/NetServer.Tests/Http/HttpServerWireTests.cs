using System;
using System.Linq;
using System.Text;
using System.Threading.Tasks;
using NetServer.Tests.Infrastructure;
using Xunit;

namespace NetServer.Tests.Http;

/// <summary>
/// The HTTP server driven with raw bytes over loopback sockets: the request rules end to end
/// (status, close, hooks), pipelining, 100-continue, and the limits and timeouts.
/// </summary>
public sealed class HttpServerWireTests
{
    public static TheoryData<string, string, string> ValidRequests => new()
    {
        { "GET", "GET /a?b=c HTTP/1.1\r\nHost: x\r\n\r\n", "GET /a?b=c " },
        { "POST Content-Length", "POST /p HTTP/1.1\r\nHost: x\r\nContent-Length: 11\r\n\r\nhello world", "POST /p hello world" },
        { "chunked POST with trailers", "POST /c HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5;ext=1\r\nhello\r\n6\r\n world\r\n0\r\nX-Sum: 11\r\nX-More: y\r\n\r\n", "POST /c hello world" },
    };

    [Theory]
    [MemberData(nameof(ValidRequests))]
    public async Task A_valid_request_is_answered_and_the_connection_stays_open(string name, string request, string expected)
    {
        using var server = new HttpTestServer();
        Assert.True(server.Start());
        using var raw = await RawHttpConnection.ConnectAsync(server.BoundPort);
        await raw.SendAsync(request);
        var response = await raw.ReadResponseAsync();
        Assert.True(response.Status == 200, name);
        Assert.Equal(expected, response.BodyText);

        // Kept alive: a second request on the same connection.
        await raw.SendAsync("GET /again HTTP/1.1\r\nHost: x\r\n\r\n");
        Assert.Equal("GET /again ", (await raw.ReadResponseAsync()).BodyText);
        Assert.Empty(server.Errors);
    }

    [Theory]
    [MemberData(nameof(ValidRequests))]
    public async Task A_valid_request_sent_byte_by_byte_is_answered(string name, string request, string expected)
    {
        using var server = new HttpTestServer();
        Assert.True(server.Start());
        using var raw = await RawHttpConnection.ConnectAsync(server.BoundPort);
        await raw.SendByteByByteAsync(request);
        var response = await raw.ReadResponseAsync();
        Assert.True(response.Status == 200, name);
        Assert.Equal(expected, response.BodyText);
        Assert.Empty(server.Errors);
    }

    [Fact]
    public async Task A_closing_answer_sent_from_another_thread_returns_without_waiting_for_the_peer_to_close()
    {
        using var server = new HttpTestServer();
        Assert.True(server.Start());
        using var raw = await RawHttpConnection.ConnectAsync(server.BoundPort);
        await raw.SendAsync("GET /late/close HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
        var response = await raw.ReadResponseAsync();
        Assert.Equal("late /late/close", response.BodyText);
        Assert.True(response.Says("Connection: close"), response.Head);

        // The peer keeps its socket open, so the graceful close lingers (up to the disconnect
        // timeout); the answering thread must not wait for it, as a thread of the pool that did
        // would starve the pool with a few such peers.
        Assert.False(await server.LateAnswerSent.Task.WaitAsync(Wait.Default), "the answer's send returned only after the session disconnected");
        await raw.AssertClosedAsync();
    }

    [Theory]
    [InlineData("GET /a HTTP/1.0\r\n\r\n")]
    [InlineData("GET /a HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")]
    public async Task The_last_answer_on_a_connection_says_Connection_close(string request)
    {
        using var server = new HttpTestServer();
        Assert.True(server.Start());
        using var raw = await RawHttpConnection.ConnectAsync(server.BoundPort);
        await raw.SendAsync(request);
        var response = await raw.ReadResponseAsync();
        Assert.Equal("GET /a ", response.BodyText);
        Assert.True(response.Says("Connection: close"), response.Head);
        await raw.AssertClosedAsync();
    }

    public static TheoryData<string, string, int> InvalidRequests => new()
    {
        { "conflicting Content-Length", "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab", 400 },
        { "repeated equal Content-Length", "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\nab", 400 },
        { "Content-Length list", "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 2, 2\r\n\r\nab", 400 },
        { "bad chunk size", "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nhello\r\n0\r\n\r\n", 400 },
        { "request line too long", "GET /" + new string('a', 9000) + " HTTP/1.1\r\nHost: x\r\n\r\n", 414 },
        { "too many headers", "GET / HTTP/1.1\r\nHost: x\r\n" + string.Concat(Enumerable.Range(0, 101).Select(i => $"X-{i}: v\r\n")) + "\r\n", 431 },
        { "missing Host", "GET / HTTP/1.1\r\n\r\n", 400 },
        { "HTTP/2.0", "GET / HTTP/2.0\r\nHost: x\r\n\r\n", 505 },
        { "obs-fold", "GET / HTTP/1.1\r\nHost: x\r\nX-Folded: a\r\n b\r\n\r\n", 400 },
    };

    [Theory]
    [MemberData(nameof(InvalidRequests))]
    public async Task An_invalid_request_gets_its_status_the_error_hook_and_a_close(string name, string request, int status)
    {
        using var server = new HttpTestServer();
        Assert.True(server.Start());
        using (var raw = await RawHttpConnection.ConnectAsync(server.BoundPort))
        {
            await raw.SendAsync(request);
            var response = await raw.ReadResponseAsync();
            Assert.True(status == response.Status, $"{name}: {response.Head}");
            Assert.True(response.Says("Connection: close"), response.Head);
            await raw.AssertClosedAsync();
        }

        var error = Assert.Single(server.Errors);
        Assert.StartsWith(status + ":", error);
        Assert.Empty(server.Requests);
        await AssertStillServesAsync(server);
    }

    [Fact]
    public async Task Content_length_with_chunked_is_answered_as_chunked_then_the_connection_closes()
    {
        using var server = new HttpTestServer();
        Assert.True(server.Start());
        using (var raw = await RawHttpConnection.ConnectAsync(server.BoundPort))
        {
            await raw.SendAsync("POST /te HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n");
            var response = await raw.ReadResponseAsync();
            Assert.Equal(200, response.Status);
            Assert.Equal("POST /te hello", response.BodyText);
            await raw.AssertClosedAsync();
        }

        Assert.Empty(server.Errors);
        Assert.Equal(["POST /te"], server.Requests);
        await AssertStillServesAsync(server);
    }

    private static async Task AssertStillServesAsync(HttpTestServer server)
    {
        using var other = await RawHttpConnection.ConnectAsync(server.BoundPort);
        await other.SendAsync("GET /other HTTP/1.1\r\nHost: x\r\n\r\n");
        Assert.Equal("GET /other ", (await other.ReadResponseAsync()).BodyText);
    }

    [Fact]
    public async Task Sixteen_pipelined_requests_are_answered_in_order_some_from_another_thread()
    {
        using var server = new HttpTestServer();
        Assert.True(server.Start());
        using var raw = await RawHttpConnection.ConnectAsync(server.BoundPort);
        var requests = new StringBuilder();
        for (var i = 0; i < 16; i++)
            requests.Append(i % 3 == 1 ? $"GET /late/{i} HTTP/1.1\r\nHost: x\r\n\r\n" : $"GET /n/{i} HTTP/1.1\r\nHost: x\r\n\r\n");
        await raw.SendAsync(requests.ToString()); // one write
        for (var i = 0; i < 16; i++)
        {
            var body = (await raw.ReadResponseAsync()).BodyText;
            Assert.Equal(i % 3 == 1 ? $"late /late/{i}" : $"GET /n/{i} ", body);
        }
    }

    [Fact]
    public async Task A_pipelined_HEAD_gets_its_head_without_a_body()
    {
        using var server = new HttpTestServer();
        Assert.True(server.Start());
        using var raw = await RawHttpConnection.ConnectAsync(server.BoundPort);
        await raw.SendAsync("HEAD /h HTTP/1.1\r\nHost: x\r\n\r\nGET /g HTTP/1.1\r\nHost: x\r\n\r\n");
        var head = await raw.ReadResponseAsync(afterHead: true);
        Assert.Equal(200, head.Status);
        Assert.Contains("Content-Length: 8", head.Head); // the GET answer's length ("HEAD /h ")

        // Had a body followed the HEAD answer, this would read its bytes as a status line.
        var get = await raw.ReadResponseAsync();
        Assert.Equal("GET /g ", get.BodyText);
    }

    [Theory]
    [InlineData("HEAD")]
    [InlineData("GET")]
    public async Task A_chunked_answer_ends_with_its_last_chunk_also_for_HEAD_so_the_next_answer_is_not_mixed_with_its_body(string method)
    {
        using var server = new HttpTestServer();
        Assert.True(server.Start());
        using var raw = await RawHttpConnection.ConnectAsync(server.BoundPort);
        await raw.SendAsync(method + " /slowstream HTTP/1.1\r\nHost: x\r\n\r\nGET /g HTTP/1.1\r\nHost: x\r\n\r\n");
        var first = await raw.ReadResponseAsync(afterHead: method == "HEAD");
        Assert.Contains("Transfer-Encoding: chunked", first.Head);
        Assert.Equal(method == "HEAD" ? "" : "slow body", first.BodyText);
        Assert.Equal("GET /g ", (await raw.ReadResponseAsync()).BodyText);
        Assert.True(await raw.StaysOpenAsync(TimeSpan.FromMilliseconds(300)), "bytes after the last answer");
    }

    [Theory]
    [InlineData("GET /c HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")]
    [InlineData("GET /c HTTP/1.0\r\n\r\n")]
    public async Task A_request_asking_for_a_close_is_answered_and_the_connection_closes(string request)
    {
        using var server = new HttpTestServer();
        Assert.True(server.Start());
        using var raw = await RawHttpConnection.ConnectAsync(server.BoundPort);
        await raw.SendAsync(request + "GET /ignored HTTP/1.1\r\nHost: x\r\n\r\n");
        Assert.Equal("GET /c ", (await raw.ReadResponseAsync()).BodyText);
        await raw.AssertClosedAsync();
        Assert.Equal(["GET /c"], server.Requests);
    }

    [Fact]
    public async Task Http10_with_keep_alive_stays_open()
    {
        using var server = new HttpTestServer();
        Assert.True(server.Start());
        using var raw = await RawHttpConnection.ConnectAsync(server.BoundPort);
        await raw.SendAsync("GET /k HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
        Assert.Equal("GET /k ", (await raw.ReadResponseAsync()).BodyText);
        await raw.SendAsync("GET /k2 HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
        Assert.Equal("GET /k2 ", (await raw.ReadResponseAsync()).BodyText);
    }

    [Fact]
    public async Task Expect_100_continue_gets_the_interim_answer_before_the_body_is_sent()
    {
        using var server = new HttpTestServer();
        Assert.True(server.Start());
        using var raw = await RawHttpConnection.ConnectAsync(server.BoundPort);
        await raw.SendAsync("POST /e HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 4\r\n\r\n");
        var interim = await raw.ReadResponseAsync();
        Assert.Equal("HTTP/1.1 100 Continue\r\n\r\n", interim.Head);
        await raw.SendAsync("data");
        var final = await raw.ReadResponseAsync();
        Assert.Equal(200, final.Status);
        Assert.Equal("POST /e data", final.BodyText);
    }

    [Theory]
    [InlineData("POST /big HTTP/1.1\r\nHost: x\r\nContent-Length: 101\r\n\r\n")]
    [InlineData("POST /big HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n32\r\n01234567890123456789012345678901234567890123456789\r\n")]
    public async Task A_body_over_the_limit_gets_413(string start)
    {
        using var server = new HttpTestServer();
        server.Limits.MaxRequestBodySize = 100;
        Assert.True(server.Start());
        using (var raw = await RawHttpConnection.ConnectAsync(server.BoundPort))
        {
            await raw.SendAsync(start);
            if (start.Contains("chunked", StringComparison.Ordinal))
                await raw.SendAsync("33\r\n" + new string('x', 51) + "\r\n"); // 101 in all
            var response = await raw.ReadResponseAsync();
            Assert.Equal(413, response.Status);
            await raw.AssertClosedAsync();
        }

        Assert.StartsWith("413:", Assert.Single(server.Errors));
        Assert.Empty(server.Requests);
    }

    [Theory]
    [InlineData("POST /big HTTP/1.1\r\nHost: x\r\nContent-Length: 150\r\n\r\n")]
    [InlineData("POST /big HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n96\r\n")]
    public async Task The_header_hook_can_raise_the_body_limit_of_one_request(string start)
    {
        using var server = new HttpTestServer();
        server.Limits.MaxRequestBodySize = 100;
        server.Header = context =>
        {
            if (context.Request.Url == "/big")
                context.MaxRequestBodySize = 1000;
        };
        Assert.True(server.Start());
        using var raw = await RawHttpConnection.ConnectAsync(server.BoundPort);
        var body = new string('b', 150);
        await raw.SendAsync(start + body + (start.Contains("chunked", StringComparison.Ordinal) ? "\r\n0\r\n\r\n" : ""));
        var response = await raw.ReadResponseAsync();
        Assert.Equal(200, response.Status);
        Assert.Equal("POST /big " + body, response.BodyText);

        // The raise was for that request only.
        await raw.SendAsync("POST /small HTTP/1.1\r\nHost: x\r\nContent-Length: 150\r\n\r\n" + body);
        Assert.Equal(413, (await raw.ReadResponseAsync()).Status);
    }

    [Fact]
    public async Task Half_a_head_past_the_request_headers_timeout_gets_408_and_a_close()
    {
        using var server = new HttpTestServer();
        server.Limits.RequestHeadersTimeout = TimeSpan.FromSeconds(1);
        Assert.True(server.Start());
        using var raw = await RawHttpConnection.ConnectAsync(server.BoundPort);
        await raw.SendAsync("GET /slow HTTP/1.1\r\nHost: x\r\nX-Half");
        var started = DateTime.UtcNow;
        var response = await raw.ReadResponseAsync(timeout: TimeSpan.FromSeconds(10));
        Assert.Equal(408, response.Status);
        Assert.True(DateTime.UtcNow - started >= TimeSpan.FromSeconds(0.5), "408 came before the timeout");
        await raw.AssertClosedAsync();
        Assert.StartsWith("408:", await server.ErrorSignal.Task.WaitAsync(Wait.Default));
        Assert.Empty(server.Requests);
    }

    [Fact]
    public async Task An_idle_kept_alive_connection_is_closed_quietly_after_the_keep_alive_timeout()
    {
        using var server = new HttpTestServer();
        server.Limits.KeepAliveTimeout = TimeSpan.FromSeconds(1);
        Assert.True(server.Start());
        using var raw = await RawHttpConnection.ConnectAsync(server.BoundPort);
        await raw.SendAsync("GET /once HTTP/1.1\r\nHost: x\r\n\r\n");
        Assert.Equal(200, (await raw.ReadResponseAsync()).Status);
        var idle = DateTime.UtcNow;
        await raw.AssertClosedAsync(TimeSpan.FromSeconds(10)); // no bytes (no 408) before the close
        Assert.True(DateTime.UtcNow - idle >= TimeSpan.FromSeconds(0.5), "closed before the timeout");
        Assert.Empty(server.Errors);
    }

    [Fact]
    public async Task A_trickling_body_below_the_minimum_data_rate_gets_408()
    {
        using var server = new HttpTestServer();
        server.Limits.MinRequestBodyDataRate = 1000;
        server.Limits.MinRequestBodyDataRateGracePeriod = TimeSpan.FromSeconds(1);
        Assert.True(server.Start());
        using var raw = await RawHttpConnection.ConnectAsync(server.BoundPort);
        await raw.SendAsync("POST /trickle HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n");
        var reading = raw.ReadResponseAsync(timeout: TimeSpan.FromSeconds(10));
        for (var i = 0; i < 40 && !reading.IsCompleted && !server.ErrorSignal.Task.IsCompleted; i++)
        {
            try
            {
                await raw.SendAsync("x");
            }
            catch (System.Net.Sockets.SocketException)
            {
                break; // the server answered and closed meanwhile
            }

            await Task.WhenAny(reading, Task.Delay(100));
        }

        var response = await reading;
        Assert.Equal(408, response.Status);
        Assert.StartsWith("408:", await server.ErrorSignal.Task.WaitAsync(Wait.Default));
        Assert.Empty(server.Requests);
    }
}
