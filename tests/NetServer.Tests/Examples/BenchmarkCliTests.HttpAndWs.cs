using System;
using System.Globalization;
using System.IO;
using System.Linq;
using System.Net;
using System.Net.Sockets;
using System.Net.WebSockets;
using System.Threading;
using System.Threading.Tasks;
using NetServer.Tests.Infrastructure;
using Xunit;

namespace NetServer.Tests.Examples;

/// <summary>The http, https, ws and wss scenarios, and the servers and clients against standard peers.</summary>
public sealed partial class BenchmarkCliTests
{
    [Theory]
    [InlineData("http", "get")]
    [InlineData("http", "pipeline")]
    [InlineData("http", "trace")]
    [InlineData("https", "get")]
    [InlineData("https", "pipeline")]
    public async Task Http_scenarios_count_responses_with_no_error(string protocol, string scenario)
    {
        await using var bench = ProgramProcess.Start(Cli, s_timeout, protocol, scenario, "-c", "3", "-z", "1", "-q");
        var result = await ResultAsync(bench);
        Assert.Equal(0, await bench.WaitForExitAsync());

        Assert.Equal(protocol, result.GetProperty("protocol").GetString());
        Assert.Equal(protocol == "https" ? "ssl" : "tcp", result.GetProperty("transport").GetString());
        Assert.Equal(scenario, result.GetProperty("scenario").GetString());
        Assert.Equal(0, result.GetProperty("errors").GetInt64());
        Assert.Equal(scenario == "pipeline" ? 16 : 1, result.GetProperty("messages").GetInt32()); // requests in flight per connection
        var responses = result.GetProperty("totalMessages").GetInt64();
        Assert.True(responses > 0, "No response was counted.");

        // Bytes are counted as they arrive and responses when whole, so at each edge of the measured
        // window the two counts can differ by the responses in flight: one per connection, or the
        // pipeline depth per connection (a fresh-clone run saw 16 responses' bytes apart with depth
        // 16). A GET's answer is 115 bytes (Kestrel's, byte for byte).
        var inFlight = 3 * (scenario == "pipeline" ? 16 : 1);
        var slack = 2 * inFlight * 115.0 / responses;
        var perResponse = result.GetProperty("totalBytes").GetInt64() / (double)responses;
        if (scenario != "trace")
            Assert.InRange(perResponse, 115 - slack, 115 + slack + 1);
    }

    [Theory]
    [InlineData("ws", "echo", false)]
    [InlineData("ws", "echo", true)]
    [InlineData("ws", "multicast", false)]
    [InlineData("wss", "echo", false)]
    [InlineData("wss", "multicast", true)]
    public async Task Ws_scenarios_count_messages_with_no_error(string protocol, string scenario, bool text)
    {
        await using var bench = ProgramProcess.Start(Cli, s_timeout,
            [protocol, scenario, "-c", "3", "-s", "20", "-z", "1", "-q", .. text ? new[] { "--text" } : []]);
        var result = await ResultAsync(bench);
        Assert.Equal(0, await bench.WaitForExitAsync());

        Assert.Equal(protocol, result.GetProperty("protocol").GetString());
        Assert.Equal(protocol == "wss" ? "ssl" : "tcp", result.GetProperty("transport").GetString());
        Assert.Equal(scenario, result.GetProperty("scenario").GetString());
        Assert.Equal(text, result.GetProperty("text").GetBoolean());
        Assert.Equal(0, result.GetProperty("errors").GetInt64());
        var messages = result.GetProperty("totalMessages").GetInt64();
        Assert.True(messages > 0, "No message was counted.");
        Assert.True(result.GetProperty("messagesPerSecond").GetDouble() > 0);

        // Messages are counted one by one; the data is messages x size, without the frame headers.
        Assert.Equal(messages * 20, result.GetProperty("totalBytes").GetInt64());
    }

    [Fact]
    public async Task Ws_echo_server_answers_a_standard_client_with_each_message_and_its_type()
    {
        await using var server = ProgramProcess.Start(Cli, s_timeout, "ws", "echo", "--role", "server", "-p", "0", "-z", "0", "-q");
        var port = PortOf(await server.WaitForLineAsync("Server listening on "));
        using var timeout = new CancellationTokenSource(s_timeout);
        using var client = new ClientWebSocket();
        await client.ConnectAsync(new Uri($"ws://127.0.0.1:{port}/any/path"), timeout.Token);

        // A text message, a binary one, and a binary one in three frames: each comes back whole, with its type.
        var text = "h\u00e9llo \u2603"u8.ToArray();
        var binary = Enumerable.Range(0, 300).Select(b => (byte)b).ToArray();
        await client.SendAsync(text, WebSocketMessageType.Text, endOfMessage: true, timeout.Token);
        await client.SendAsync(binary, WebSocketMessageType.Binary, endOfMessage: true, timeout.Token);
        await client.SendAsync(binary.AsMemory(0, 100), WebSocketMessageType.Binary, endOfMessage: false, timeout.Token);
        await client.SendAsync(binary.AsMemory(100, 100), WebSocketMessageType.Binary, endOfMessage: false, timeout.Token);
        await client.SendAsync(binary.AsMemory(200), WebSocketMessageType.Binary, endOfMessage: true, timeout.Token);

        foreach (var (type, payload) in new[] { (WebSocketMessageType.Text, text), (WebSocketMessageType.Binary, binary), (WebSocketMessageType.Binary, binary) })
        {
            var echoed = await ReceiveWholeAsync(client, timeout.Token);
            Assert.Equal(type, echoed.Type);
            Assert.Equal(payload, echoed.Payload);
        }

        await client.CloseAsync(WebSocketCloseStatus.NormalClosure, "done", timeout.Token);
        Assert.Equal(WebSocketCloseStatus.NormalClosure, client.CloseStatus);
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public async Task Ws_client_drives_any_websocket_echo_server(bool text)
    {
        // System.Net.WebSockets' server side (what Kestrel's /ws runs) behind a hand-made upgrade:
        // every message sent back frame by frame with its type, as kestrel-reference does.
        using var listener = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        listener.Bind(new IPEndPoint(IPAddress.Loopback, 0));
        listener.Listen();
        using var stop = new CancellationTokenSource();
        var echo = new WebSocketEchoServer(listener, "/ws");
        var serving = echo.RunAsync(stop.Token);
        try
        {
            var port = ((IPEndPoint)listener.LocalEndPoint!).Port;
            await using var client = ProgramProcess.Start(Cli, s_timeout,
                ["ws", "echo", "--role", "client", "-p", port.ToString(CultureInfo.InvariantCulture), "--path", "/ws", "-c", "2", "-m", "50", "-s", "16", "-z", "1", "-q",
                    .. text ? new[] { "--text" } : []]);
            var result = await ResultAsync(client);
            Assert.Equal(0, await client.WaitForExitAsync());
            Assert.Equal("client", result.GetProperty("role").GetString());
            Assert.Equal(0, result.GetProperty("errors").GetInt64());
            var messages = result.GetProperty("totalMessages").GetInt64();
            Assert.True(messages > 2 * 50, $"The client counted only {messages} messages.");
            Assert.Equal(messages * 16, result.GetProperty("totalBytes").GetInt64());
            Assert.Equal(2, echo.Upgrades);
            Assert.Equal(text ? WebSocketMessageType.Text : WebSocketMessageType.Binary, echo.LastType);
        }
        finally
        {
            await stop.CancelAsync();
            listener.Close();
            await serving.WaitAsync(s_timeout);
        }
    }

    [Fact]
    public async Task Ws_echo_server_in_its_own_process_allocates_nothing_per_message()
    {
        // The server's figures come from its own process: only its sessions allocate there. It
        // needs three seconds with traffic for a steady-state window; it runs 10 s so that the
        // client's 6 s (at least three active seconds after a slow, JIT-bound start) fit even when a
        // loaded machine starts the client seconds late.
        await using var server = ProgramProcess.Start(Cli, s_timeout, "ws", "echo", "--role", "server", "-p", "0", "-z", "10", "-q");
        var port = PortOf(await server.WaitForLineAsync("Server listening on "));
        await using var client = ProgramProcess.Start(Cli, s_timeout,
            "ws", "echo", "--role", "client", "-p", port.ToString(CultureInfo.InvariantCulture), "-c", "2", "-z", "6", "-q");
        Assert.Equal(0, (await ResultAsync(client)).GetProperty("errors").GetInt64());
        Assert.Equal(0, await client.WaitForExitAsync());

        var result = await ResultAsync(server);
        Assert.Equal(0, await server.WaitForExitAsync());
        Assert.Equal("server", result.GetProperty("role").GetString());
        Assert.Equal(0, result.GetProperty("errors").GetInt64());
        var messages = result.GetProperty("totalMessages").GetInt64();
        Assert.True(messages > 0, "The server counted no message.");
        Assert.Equal(messages * 32, result.GetProperty("totalBytes").GetInt64());

        // The smallest object is 24 bytes: an allocation per message, or per few messages, would
        // show. What remains is the process's background (timers, the thread pool) over the window.
        var perMessage = result.GetProperty("allocatedBytesPerMessage").GetDouble();
        Assert.True(perMessage < 8, $"The ws echo server allocated {perMessage} B per message.");
    }

    [Fact]
    public async Task Http_server_answers_get_as_kestrel_reference_does_and_echoes_trace()
    {
        await using var server = ProgramProcess.Start(Cli, s_timeout, "http", "--role", "server", "-p", "0", "-z", "0", "-q");
        var port = PortOf(await server.WaitForLineAsync("Server listening on "));
        using var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        await socket.ConnectAsync(new IPEndPoint(IPAddress.Loopback, port)).WaitAsync(s_timeout);

        // Pipelined, each split in two writes: the answers come back in order, whole.
        var get = "GET /any/path?q=1 HTTP/1.1\r\nHost: x\r\n\r\n"u8.ToArray();
        var trace = "TRACE / HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n"u8.ToArray();
        byte[] both = [.. get, .. trace];
        await socket.SendAsync(both.AsMemory(0, 10));
        await socket.SendAsync(both.AsMemory(10));

        var received = new MemoryStream();
        var buffer = new byte[4096];
        using var timeout = new CancellationTokenSource(s_timeout);
        var traced = $"HTTP/1.1 200 OK\r\nContent-Type: message/http\r\nContent-Length: {trace.Length}\r\n\r\n";
        var getHead = "HTTP/1.1 200 OK\r\nContent-Length: 13\r\nContent-Type: text/plain\r\nDate: ".Length;
        while (received.Length < getHead + 29 + 4 + 13 + traced.Length + trace.Length)
        {
            var n = await socket.ReceiveAsync(buffer, timeout.Token);
            Assert.True(n > 0, "The server closed the connection.");
            received.Write(buffer, 0, n);
        }

        var text = System.Text.Encoding.ASCII.GetString(received.ToArray());
        Assert.Matches(@"^HTTP/1\.1 200 OK\r\nContent-Length: 13\r\nContent-Type: text/plain\r\nDate: \w{3}, \d\d \w{3} \d{4} \d\d:\d\d:\d\d GMT\r\n\r\nHello, World!HTTP/", text);
        Assert.EndsWith(traced + System.Text.Encoding.ASCII.GetString(trace), text, StringComparison.Ordinal);
    }

    /// <summary>One whole message (all its frames) and its type.</summary>
    private static async Task<(WebSocketMessageType Type, byte[] Payload)> ReceiveWholeAsync(WebSocket socket, CancellationToken token)
    {
        var message = new MemoryStream();
        var buffer = new byte[1024];
        while (true)
        {
            var received = await socket.ReceiveAsync(buffer, token);
            Assert.NotEqual(WebSocketMessageType.Close, received.MessageType);
            message.Write(buffer, 0, received.Count);
            if (received.EndOfMessage)
                return (received.MessageType, message.ToArray());
        }
    }

    /// <summary>
    /// A WebSocket echo server made of System.Net.WebSockets' server side behind a hand-made
    /// opening handshake (RFC 6455 4.2.2) for one path: every message sent back frame by frame with
    /// its type, as kestrel-reference's /ws does. Counts the upgrades and keeps the last type seen.
    /// </summary>
    private sealed class WebSocketEchoServer(Socket listener, string path)
    {
        private int _upgrades;
        private int _lastType = -1;

        public int Upgrades => Volatile.Read(ref _upgrades);

        public WebSocketMessageType LastType => (WebSocketMessageType)Volatile.Read(ref _lastType);

        public async Task RunAsync(CancellationToken token)
        {
            var connections = new System.Collections.Generic.List<Task>();
            try
            {
                while (true)
                    connections.Add(ServeAsync(await listener.AcceptAsync(token), token));
            }
            catch (Exception e) when (e is OperationCanceledException or SocketException or ObjectDisposedException)
            {
                // Stopped.
            }

            await Task.WhenAll(connections);
        }

        private async Task ServeAsync(Socket peer, CancellationToken token)
        {
            var stream = new NetworkStream(peer, ownsSocket: true);
            try
            {
                // The request head, byte by byte: nothing after it may be read before the WebSocket takes over.
                var head = new MemoryStream();
                var one = new byte[1];
                while (!head.ToArray().AsSpan().EndsWith("\r\n\r\n"u8))
                {
                    if (await stream.ReadAsync(one, token) == 0)
                        return;
                    head.WriteByte(one[0]);
                }

                var lines = System.Text.Encoding.ASCII.GetString(head.ToArray()).Split("\r\n");
                var key = lines.Select(l => l.Split(':', 2)).Where(f => f.Length == 2 && f[0].Trim().Equals("Sec-WebSocket-Key", StringComparison.OrdinalIgnoreCase))
                    .Select(f => f[1].Trim()).Single();
                Assert.Equal($"GET {path} HTTP/1.1", lines[0]);
#pragma warning disable CA5350 // SHA-1 is what RFC 6455 prescribes for the accept value
                var accept = Convert.ToBase64String(System.Security.Cryptography.SHA1.HashData(System.Text.Encoding.ASCII.GetBytes(key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11")));
#pragma warning restore CA5350
                await stream.WriteAsync(System.Text.Encoding.ASCII.GetBytes(
                    $"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: {accept}\r\n\r\n"), token);
                Interlocked.Increment(ref _upgrades);

                using var socket = WebSocket.CreateFromStream(stream, new WebSocketCreationOptions { IsServer = true });
                var buffer = new byte[65536];
                while (true)
                {
                    var received = await socket.ReceiveAsync(buffer.AsMemory(), token);
                    if (received.MessageType == WebSocketMessageType.Close)
                        return;
                    Volatile.Write(ref _lastType, (int)received.MessageType);
                    await socket.SendAsync(buffer.AsMemory(0, received.Count), received.MessageType, received.EndOfMessage, token);
                }
            }
            catch (Exception e) when (e is OperationCanceledException or SocketException or IOException or WebSocketException)
            {
                // The client went away or the test is done.
            }
            finally
            {
                await stream.DisposeAsync();
            }
        }
    }
}
