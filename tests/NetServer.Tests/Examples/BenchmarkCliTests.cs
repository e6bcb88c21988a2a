using System;
using System.Buffers.Binary;
using System.Globalization;
using System.IO;
using System.Linq;
using System.Net;
using System.Net.Security;
using System.Net.Sockets;
using System.Net.WebSockets;
using System.Security.Cryptography.X509Certificates;
using System.Text.Json;
using System.Threading;
using System.Threading.Tasks;
using NetServer.Protobuf;
using NetServer.Tests.Infrastructure;
using ProtoBuf;
using Xunit;

namespace NetServer.Tests.Examples;

/// <summary>
/// The benchmark CLI (<c>netserver-bench</c>) as build/bench.sh and a user run it: a child process
/// on real sockets, checked through its JSON result line and exit code. ssl runs in one process use
/// the repository's certs/ as a user's would (found from the program's folder); the tests that
/// talk TLS themselves give the CLI in-process certificates with --certs.
/// </summary>
public sealed class BenchmarkCliTests
{
    private const string Cli = "netserver-bench";
    private static readonly TimeSpan s_timeout = TimeSpan.FromSeconds(60);

    [Theory]
    [InlineData("tcp", "echo")]
    [InlineData("tcp", "multicast")]
    [InlineData("uds", "echo")]
    [InlineData("uds", "multicast")]
    [InlineData("ssl", "echo")]
    [InlineData("ssl", "multicast")]
    [InlineData("udp", "echo")]
    [InlineData("udp", "multicast")]
    [InlineData("tcp", "reply")]
    [InlineData("uds", "reply")]
    [InlineData("ssl", "reply")]
    [InlineData("msg", "echo")]
    [InlineData("msg", "multicast")]
    [InlineData("proto", "echo")]
    public async Task Both_roles_in_one_process_report_traffic_and_no_error(string protocol, string scenario)
    {
        await using var bench = ProgramProcess.Start(Cli, s_timeout, protocol, scenario, "-c", "3", "-z", "1", "-q");
        var result = await ResultAsync(bench);
        Assert.Equal(0, await bench.WaitForExitAsync());

        Assert.Equal(protocol, result.GetProperty("protocol").GetString());
        Assert.Equal(scenario, result.GetProperty("scenario").GetString());
        Assert.Equal("both", result.GetProperty("role").GetString());
        Assert.Equal(3, result.GetProperty("clients").GetInt32());
        Assert.Equal(0, result.GetProperty("errors").GetInt64());
        var bytes = result.GetProperty("totalBytes").GetInt64();
        Assert.True(bytes > 0, "No traffic was measured.");
        Assert.Equal(bytes / 32, result.GetProperty("totalMessages").GetInt64());
        Assert.True(result.GetProperty("messagesPerSecond").GetDouble() > 0);
        Assert.True(result.GetProperty("allocatedBytesPerMessage").GetDouble() >= 0);
    }

    [Theory]
    [InlineData("tcp", "echo")]
    [InlineData("ssl", "echo")]
    [InlineData("uds", "echo")]
    [InlineData("ssl", "multicast")]
    [InlineData("uds", "multicast")]
    public async Task Msg_runs_over_each_stream_transport_and_counts_messages(string transport, string scenario)
    {
        await using var bench = ProgramProcess.Start(Cli, s_timeout, "msg", scenario, "--transport", transport, "-c", "3", "-s", "20", "-z", "1", "-q");
        var result = await ResultAsync(bench);
        Assert.Equal(0, await bench.WaitForExitAsync());

        Assert.Equal("msg", result.GetProperty("protocol").GetString());
        Assert.Equal(transport, result.GetProperty("transport").GetString());
        Assert.Equal(0, result.GetProperty("errors").GetInt64());
        var messages = result.GetProperty("totalMessages").GetInt64();
        Assert.True(messages > 0, "No message was counted.");

        // Messages are counted one by one; the data is messages x size, without the 4-byte prefixes.
        Assert.Equal(messages * 20, result.GetProperty("totalBytes").GetInt64());
    }

    [Theory]
    [InlineData("tcp", false)]
    [InlineData("ssl", false)]
    [InlineData("uds", false)]
    [InlineData("tcp", true)]
    [InlineData("ssl", true)]
    [InlineData("uds", true)]
    public async Task Proto_echo_runs_over_each_stream_transport_and_allocates_only_when_typed(string transport, bool typed)
    {
        await using var bench = ProgramProcess.Start(Cli, s_timeout,
            ["proto", "echo", "--transport", transport, "-c", "3", "-s", "20", "-z", "1", "-q", .. typed ? new[] { "--typed" } : []]);
        var result = await ResultAsync(bench);
        Assert.Equal(0, await bench.WaitForExitAsync());

        Assert.Equal("proto", result.GetProperty("protocol").GetString());
        Assert.Equal(transport, result.GetProperty("transport").GetString());
        Assert.Equal(typed, result.GetProperty("typed").GetBoolean());
        Assert.Equal(0, result.GetProperty("errors").GetInt64());
        var messages = result.GetProperty("totalMessages").GetInt64();
        Assert.True(messages > 0, "No envelope was counted.");

        // Envelopes are counted one by one; the data is messages x the payload's size.
        Assert.Equal(messages * 20, result.GetProperty("totalBytes").GetInt64());

        // protobuf-net allocates a BenchPing and its byte[] per deserialization. The typed echo
        // deserializes once per message (on the server), so it allocates at least most of that
        // (the window's edges and the run's own allocations move it a little); the other echo
        // deserializes nothing, so it stays far below.
        var protobufNet = result.GetProperty("protobufNetBytesPerDeserialize").GetDouble();
        var perMessage = result.GetProperty("allocatedBytesPerMessage").GetDouble();
        Assert.True(protobufNet >= 40, $"protobuf-net allocated {protobufNet} B per deserialization, less than a BenchPing and its data.");
        if (typed)
            Assert.True(perMessage >= 0.8 * protobufNet, $"The typed echo allocated {perMessage} B/msg, less than protobuf-net's {protobufNet} B: the server did not unpack.");
        else
            Assert.True(perMessage < 0.5 * protobufNet, $"The echo allocated {perMessage} B/msg against protobuf-net's {protobufNet} B per deserialization.");
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public async Task Proto_echo_server_returns_each_envelope_as_it_came_or_typed_in_a_reply_envelope(bool typed)
    {
        await using var server = ProgramProcess.Start(Cli, s_timeout,
            ["proto", "echo", "--role", "server", "-p", "0", "-z", "0", "-q", .. typed ? new[] { "--typed" } : []]);
        var port = PortOf(await server.WaitForLineAsync("Server listening on "));

        using var client = new ProtoClient(IPAddress.Loopback, port);
        Assert.True(await client.ConnectAsync().WaitAsync(s_timeout));
        var (from, to) = (Guid.NewGuid(), Guid.NewGuid());
        for (var i = 1; i <= 3; i++)
        {
            var sent = new MessageEnvelope("bench/echo") { From = from, To = to }.WithProperty("round", $"{i}");
            var ping = new Ping { Sequence = 1000 * i, Data = Enumerable.Range(0, 10 * i).Select(b => (byte)(b + i)).ToArray() };
            Assert.True(client.SendAsync(sent, ping));
            var echoed = await client.ReceiveEnvelopeAsync().AsTask().WaitAsync(s_timeout);

            Assert.Equal(sent.Id, echoed.Id);
            Assert.Equal("bench/echo", echoed.Header);
            Assert.Equal(sent.Timestamp?.ToUnixTimeMilliseconds(), echoed.Timestamp?.ToUnixTimeMilliseconds());
            var back = echoed.Unpack<Ping>();
            Assert.Equal(ping.Sequence, back.Sequence);
            Assert.Equal(ping.Data, back.Data);
            if (typed)
            {
                // A reply envelope of the server's own: sender and addressee swapped, no properties.
                Assert.Equal((to, from), (echoed.From, echoed.To));
                Assert.Empty(echoed.Properties);
            }
            else
            {
                // The envelope as it came, every field kept.
                Assert.Equal((from, to), (echoed.From, echoed.To));
                Assert.Equal($"{i}", echoed.GetProperty("round"));
            }
        }
    }

    [Fact]
    public async Task Proto_typed_server_in_its_own_process_allocates_what_protobuf_net_does_per_message()
    {
        // The server's figures come from its own process: only its sessions allocate there. It
        // needs three seconds with traffic for a steady-state window; it runs 10 s so that the
        // client's 6 s (at least three active seconds after a slow, JIT-bound start) fit even when a
        // loaded machine starts the client seconds late.
        await using var server = ProgramProcess.Start(Cli, s_timeout, "proto", "echo", "--typed", "--role", "server", "-p", "0", "-z", "10", "-q");
        var port = PortOf(await server.WaitForLineAsync("Server listening on "));
        await using var client = ProgramProcess.Start(Cli, s_timeout,
            "proto", "echo", "--role", "client", "-p", port.ToString(CultureInfo.InvariantCulture), "-c", "2", "-z", "6", "-q");

        var measured = await ResultAsync(client);
        Assert.Equal(0, await client.WaitForExitAsync());
        Assert.Equal(0, measured.GetProperty("errors").GetInt64());
        Assert.False(measured.TryGetProperty("typed", out _), "A client in its own process cannot know whether the server's echo is typed.");

        var result = await ResultAsync(server);
        Assert.Equal(0, await server.WaitForExitAsync());
        Assert.Equal("server", result.GetProperty("role").GetString());
        Assert.True(result.GetProperty("typed").GetBoolean());
        Assert.Equal(0, result.GetProperty("errors").GetInt64());
        var messages = result.GetProperty("totalMessages").GetInt64();
        Assert.True(messages > 0, "The server counted no envelope.");
        Assert.Equal(messages * 32, result.GetProperty("totalBytes").GetInt64());

        // One Unpack per envelope and nothing else per envelope: the engine, the envelope parser and
        // the typed send allocate nothing (a little slack for the process's own background work).
        var protobufNet = result.GetProperty("protobufNetBytesPerDeserialize").GetDouble();
        var perMessage = result.GetProperty("allocatedBytesPerMessage").GetDouble();
        Assert.InRange(perMessage, 0.9 * protobufNet, protobufNet + 8);
    }

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

    [Fact]
    public async Task Msg_echo_server_sends_every_message_back_whole_when_frames_split_across_writes()
    {
        await using var server = ProgramProcess.Start(Cli, s_timeout, "msg", "echo", "--role", "server", "-p", "0", "-z", "0", "-q");
        var port = PortOf(await server.WaitForLineAsync("Server listening on "));

        // 300 length-prefixed messages of 0 to 99 bytes, written in pieces of 1 to 70 bytes; each
        // answer is the same frame (the server sends the message back as a message of its own).
        using var timeout = new CancellationTokenSource(s_timeout);
        using var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
        await socket.ConnectAsync(new IPEndPoint(IPAddress.Loopback, port), timeout.Token);
        var stream = new MemoryStream();
        for (var i = 0; i < 300; i++)
        {
            var length = i * 37 % 100;
            var prefix = new byte[4];
            BinaryPrimitives.WriteInt32LittleEndian(prefix, length);
            stream.Write(prefix);
            stream.Write(Enumerable.Range(0, length).Select(b => (byte)(b + i)).ToArray());
        }

        var sent = stream.ToArray();
        var random = new Random(11);
        var sending = Task.Run(async () =>
        {
            for (var written = 0; written < sent.Length;)
            {
                var piece = Math.Min(random.Next(1, 71), sent.Length - written);
                await socket.SendAsync(sent.AsMemory(written, piece), SocketFlags.None, timeout.Token);
                written += piece;
            }
        });
        var received = new byte[sent.Length];
        for (var read = 0; read < received.Length;)
        {
            var n = await socket.ReceiveAsync(received.AsMemory(read), SocketFlags.None, timeout.Token);
            Assert.True(n > 0, "The server closed the connection.");
            read += n;
        }

        await sending.WaitAsync(s_timeout);
        Assert.Equal(sent, received);
    }

    [Fact]
    public async Task Our_msg_client_drives_any_server_that_sends_its_frames_back()
    {
        // A byte echo server returns every frame whole, so it answers msg echo as a message server would.
        using var listener = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        listener.Bind(new IPEndPoint(IPAddress.Loopback, 0));
        listener.Listen();
        using var stop = new CancellationTokenSource();
        var serving = EchoAllAsync(listener, secure: false, stop.Token);
        try
        {
            var port = ((IPEndPoint)listener.LocalEndPoint!).Port;
            await using var client = ProgramProcess.Start(Cli, s_timeout,
                "msg", "echo", "--role", "client", "-p", port.ToString(CultureInfo.InvariantCulture), "-c", "2", "-m", "50", "-s", "16", "-z", "1", "-q");
            var result = await ResultAsync(client);
            Assert.Equal(0, await client.WaitForExitAsync());
            Assert.Equal("client", result.GetProperty("role").GetString());
            Assert.Equal(0, result.GetProperty("errors").GetInt64());
            var messages = result.GetProperty("totalMessages").GetInt64();
            Assert.True(messages > 2 * 50, $"The client counted only {messages} messages.");
            Assert.Equal(messages * 16, result.GetProperty("totalBytes").GetInt64());
        }
        finally
        {
            await stop.CancelAsync();
            listener.Close();
            await serving.WaitAsync(s_timeout);
        }
    }

    [Theory]
    [InlineData("tcp")]
    [InlineData("uds")]
    [InlineData("ssl")]
    public async Task Latency_scenario_reports_round_trips_and_ordered_percentiles(string protocol)
    {
        await using var bench = ProgramProcess.Start(Cli, s_timeout, protocol, "latency", "-c", "2", "-z", "1", "-q");
        var result = await ResultAsync(bench);
        Assert.Equal(0, await bench.WaitForExitAsync());

        Assert.Equal(protocol, result.GetProperty("protocol").GetString());
        Assert.Equal("latency", result.GetProperty("scenario").GetString());
        Assert.Equal(2, result.GetProperty("clients").GetInt32());
        Assert.Equal(0, result.GetProperty("errors").GetInt64());
        AssertSaneRoundTrips(result);
    }

    [Theory]
    [InlineData("tcp")]
    [InlineData("ssl")]
    public async Task Our_latency_client_times_any_echo_server(string protocol)
    {
        // The plain socket (or SslStream) echo server of the seed wire shape, as echoref's server is.
        using var certificates = new CertificateFolder();
        using var listener = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        listener.Bind(new IPEndPoint(IPAddress.Loopback, 0));
        listener.Listen();
        using var stop = new CancellationTokenSource();
        var serving = EchoAllAsync(listener, protocol == "ssl", stop.Token);
        try
        {
            var port = ((IPEndPoint)listener.LocalEndPoint!).Port;
            await using var client = ProgramProcess.Start(Cli, s_timeout,
                [protocol, "latency", "--role", "client", "-p", port.ToString(CultureInfo.InvariantCulture), "-z", "1", "-q", .. certificates.Option(protocol)]);
            var result = await ResultAsync(client);
            Assert.Equal(0, await client.WaitForExitAsync());
            Assert.Equal("client", result.GetProperty("role").GetString());
            Assert.Equal(1, result.GetProperty("clients").GetInt32());
            Assert.Equal(0, result.GetProperty("errors").GetInt64());
            AssertSaneRoundTrips(result);
        }
        finally
        {
            await stop.CancelAsync();
            listener.Close();
            await serving.WaitAsync(s_timeout);
        }
    }

    [Fact]
    public async Task Reply_server_answers_every_message_unchanged_when_messages_split_across_writes()
    {
        await using var server = ProgramProcess.Start(Cli, s_timeout, "tcp", "reply", "--role", "server", "-p", "0", "-s", "32", "-z", "0", "-q");
        var port = PortOf(await server.WaitForLineAsync("Server listening on "));

        // 200 numbered messages written in pieces of 1 to 70 bytes, so most end or start inside a
        // piece; after each piece, the answers to the messages it completed are read back. A piece
        // that ends inside a message leaves its start with the server until the next piece.
        using var timeout = new CancellationTokenSource(s_timeout);
        using var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
        await socket.ConnectAsync(new IPEndPoint(IPAddress.Loopback, port), timeout.Token);
        var sent = Enumerable.Range(0, 200 * 32).Select(static i => (byte)((i / 32) + (i % 32))).ToArray();
        var received = new byte[sent.Length];
        var random = new Random(7);
        var (written, read) = (0, 0);
        while (written < sent.Length)
        {
            var piece = Math.Min(random.Next(1, 71), sent.Length - written);
            await socket.SendAsync(sent.AsMemory(written, piece), SocketFlags.None, timeout.Token);
            written += piece;
            for (var answered = written / 32 * 32; read < answered;)
            {
                var n = await socket.ReceiveAsync(received.AsMemory(read, answered - read), SocketFlags.None, timeout.Token);
                Assert.True(n > 0, "The server closed the connection.");
                read += n;
            }
        }

        Assert.Equal(sent, received);
    }

    [Theory]
    [InlineData(1)]
    [InlineData(100)]
    public async Task Udp_echo_client_gets_back_what_the_server_echoed_except_the_losses_it_reports(int clients)
    {
        // 100 clients x 1000 datagrams in flight overflow the socket buffers: losses are expected, and must be counted, not failed.
        await using var bench = ProgramProcess.Start(Cli, s_timeout, "udp", "echo", "-c", clients.ToString(CultureInfo.InvariantCulture), "-z", "1", "-q");
        var result = await ResultAsync(bench);
        Assert.Equal(0, await bench.WaitForExitAsync());
        Assert.Equal(0, result.GetProperty("errors").GetInt64());
        Assert.True(result.GetProperty("totalMessages").GetInt64() > 0, "No echo was measured.");

        var d = result.GetProperty("datagrams");
        long Figure(string name) => d.GetProperty(name).GetInt64();
        var (sent, received, lost) = (Figure("sent"), Figure("received"), Figure("lost"));
        var (serverReceived, serverSent) = (Figure("serverReceived"), Figure("serverSent"));
        Assert.Equal(sent - received, lost);
        Assert.True(serverReceived <= sent, $"The server received {serverReceived} datagrams of {sent} sent.");
        Assert.True(serverSent <= serverReceived, $"The server echoed {serverSent} datagrams of {serverReceived} received.");
        Assert.True(received <= serverSent, $"The clients received {received} datagrams, the server echoed {serverSent}.");
        Assert.True(serverSent - received <= lost, $"Echoed {serverSent}, received {received}, but only {lost} reported lost.");
    }

    [Fact]
    public async Task Udp_multicast_clients_count_what_they_missed_by_the_datagrams_numbers()
    {
        await using var bench = ProgramProcess.Start(Cli, s_timeout, "udp", "multicast", "-c", "3", "-z", "1", "-q");
        var result = await ResultAsync(bench);
        Assert.Equal(0, await bench.WaitForExitAsync());
        Assert.Equal(0, result.GetProperty("errors").GetInt64());
        Assert.True(result.GetProperty("totalMessages").GetInt64() > 0, "No multicast was measured.");

        var d = result.GetProperty("datagrams");
        var (expected, received, lost) = (d.GetProperty("expected").GetInt64(), d.GetProperty("received").GetInt64(), d.GetProperty("lost").GetInt64());
        Assert.Equal(expected - received, lost);
        Assert.True(lost >= 0);
        Assert.True(expected <= 3 * d.GetProperty("serverSent").GetInt64(), $"The clients expected {expected} datagrams, more than 3 x what the server sent.");
    }

    [Theory]
    [InlineData("tcp")]
    [InlineData("ssl")]
    [InlineData("udp")]
    [InlineData("msg")]
    [InlineData("proto")]
    [InlineData("ws")]
    [InlineData("wss")]
    public async Task Server_and_client_roles_run_as_separate_processes(string protocol)
    {
        using var certificates = new CertificateFolder();
        await using var server = ProgramProcess.Start(Cli, s_timeout, [protocol, "echo", "--role", "server", "-p", "0", "-z", "0", "-q", .. certificates.Option(protocol)]);
        var port = PortOf(await server.WaitForLineAsync("Server listening on "));

        await using var client = ProgramProcess.Start(Cli, s_timeout,
            [protocol, "echo", "--role", "client", "-p", port.ToString(CultureInfo.InvariantCulture), "-c", "2", "-z", "1", "-q", .. certificates.Option(protocol)]);
        var result = await ResultAsync(client);
        Assert.Equal(0, await client.WaitForExitAsync());
        Assert.Equal(protocol, result.GetProperty("protocol").GetString());
        Assert.Equal("client", result.GetProperty("role").GetString());
        Assert.Equal(0, result.GetProperty("errors").GetInt64());
        Assert.True(result.GetProperty("totalMessages").GetInt64() > 0, "The client measured no echo.");
        if (protocol == "udp")
        {
            var d = result.GetProperty("datagrams");
            Assert.Equal(d.GetProperty("sent").GetInt64() - d.GetProperty("received").GetInt64(), d.GetProperty("lost").GetInt64());
        }
    }

    [Fact]
    public async Task Udp_multicast_server_and_clients_run_as_separate_processes()
    {
        // The group's port must be known to both processes: one free right now.
        var port = FreeUdpPort().ToString(CultureInfo.InvariantCulture);
        await using var server = ProgramProcess.Start(Cli, s_timeout, "udp", "multicast", "--role", "server", "-p", port, "-z", "0", "-q");
        await server.WaitForLineAsync("Server listening on ");

        await using var client = ProgramProcess.Start(Cli, s_timeout, "udp", "multicast", "--role", "client", "-p", port, "-c", "2", "-z", "1", "-q");
        var result = await ResultAsync(client);
        Assert.Equal(0, await client.WaitForExitAsync());
        Assert.Equal("client", result.GetProperty("role").GetString());
        Assert.Equal(0, result.GetProperty("errors").GetInt64());
        Assert.True(result.GetProperty("totalMessages").GetInt64() > 0, "The clients received no multicast.");
        var d = result.GetProperty("datagrams");
        Assert.Equal(d.GetProperty("expected").GetInt64() - d.GetProperty("received").GetInt64(), d.GetProperty("lost").GetInt64());
    }

    [Fact]
    public async Task Our_udp_client_drives_any_datagram_echo_server()
    {
        // A plain socket that sends every datagram back to its sender, as echoref's udpserver does.
        using var echo = new Socket(AddressFamily.InterNetwork, SocketType.Dgram, ProtocolType.Udp);
        echo.Bind(new IPEndPoint(IPAddress.Loopback, 0));
        using var stop = new CancellationTokenSource();
        var serving = EchoDatagramsAsync(echo, stop.Token);
        try
        {
            var port = ((IPEndPoint)echo.LocalEndPoint!).Port;
            await using var client = ProgramProcess.Start(Cli, s_timeout,
                "udp", "echo", "--role", "client", "-p", port.ToString(CultureInfo.InvariantCulture), "-c", "2", "-m", "10", "-s", "16", "-z", "3", "-q"); // 3 s: one round of echoes fits even on a loaded machine
            var result = await ResultAsync(client);
            Assert.Equal(0, await client.WaitForExitAsync());
            Assert.Equal(0, result.GetProperty("errors").GetInt64());
            Assert.True(result.GetProperty("totalMessages").GetInt64() > 2 * 10, "The client measured less than one round of echoes.");
            Assert.Equal(result.GetProperty("totalBytes").GetInt64() / 16, result.GetProperty("totalMessages").GetInt64());
        }
        finally
        {
            await stop.CancelAsync();
            echo.Close();
            await serving.WaitAsync(s_timeout);
        }
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public async Task Any_datagram_client_gets_every_datagram_back_from_our_udp_server(bool dedicatedThread)
    {
        string[] arguments = ["udp", "echo", "--role", "server", "-p", "0", "-z", "0", "-q", .. dedicatedThread ? ["--dedicated-thread"] : Array.Empty<string>()];
        await using var server = ProgramProcess.Start(Cli, s_timeout, arguments);
        var port = PortOf(await server.WaitForLineAsync("Server listening on "));

        // One datagram at a time, so none can be lost to a full buffer; each comes back unchanged.
        using var timeout = new CancellationTokenSource(s_timeout);
        using var socket = new Socket(AddressFamily.InterNetwork, SocketType.Dgram, ProtocolType.Udp);
        await socket.ConnectAsync(new IPEndPoint(IPAddress.Loopback, port), timeout.Token);
        var received = new byte[2048];
        for (var round = 0; round < 200; round++)
        {
            var sent = Enumerable.Range(0, 1 + (round * 7 % 1400)).Select(i => (byte)(i + round)).ToArray();
            await socket.SendAsync(sent, SocketFlags.None, timeout.Token);
            var n = await socket.ReceiveAsync(received, SocketFlags.None, timeout.Token);
            Assert.Equal(sent, received[..n]);
        }
    }

    [Theory]
    [InlineData("ssl")]
    [InlineData("tcp")]
    public async Task Handshake_scenario_reports_handshakes_and_no_error(string protocol)
    {
        await using var bench = ProgramProcess.Start(Cli, s_timeout, protocol, "handshake", "-c", "4", "-z", "1", "-q");
        var result = await ResultAsync(bench);
        Assert.Equal(0, await bench.WaitForExitAsync());

        Assert.Equal(protocol, result.GetProperty("protocol").GetString());
        Assert.Equal("handshake", result.GetProperty("scenario").GetString());
        Assert.Equal("both", result.GetProperty("role").GetString());
        Assert.Equal(4, result.GetProperty("clients").GetInt32());
        Assert.Equal(0, result.GetProperty("errors").GetInt64());
        var handshakes = result.GetProperty("handshakes").GetInt64();
        Assert.True(handshakes > 0, "No handshake was completed.");
        Assert.True(result.GetProperty("handshakesPerSecond").GetDouble() > 0);
        Assert.True(result.GetProperty("handshakeNs").GetDouble() > 0);

        // Every cycle makes new objects (socket, session; for TLS the SslStream), so zero would mean the figure is not measured.
        Assert.True(result.GetProperty("allocatedBytesPerHandshake").GetDouble() > 0);
    }

    [Theory]
    [InlineData("tcp")]
    [InlineData("ssl")]
    public async Task Our_client_drives_any_echo_server_with_the_seed_wire_shape(string protocol)
    {
        // A plain socket (or SslStream) echo server: whatever arrives goes back. The client writes
        // 50 x 16 bytes per connection once, then bounces what it receives, and counts messages as bytes / 16.
        using var certificates = new CertificateFolder();
        using var listener = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        listener.Bind(new IPEndPoint(IPAddress.Loopback, 0));
        listener.Listen();
        using var stop = new CancellationTokenSource();
        var serving = EchoAllAsync(listener, protocol == "ssl", stop.Token);
        try
        {
            var port = ((IPEndPoint)listener.LocalEndPoint!).Port;
            await using var client = ProgramProcess.Start(Cli, s_timeout,
                [protocol, "echo", "--role", "client", "-p", port.ToString(CultureInfo.InvariantCulture), "-c", "2", "-m", "50", "-s", "16", "-z", "1", "-q", .. certificates.Option(protocol)]);
            var result = await ResultAsync(client);
            Assert.Equal(0, await client.WaitForExitAsync());
            Assert.Equal(0, result.GetProperty("errors").GetInt64());
            var bytes = result.GetProperty("totalBytes").GetInt64();
            Assert.True(bytes > 2 * 50 * 16, $"The client measured only {bytes} bytes of echo.");
            Assert.Equal(bytes / 16, result.GetProperty("totalMessages").GetInt64());
        }
        finally
        {
            await stop.CancelAsync();
            listener.Close();
            await serving.WaitAsync(s_timeout);
        }
    }

    [Theory]
    [InlineData("tcp")]
    [InlineData("ssl")]
    public async Task Any_echo_shaped_client_drives_our_server(string protocol)
    {
        using var certificates = new CertificateFolder();
        await using var server = ProgramProcess.Start(Cli, s_timeout, [protocol, "echo", "--role", "server", "-p", "0", "-z", "0", "-q", .. certificates.Option(protocol)]);
        var port = PortOf(await server.WaitForLineAsync("Server listening on "));

        // 1000 x 32 bytes in flight, bounced 20 times; every byte comes back unchanged (over TLS: an SslStream client).
        using var timeout = new CancellationTokenSource(s_timeout);
        using var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        await socket.ConnectAsync(new IPEndPoint(IPAddress.Loopback, port), timeout.Token);
        await using var stream = protocol == "ssl"
            ? await SecureAsync(socket, server: false, timeout.Token)
            : new NetworkStream(socket, ownsSocket: true);
        var sent = Enumerable.Range(0, 32_000).Select(static i => (byte)(i * 7)).ToArray();
        var received = new byte[sent.Length];
        for (var round = 0; round < 20; round++)
        {
            await stream.WriteAsync(sent, timeout.Token);
            for (var got = 0; got < received.Length;)
            {
                var n = await stream.ReadAsync(received.AsMemory(got), timeout.Token);
                Assert.True(n > 0, "The server closed the connection.");
                got += n;
            }

            Assert.Equal(sent, received);
        }
    }

    [Theory]
    [InlineData("Unknown protocol", "foo", "echo")]
    [InlineData("Unknown scenario", "tcp", "bar")]
    [InlineData("udp has no handshake", "udp", "handshake")]
    [InlineData("udp has no reply", "udp", "reply")]
    [InlineData("udp has no latency", "udp", "latency")]
    [InlineData("msg has no reply", "msg", "reply")]
    [InlineData("Unknown transport", "msg", "echo", "--transport", "udp")]
    [InlineData("--transport is for msg and proto", "tcp", "echo", "--transport", "ssl")]
    [InlineData("proto has no multicast", "proto", "multicast")]
    [InlineData("--typed is for proto echo", "msg", "echo", "--typed")]
    [InlineData("needs --size 5 or more", "proto", "echo", "-s", "4")]
    [InlineData("Option -c needs an integer", "tcp", "echo", "-c", "abc")]
    [InlineData("http has no echo scenario", "http", "echo")]
    [InlineData("get, pipeline and trace are http and https scenarios", "tcp", "get")]
    [InlineData("Cannot load the TLS certificates", "ssl", "echo", "--certs", "/nonexistent/netserver-bench-certs")]
    public async Task Bad_arguments_exit_with_code_2_and_say_what_is_wrong(string message, params string[] args)
    {
        await using var bench = ProgramProcess.Start(Cli, s_timeout, args);
        Assert.Equal(2, await bench.WaitForExitAsync());
        Assert.Contains(message, bench.Transcript, StringComparison.Ordinal);
    }

    /// <summary>A latency result: round trips were timed, and min &lt;= p50 &lt;= p99 &lt;= p99.9 &lt;= max, all above zero.</summary>
    private static void AssertSaneRoundTrips(JsonElement result)
    {
        Assert.True(result.GetProperty("roundTrips").GetInt64() > 0, "No round trip was timed.");
        Assert.True(result.GetProperty("roundTripsPerSecond").GetDouble() > 0);
        var times = new[] { "minNs", "p50Ns", "p99Ns", "p999Ns", "maxNs" }.Select(name => result.GetProperty(name).GetInt64()).ToArray();
        Assert.True(times[0] > 0, $"A round trip took no time: {string.Join(", ", times)} ns.");
        for (var i = 1; i < times.Length; i++)
            Assert.True(times[i - 1] <= times[i], $"Round-trip times (min, p50, p99, p99.9, max) out of order: {string.Join(", ", times)} ns.");
        var mean = result.GetProperty("meanNs").GetDouble();
        Assert.True(times[0] <= mean && mean <= times[^1], $"The mean {mean} ns is outside [min, max].");
    }

    /// <summary>The JSON result line the CLI prints last.</summary>
    private static async Task<JsonElement> ResultAsync(ProgramProcess bench)
    {
        var line = await bench.WaitForLineAsync("{\"protocol\"");
        using var document = JsonDocument.Parse(line);
        return document.RootElement.Clone();
    }

    private static int PortOf(string listening)
    {
        // "Server listening on 127.0.0.1:PORT; stops ..."
        var endpoint = listening["Server listening on ".Length..].Split(';')[0];
        return IPEndPoint.Parse(endpoint).Port;
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

    private static int FreeUdpPort()
    {
        using var probe = new Socket(AddressFamily.InterNetwork, SocketType.Dgram, ProtocolType.Udp);
        probe.Bind(new IPEndPoint(IPAddress.Any, 0));
        return ((IPEndPoint)probe.LocalEndPoint!).Port;
    }

    private static async Task EchoDatagramsAsync(Socket socket, CancellationToken token)
    {
        var buffer = new byte[65536];
        EndPoint any = new IPEndPoint(IPAddress.Any, 0);
        try
        {
            while (true)
            {
                var result = await socket.ReceiveFromAsync(buffer, SocketFlags.None, any, token);
                await socket.SendToAsync(buffer.AsMemory(0, result.ReceivedBytes), SocketFlags.None, result.RemoteEndPoint, token);
            }
        }
        catch (Exception e) when (e is OperationCanceledException or SocketException or ObjectDisposedException)
        {
            // Stopped.
        }
    }

    private static async Task EchoAllAsync(Socket listener, bool secure, CancellationToken token)
    {
        var connections = new System.Collections.Generic.List<Task>();
        try
        {
            while (true)
            {
                var peer = await listener.AcceptAsync(token);
                connections.Add(EchoAsync(peer, secure, token));
            }
        }
        catch (Exception e) when (e is OperationCanceledException or SocketException or ObjectDisposedException)
        {
            // Stopped.
        }

        await Task.WhenAll(connections);
    }

    private static async Task EchoAsync(Socket peer, bool secure, CancellationToken token)
    {
        try
        {
            await using var stream = secure ? await SecureAsync(peer, server: true, token) : new NetworkStream(peer, ownsSocket: true);
            var buffer = new byte[4096];
            int n;
            while ((n = await stream.ReadAsync(buffer, token)) > 0)
                await stream.WriteAsync(buffer.AsMemory(0, n), token);
        }
        catch (Exception e) when (e is OperationCanceledException or SocketException or IOException or System.Security.Authentication.AuthenticationException)
        {
            // The client went away or the test is done.
        }
        finally
        {
            peer.Dispose();
        }
    }

    /// <summary>TLS over <paramref name="socket"/> with the in-process test certificates (those <see cref="CertificateFolder"/> gives the CLI).</summary>
    private static async Task<Stream> SecureAsync(Socket socket, bool server, CancellationToken token)
    {
        var tls = new SslStream(new NetworkStream(socket, ownsSocket: true));
        try
        {
            if (server)
            {
                await tls.AuthenticateAsServerAsync(new SslServerAuthenticationOptions { ServerCertificate = TestCertificates.Server }, token);
            }
            else
            {
                var policy = new X509ChainPolicy { TrustMode = X509ChainTrustMode.CustomRootTrust, RevocationMode = X509RevocationMode.NoCheck };
                policy.CustomTrustStore.Add(TestCertificates.Authority);
                await tls.AuthenticateAsClientAsync(new SslClientAuthenticationOptions { TargetHost = "127.0.0.1", CertificateChainPolicy = policy }, token);
            }

            return tls;
        }
        catch
        {
            await tls.DisposeAsync();
            throw;
        }
    }

    /// <summary>
    /// A temporary certificate folder for the CLI's --certs: the in-process test server certificate
    /// as server.pfx (the CLI's password) and the test CA as ca.pem.
    /// </summary>
    private sealed class CertificateFolder : IDisposable
    {
        private readonly string _path = Path.Combine(Path.GetTempPath(), $"netserver-bench-certs-{Guid.NewGuid():N}");

        public CertificateFolder()
        {
            Directory.CreateDirectory(_path);
            File.WriteAllBytes(Path.Combine(_path, "server.pfx"), TestCertificates.Server.Export(X509ContentType.Pkcs12, "netserver"));
            File.WriteAllText(Path.Combine(_path, "ca.pem"), TestCertificates.Authority.ExportCertificatePem());
        }

        /// <summary>The --certs option for <paramref name="protocol"/> (none unless ssl or wss).</summary>
        public string[] Option(string protocol) => protocol is "ssl" or "wss" ? ["--certs", _path] : [];

        public void Dispose() => Directory.Delete(_path, recursive: true);
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

    /// <summary>message Ping { int64 sequence = 1; bytes data = 2; }: the fields of the CLI's BenchPing, declared here as any peer of the wire would.</summary>
    [ProtoContract]
    public sealed class Ping
    {
        [ProtoMember(1)]
        public long Sequence { get; set; }

        [ProtoMember(2)]
        public byte[]? Data { get; set; }
    }
}
