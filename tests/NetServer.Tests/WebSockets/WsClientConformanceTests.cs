using System;
using System.Collections.Concurrent;
using System.Collections.Generic;
using System.Linq;
using System.Net;
using System.Net.Sockets;
using System.Net.WebSockets;
using System.Text;
using System.Threading;
using System.Threading.Tasks;
using NetServer.Tests.Infrastructure;
using Xunit;

namespace NetServer.Tests.WebSockets;

/// <summary>
/// Our WsClient against a fake server written by hand on a raw listening socket: the request it
/// sends, the answers it must refuse (RFC 6455 4.1), every frame masked with a fresh key, and the
/// faults of a server's frames.
/// </summary>
public sealed class WsClientConformanceTests
{
    private static readonly TimeSpan s_wait = TimeSpan.FromSeconds(10);

    private sealed class RecordingClient : WsClient
    {
        public RecordingClient(int port)
            : base(IPAddress.Loopback, port) => WsOptions.HandshakeTimeout = s_wait; // no test here waits for it to expire

        public ConcurrentQueue<string> Errors { get; } = new();

        public ConcurrentQueue<int> Closes { get; } = new();

        public override void OnWsError(string error) => Errors.Enqueue(error);

        public override void OnWsClose(byte[] buffer, long offset, long size, int status = WsCloseStatus.Normal) => Closes.Enqueue(status);
    }

    /// <summary>A listening socket on 127.0.0.1 port 0 that plays the server, one accepted connection at a time.</summary>
    private sealed class FakeServer : IDisposable
    {
        private readonly Socket _listener = new(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);

        public FakeServer()
        {
            _listener.Bind(new IPEndPoint(IPAddress.Loopback, 0));
            _listener.Listen(4);
        }

        public int Port => ((IPEndPoint)_listener.LocalEndPoint!).Port;

        /// <summary>Accepts the client and reads its upgrade request.</summary>
        public async Task<Peer> AcceptAsync()
        {
            var socket = await _listener.AcceptAsync().WaitAsync(s_wait);
            socket.NoDelay = true;
            var peer = new Peer(socket);
            peer.Request = await peer.Reader.ReadHeadAsync();
            return peer;
        }

        public void Dispose() => _listener.Dispose();
    }

    private sealed class Peer(Socket socket) : IDisposable
    {
        public Socket Socket { get; } = socket;

        public WsFrameReader Reader { get; } = new(socket);

        public string Request { get; set; } = string.Empty;

        public string Key => Field(Request, "Sec-WebSocket-Key") ?? string.Empty;

        /// <summary>A correct 101 for the request, with <paramref name="fields"/> added.</summary>
        public string Accepting(string fields = "") =>
            $"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: {WsWire.Accept(Key)}\r\n{fields}\r\n";

        public async Task SendAsync(byte[] bytes)
        {
            var sent = 0;
            while (sent < bytes.Length)
                sent += await Socket.SendAsync(bytes.AsMemory(sent), SocketFlags.None).AsTask().WaitAsync(s_wait);
        }

        public Task SendAsync(string text) => SendAsync(Encoding.ASCII.GetBytes(text));

        public void Dispose() => Socket.Dispose();
    }

    /// <summary>Connects <paramref name="client"/> to the fake server, which accepts the upgrade (with <paramref name="fields"/>).</summary>
    private static async Task<Peer> UpgradeAsync(FakeServer server, RecordingClient client, string fields = "")
    {
        var connecting = client.ConnectAsync(CancellationToken.None);
        var peer = await server.AcceptAsync();
        await peer.SendAsync(peer.Accepting(fields));
        Assert.True(await connecting.WaitAsync(s_wait));
        return peer;
    }

    private static string? Field(string head, string name)
    {
        foreach (var line in head.Split("\r\n"))
        {
            if (line.StartsWith(name + ":", StringComparison.OrdinalIgnoreCase))
                return line.Substring(name.Length + 1).Trim();
        }

        return null;
    }

    [Fact]
    public async Task The_client_sends_a_complete_upgrade_request_with_a_fresh_key_per_connect()
    {
        using var server = new FakeServer();
        using var client = new RecordingClient(server.Port);
        var keys = new List<string>();
        for (var i = 0; i < 2; i++)
        {
            var connecting = client.ConnectAsync(CancellationToken.None);
            using var peer = await server.AcceptAsync();
            var lines = peer.Request.Split("\r\n");
            Assert.Equal("GET / HTTP/1.1", lines[0]);
            Assert.NotNull(Field(peer.Request, "Host"));
            Assert.Equal("websocket", Field(peer.Request, "Upgrade"), ignoreCase: true);
            Assert.Contains("upgrade", Field(peer.Request, "Connection")!, StringComparison.OrdinalIgnoreCase);
            Assert.Equal("13", Field(peer.Request, "Sec-WebSocket-Version"));
            Assert.Equal(16, Convert.FromBase64String(peer.Key).Length);
            Assert.Equal(Convert.ToBase64String(client.WsNonce), peer.Key);
            keys.Add(peer.Key);

            await peer.SendAsync(peer.Accepting());
            Assert.True(await connecting.WaitAsync(s_wait));
            peer.Dispose(); // the server goes away, so the client's disconnect need not wait for it
            client.Disconnect();
        }

        Assert.NotEqual(keys[0], keys[1]);
        Assert.Empty(client.Errors);
    }

    /// <summary>What the fake server answers, given the request's key ({accept}: the right accept value).</summary>
    public static TheoryData<string, string> BadAnswers => new()
    {
        { "a wrong accept value", $"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: {WsWire.SampleAccept}\r\n\r\n" },
        { "no accept field", "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n" },
        { "two accept fields", "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: {accept}\r\nSec-WebSocket-Accept: {accept}\r\n\r\n" },
        { "no Upgrade field", "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: {accept}\r\n\r\n" },
        { "another protocol in Upgrade", "HTTP/1.1 101 Switching Protocols\r\nUpgrade: h2c\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: {accept}\r\n\r\n" },
        { "no Connection field", "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nSec-WebSocket-Accept: {accept}\r\n\r\n" },
        { "a 404", "HTTP/1.1 404 Not Found\r\nContent-Length: 9\r\n\r\nnot here!" },
        { "a 200", "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok" },
        { "a subprotocol not offered", "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: {accept}\r\nSec-WebSocket-Protocol: superchat\r\n\r\n" },
        { "two subprotocols", "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: {accept}\r\nSec-WebSocket-Protocol: chat, chat\r\n\r\n" },
        { "an extension not offered", "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: {accept}\r\nSec-WebSocket-Extensions: permessage-deflate\r\n\r\n" },
        { "not HTTP", "SSH-2.0-OpenSSH_9.6\r\n\r\n" },
    };

    [Theory]
    [MemberData(nameof(BadAnswers))]
    public async Task A_bad_answer_to_the_upgrade_throws_and_calls_OnWsError(string name, string answer)
    {
        using var server = new FakeServer();
        using var client = new RecordingClient(server.Port);
        client.WsOptions.SubProtocols.Add("chat"); // offered; "superchat" is not
        var connecting = client.ConnectAsync(CancellationToken.None);
        using var peer = await server.AcceptAsync();
        await peer.SendAsync(answer.Replace("{accept}", WsWire.Accept(peer.Key), StringComparison.Ordinal));

        var error = await Assert.ThrowsAsync<WebSocketException>(() => connecting.WaitAsync(s_wait));
        Assert.False(string.IsNullOrEmpty(error.Message), name);
        Assert.NotEmpty(client.Errors);
        Assert.False(client.IsWebSocket);
        await peer.Reader.ReadToEndAsync(); // and the client closed the connection
    }

    [Theory]
    [InlineData("HTTP/1.1 101 Switching Protocols\r\nUpgrade: WebSocket\r\nConnection: keep-alive, Upgrade\r\nSec-WebSocket-Accept: {accept}\r\n\r\n")]
    [InlineData("HTTP/1.1 101 Web Socket Protocol Handshake\r\nDate: Thu, 01 Jan 2026 00:00:00 GMT\r\nServer: fake\r\nupgrade: websocket\r\nconnection: upgrade\r\nsec-websocket-accept:   {accept}  \r\n\r\n")]
    [InlineData("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: {accept}\r\nSec-WebSocket-Protocol: chat\r\n\r\n")]
    public async Task A_valid_answer_in_any_case_and_with_other_fields_is_accepted(string answer)
    {
        using var server = new FakeServer();
        using var client = new RecordingClient(server.Port);
        client.WsOptions.SubProtocols.Add("chat");
        var connecting = client.ConnectAsync(CancellationToken.None);
        using var peer = await server.AcceptAsync();
        Assert.Equal("chat", Field(peer.Request, "Sec-WebSocket-Protocol"));
        await peer.SendAsync(answer.Replace("{accept}", WsWire.Accept(peer.Key), StringComparison.Ordinal));
        Assert.True(await connecting.WaitAsync(s_wait));
        Assert.Equal(answer.Contains("Protocol: chat", StringComparison.Ordinal) ? "chat" : null, client.WsSubProtocol);
        Assert.Empty(client.Errors);
    }

    [Fact]
    public async Task An_extension_other_than_the_one_offered_is_refused()
    {
        using var server = new FakeServer();
        using var client = new RecordingClient(server.Port);
        client.WsOptions.Deflate = new WsDeflateOptions();
        var connecting = client.ConnectAsync(CancellationToken.None);
        using var peer = await server.AcceptAsync();
        Assert.Contains("permessage-deflate", Field(peer.Request, "Sec-WebSocket-Extensions"), StringComparison.Ordinal);
        await peer.SendAsync(peer.Accepting("Sec-WebSocket-Extensions: x-webkit-deflate-frame\r\n"));
        await Assert.ThrowsAsync<WebSocketException>(() => connecting.WaitAsync(s_wait));
        Assert.NotEmpty(client.Errors);
    }

    [Fact]
    public async Task The_client_masks_every_frame_with_a_fresh_key()
    {
        using var server = new FakeServer();
        using var client = new RecordingClient(server.Port);
        var connecting = client.ConnectAsync(CancellationToken.None);
        using var peer = await server.AcceptAsync();
        await peer.SendAsync(peer.Accepting());
        Assert.True(await connecting.WaitAsync(s_wait));

        var sent = new List<(int Opcode, byte[] Payload)>();
        for (var i = 0; i < 20; i++)
        {
            var text = $"message {i} " + new string('x', i * 50);
            Assert.True(client.SendTextAsync(text));
            sent.Add((WsWire.Text, Encoding.UTF8.GetBytes(text)));
        }

        var binary = WsWire.Payload(70000, text: false);
        Assert.True(await client.SendMessageAsync(binary).AsTask().WaitAsync(s_wait));
        sent.Add((WsWire.Binary, binary));
        Assert.True(client.SendPingAsync("ping"));
        sent.Add((WsWire.Ping, "ping"u8.ToArray()));
        Assert.True(client.Close(1000));
        sent.Add((WsWire.Close, WsWire.ClosePayload(1000, [])));

        var keys = new HashSet<uint>();
        foreach (var (opcode, payload) in sent)
        {
            var frame = await peer.Reader.ReadFrameAsync();
            Assert.True(frame is not null, "The client's frames stopped.");
            Assert.True(frame.Masked, $"An unmasked client frame: {frame}");
            Assert.Equal(opcode, frame.Opcode);
            WsRawClient.AssertBytes(payload, frame.Payload); // unmasked with the key it carries
            keys.Add(frame.MaskKey);
        }

        Assert.Equal(sent.Count, keys.Count);
        Assert.Empty(client.Errors);
    }

    /// <summary>A bad server frame, and the close code the client must answer it with.</summary>
    public static TheoryData<string, string, int> BadServerFrames => new()
    {
        { "masked", Convert.ToHexString(WsWire.Frame(WsWire.Text, "masked by the server"u8, mask: true)), 1002 },
        { "RSV1 without an extension", Convert.ToHexString(WsWire.Frame(WsWire.Text, "x"u8, rsv: 4, mask: false)), 1002 },
        { "reserved opcode", Convert.ToHexString(WsWire.Frame(11, [], mask: false)), 1002 },
        { "fragmented ping", Convert.ToHexString(WsWire.Frame(WsWire.Ping, [], fin: false, mask: false)), 1002 },
        { "continuation first", Convert.ToHexString(WsWire.Frame(WsWire.Continuation, "x"u8, mask: false)), 1002 },
        { "invalid UTF-8", Convert.ToHexString(WsWire.Frame(WsWire.Text, WsWire.Hex("48c0af"), mask: false)), 1007 },
        { "close code 1005", Convert.ToHexString(WsWire.Frame(WsWire.Close, WsWire.ClosePayload(1005, []), mask: false)), 1002 },
    };

    [Theory]
    [MemberData(nameof(BadServerFrames))]
    public async Task A_bad_server_frame_is_answered_with_its_close_code(string name, string hex, int code)
    {
        using var server = new FakeServer();
        using var client = new RecordingClient(server.Port);
        var connecting = client.ConnectAsync(CancellationToken.None);
        using var peer = await server.AcceptAsync();
        await peer.SendAsync(peer.Accepting());
        Assert.True(await connecting.WaitAsync(s_wait));

        await peer.SendAsync(WsWire.Hex(hex));
        var close = await peer.Reader.ReadFrameAsync();
        Assert.True(close is { Opcode: WsWire.Close, Masked: true }, $"{name}: expected the client's close, got {close}");
        Assert.Equal(code, close.CloseCode);
        Assert.NotEmpty(client.Errors);
        Assert.Empty(await peer.Reader.ReadToEndAsync()); // then it closes, nothing more sent
    }

    [Fact]
    public async Task A_fragmented_server_message_with_pings_between_is_delivered_whole_and_the_pings_answered()
    {
        using var server = new FakeServer();
        using var client = new RecordingClient(server.Port);
        using var peer = await UpgradeAsync(server, client);
        var text = Encoding.UTF8.GetBytes("fragments from the server: κόσμε 🎉");
        await peer.SendAsync(WsWire.Concat(
            WsWire.Frame(WsWire.Text, text.AsSpan(0, 30), fin: false, mask: false),
            WsWire.Frame(WsWire.Ping, "p1"u8, mask: false),
            WsWire.Frame(WsWire.Continuation, text.AsSpan(30, 2), fin: false, mask: false), // splits 🎉
            WsWire.Frame(WsWire.Continuation, text.AsSpan(32), mask: false)));
        var pong = await peer.Reader.ReadFrameAsync();
        Assert.True(pong is { Opcode: WsWire.Pong, Masked: true }, $"Expected the pong, got {pong}");
        Assert.Equal("p1"u8.ToArray(), pong.Payload);
        using var message = await client.ReceiveMessageAsync().AsTask().WaitAsync(s_wait);
        Assert.True(message.IsText);
        Assert.Equal(text, message.ToArray());
        Assert.Empty(client.Errors);
    }

    [Fact]
    public async Task A_server_frame_over_the_clients_MaxMessageSize_is_refused_with_1009()
    {
        using var server = new FakeServer();
        using var client = new RecordingClient(server.Port);
        client.WsOptions.MaxMessageSize = 1000;
        using var peer = await UpgradeAsync(server, client);
        await peer.SendAsync(WsWire.Frame(WsWire.Binary, [], mask: false, announced: 1001)); // the header only
        var close = await peer.Reader.ReadFrameAsync();
        Assert.True(close is { Opcode: WsWire.Close, CloseCode: 1009 }, $"Expected the client's close 1009, got {close}");
        Assert.NotEmpty(client.Errors);
    }

    /// <summary>The fake server's part in a close the client starts: answer it and close TCP, answer it only, or stay silent.</summary>
    [Theory]
    [InlineData("answer and close")]
    [InlineData("answer only")]
    [InlineData("silent")]
    public async Task A_close_the_client_starts_ends_the_connection_however_the_server_behaves(string server)
    {
        using var fake = new FakeServer();
        using var client = new RecordingClient(fake.Port);
        client.WsOptions.CloseTimeout = TimeSpan.FromMilliseconds(300);
        using var peer = await UpgradeAsync(fake, client);
        Assert.True(client.Close(1000, "bye"));
        var close = await peer.Reader.ReadFrameAsync();
        Assert.True(close is { Opcode: WsWire.Close, CloseCode: 1000, Masked: true }, $"Expected the client's close, got {close}");
        Assert.Equal("bye", close.CloseReason);
        if (server != "silent")
            await peer.SendAsync(WsWire.Frame(WsWire.Close, WsWire.ClosePayload(1000, []), mask: false));
        if (server == "answer and close")
            peer.Socket.Shutdown(SocketShutdown.Send);

        // The client closes its side: at once after the server's close, or after its CloseTimeout.
        Assert.Empty(await peer.Reader.ReadToEndAsync());
        await Wait.UntilAsync(() => !client.IsConnected, "the client to disconnect");
        if (server == "silent")
            Assert.NotEmpty(client.Errors); // the server never answered the close: OnWsError says so
        else
            Assert.Empty(client.Errors);     // a server that answers but keeps TCP open is no error
    }

    [Theory]
    [InlineData("permessage-deflate")]
    [InlineData("permessage-deflate; server_no_context_takeover; client_no_context_takeover")]
    public async Task Compressed_messages_go_both_ways_with_an_independent_deflate_peer(string answer)
    {
        // The fake server compresses with DeflateStream and inflates the client's frames with it.
        using var server = new FakeServer();
        using var client = new RecordingClient(server.Port);
        client.WsOptions.Deflate = new WsDeflateOptions();
        using var peer = await UpgradeAsync(server, client, $"Sec-WebSocket-Extensions: {answer}\r\n");
        Assert.True(client.IsWsCompressed);
        var takeover = !answer.Contains("no_context", StringComparison.Ordinal);
        using var compressor = new WsTestCompressor(takeover);
        using var inflater = new WsTestInflater(takeover);
        for (var i = 0; i < 6; i++)
        {
            var text = Encoding.UTF8.GetBytes(string.Concat(Enumerable.Repeat($"message {i} κόσμε, ", 20 + (i * 300))));
            await peer.SendAsync(WsWire.Frame(WsWire.Text, compressor.Compress(text), rsv: 4, mask: false));
            using (var message = await client.ReceiveMessageAsync().AsTask().WaitAsync(s_wait))
                Assert.Equal(text, message.ToArray());

            Assert.True(client.SendTextAsync(text));
            var frame = await peer.Reader.ReadFrameAsync();
            Assert.True(frame is { Opcode: WsWire.Text, Rsv: 4, Masked: true }, $"Expected a compressed masked text frame, got {frame}");
            Assert.Equal(text, inflater.Inflate(frame.Payload));
        }

        Assert.Empty(client.Errors);
    }

    [Fact]
    public async Task Frames_sent_with_the_101_are_delivered_and_a_server_close_is_answered()
    {
        using var server = new FakeServer();
        using var client = new RecordingClient(server.Port);
        var connecting = client.ConnectAsync(CancellationToken.None);
        using var peer = await server.AcceptAsync();
        await peer.SendAsync(WsWire.Concat(
            Encoding.ASCII.GetBytes(peer.Accepting()),
            WsWire.Frame(WsWire.Text, "hello with the 101"u8, mask: false),
            WsWire.Frame(WsWire.Ping, "p"u8, mask: false)));
        Assert.True(await connecting.WaitAsync(s_wait));
        using (var message = await client.ReceiveMessageAsync().AsTask().WaitAsync(s_wait))
            Assert.Equal("hello with the 101", message.Text);
        var pong = await peer.Reader.ReadFrameAsync();
        Assert.True(pong is { Opcode: WsWire.Pong, Masked: true }, $"Expected the pong, got {pong}");
        Assert.Equal("p"u8.ToArray(), pong.Payload);

        await peer.SendAsync(WsWire.Frame(WsWire.Close, WsWire.ClosePayload(1001, "bye"u8.ToArray()), mask: false));
        var close = await peer.Reader.ReadFrameAsync();
        Assert.True(close is { Opcode: WsWire.Close, CloseCode: 1001, Masked: true }, $"Expected the client's close 1001, got {close}");
        peer.Socket.Shutdown(SocketShutdown.Send); // the server closes the TCP connection first (RFC 6455 7.1.1)
        await Wait.UntilAsync(() => !client.IsConnected, "the client to close");
        Assert.Equal([1001], client.Closes);
        Assert.Empty(client.Errors);
    }
}
