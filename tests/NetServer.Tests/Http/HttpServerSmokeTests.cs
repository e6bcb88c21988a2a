using System;
using System.Net;
using System.Net.Sockets;
using System.Text;
using System.Threading;
using System.Threading.Tasks;
using NetServer.Tests.Infrastructure;
using Xunit;

namespace NetServer.Tests.Http;

/// <summary>The HTTP server over real sockets: answers, pipelining in order, a late answer, a refused request.</summary>
public sealed class HttpServerSmokeTests
{
    private sealed class EchoPathSession(HttpServer server) : HttpSession(server)
    {
        protected override void OnReceivedRequest(HttpRequest request)
        {
            if (request.Url.StartsWith("/late", StringComparison.Ordinal))
            {
                var url = request.Url;
                _ = Task.Run(async () =>
                {
                    await Task.Delay(50);
                    SendResponseAsync(Response.MakeGetResponse("late " + url));
                });
                return;
            }

            SendResponseAsync(Response.MakeGetResponse(request.Method + " " + request.Url + " " + request.Body));
        }
    }

    private sealed class EchoPathServer(IPEndPoint endpoint) : HttpServer(endpoint)
    {
        public string? LastError { get; private set; }

        protected override TcpSession CreateSession() => new ErrorRecordingSession(this);

        private sealed class ErrorRecordingSession(EchoPathServer server) : HttpSession(server)
        {
            protected override void OnReceivedRequest(HttpRequest request) =>
                SendResponseAsync(Response.MakeGetResponse(request.Method + " " + request.Url + " " + request.Body));

            protected override void OnReceivedRequestError(HttpRequest request, string error) => server.LastError = error;
        }
    }

    /// <summary>Sends raw request bytes and reads until <paramref name="responses"/> whole responses (Content-Length framed) arrived, or the close.</summary>
    private static async Task<string> ExchangeAsync(int port, string requests, int responses)
    {
        using var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        await socket.ConnectAsync(IPAddress.Loopback, port).WaitAsync(Wait.Default);
        await socket.SendAsync(Encoding.ASCII.GetBytes(requests));
        var text = new StringBuilder();
        var buffer = new byte[4096];
        while (WholeResponses(text.ToString()) < responses)
        {
            var read = await socket.ReceiveAsync(buffer.AsMemory()).AsTask().WaitAsync(Wait.Default);
            if (read == 0)
                break;
            text.Append(Encoding.ASCII.GetString(buffer, 0, read));
        }

        return text.ToString();
    }

    private static int WholeResponses(string text)
    {
        var count = 0;
        var at = 0;
        while (true)
        {
            var end = text.IndexOf("\r\n\r\n", at, StringComparison.Ordinal);
            if (end < 0)
                return count;
            var head = text.Substring(at, end - at);
            var marker = head.IndexOf("Content-Length: ", StringComparison.OrdinalIgnoreCase);
            var length = 0;
            if (marker >= 0)
            {
                var stop = head.IndexOf('\r', marker);
                length = int.Parse(stop < 0 ? head[(marker + 16)..] : head[(marker + 16)..stop], System.Globalization.CultureInfo.InvariantCulture);
            }

            if (text.Length < end + 4 + length)
                return count;
            count++;
            at = end + 4 + length;
        }
    }

    [Fact]
    public async Task Pipelined_requests_are_answered_in_order_also_when_one_is_answered_later()
    {
        using var server = new EchoPathServerWithLate(new IPEndPoint(IPAddress.Loopback, 0));
        Assert.True(server.Start());
        var port = ((IPEndPoint)server.Endpoint).Port;
        var text = await ExchangeAsync(port,
            "GET /a HTTP/1.1\r\nHost: x\r\n\r\n" +
            "GET /late HTTP/1.1\r\nHost: x\r\n\r\n" +
            "POST /c HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello" +
            "GET /d HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n", 4);
        var a = text.IndexOf("GET /a ", StringComparison.Ordinal);
        var late = text.IndexOf("late /late", StringComparison.Ordinal);
        var c = text.IndexOf("POST /c hello", StringComparison.Ordinal);
        var d = text.IndexOf("GET /d abc", StringComparison.Ordinal);
        Assert.True(a >= 0 && late > a && c > late && d > c, text);
    }

    [Fact]
    public async Task A_request_breaking_a_rule_gets_its_status_and_the_connection_closes()
    {
        using var server = new EchoPathServer(new IPEndPoint(IPAddress.Loopback, 0));
        Assert.True(server.Start());
        var port = ((IPEndPoint)server.Endpoint).Port;
        var text = await ExchangeAsync(port, "GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", 1);
        Assert.StartsWith("HTTP/1.1 400 ", text);
        Assert.Contains("Connection: close", text);
        Assert.NotNull(server.LastError);
        var next = await ExchangeAsync(port, "GET /ok HTTP/1.1\r\nHost: x\r\n\r\n", 1);
        Assert.Contains("GET /ok", next);
    }

    [Fact]
    public async Task HttpClientEx_gets_responses_from_the_server_and_reuses_its_connection()
    {
        using var server = new EchoPathServer(new IPEndPoint(IPAddress.Loopback, 0));
        Assert.True(server.Start());
        var port = ((IPEndPoint)server.Endpoint).Port;
        using var client = new HttpClientEx(IPAddress.Loopback, port);
        var first = await client.SendGetRequest("/one").WaitAsync(Wait.Default);
        Assert.Equal(200, first.Status);
        Assert.Equal("GET /one ", first.Body);
        var second = await client.SendPostRequest("/two", "payload").WaitAsync(Wait.Default);
        Assert.Equal("POST /two payload", second.Body);
        Assert.Equal(1, server.ConnectedSessions);
    }

    private sealed class AnswerAtOnceElsewhereSession(HttpServer server) : HttpSession(server)
    {
        // Answered from a pool thread right away: the answer races the end of the delivery that handed the request over.
        protected override void OnReceivedRequest(HttpRequest request)
        {
            var url = request.Url;
            ThreadPool.UnsafeQueueUserWorkItem(_ => SendResponseAsync(Response.MakeGetResponse(url)), null);
        }
    }

    private sealed class AnswerAtOnceElsewhereServer(IPEndPoint endpoint) : HttpServer(endpoint)
    {
        protected override TcpSession CreateSession() => new AnswerAtOnceElsewhereSession(this);
    }

    [Fact]
    public async Task Requests_answered_from_another_thread_while_their_delivery_unwinds_never_stall_the_pipeline()
    {
        using var server = new AnswerAtOnceElsewhereServer(new IPEndPoint(IPAddress.Loopback, 0));
        Assert.True(server.Start());
        var port = ((IPEndPoint)server.Endpoint).Port;
        for (var round = 0; round < 20; round++)
        {
            var requests = new StringBuilder();
            for (var i = 0; i < 50; i++)
                requests.Append("GET /r").Append(i).Append(" HTTP/1.1\r\nHost: x\r\n\r\n");
            var text = await ExchangeAsync(port, requests.ToString(), 50);
            Assert.Equal(50, WholeResponses(text));
            Assert.True(text.IndexOf("/r0", StringComparison.Ordinal) < text.IndexOf("/r49", StringComparison.Ordinal), "answers out of order");
        }
    }

    private sealed class EchoPathServerWithLate(IPEndPoint endpoint) : HttpServer(endpoint)
    {
        protected override TcpSession CreateSession() => new EchoPathSession(this);
    }
}
