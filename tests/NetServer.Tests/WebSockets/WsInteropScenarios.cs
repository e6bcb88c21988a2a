using System;
using System.Collections.Generic;
using System.Linq;
using System.Net.WebSockets;
using System.Text.Json;
using System.Threading.Tasks;
using NetServer.Tests.Infrastructure;
using Xunit;

namespace NetServer.Tests.WebSockets;

/// <summary>
/// The interop test bodies, the same for every peer (WsInteropNodeTests and WsInteropPythonTests
/// run them, each under the attribute that skips it where its peer is missing).
/// </summary>
internal static class WsInteropScenarios
{
    /// <summary>The sizes every echo runs through: empty, the 7-bit, 16-bit and 64-bit length forms at their edges, 1 MiB.</summary>
    private static readonly int[] s_sizes = [0, 1, 125, 126, 65535, 65536, 1 << 20];

    /// <summary>The bytes of all echoed messages one way (text and binary of each size).</summary>
    private static readonly long s_echoBytes = 2L * s_sizes.Sum();

    /// <summary>(secure, deflate): TCP and TLS, with and without permessage-deflate; over TCP also without context takeover.</summary>
    public static TheoryData<bool, WsDeflateMode> TransportsAndDeflate => new()
    {
        { false, WsDeflateMode.Off },
        { false, WsDeflateMode.On },
        { false, WsDeflateMode.NoContextTakeover },
        { true, WsDeflateMode.Off },
        { true, WsDeflateMode.On },
    };

    /// <summary>
    /// Their client, our server (tests/node/ws-interop-client.js, tests/python/ws_interop_client.py
    /// say what they do): echo, subprotocol, deflate, their ping, their close and ours, 1007.
    /// </summary>
    public static async Task TheirClientAgainstOurServerAsync(WsPeer peer, bool secure, WsDeflateMode mode)
    {
        var deflate = mode != WsDeflateMode.Off;
        using var server = new WsInteropServer(secure, deflate);
        Assert.True(server.Start());
        using var certificates = secure ? new WsInteropPeers.CertificateFiles() : null;

        var results = await WsInteropPeers.RunClientAsync(peer, server.Url, mode, certificates);

        // As the peer saw it: every echo came back whole with its type, fragmented ones too (the
        // script checked), our server chose "superchat" of its offer, agreed to deflate when both
        // sides had it on (confirming no context takeover when asked), answered the ping with its
        // payload and the close with the same code.
        var echo = results["echo"];
        Assert.Equal("superchat", echo.GetProperty("protocol").GetString());
        Assert.Equal(deflate ? "permessage-deflate" : string.Empty, echo.GetProperty("extensions").GetString());
        Assert.Equal(OurDeflateAnswer(mode), echo.GetProperty("answer").GetString());
        Assert.Equal(2 * s_sizes.Length + 2, echo.GetProperty("messages").GetInt32());
        Assert.Equal("are you there?", echo.GetProperty("pong").GetString());
        Assert.Equal(WsCloseStatus.Normal, echo.GetProperty("closeCode").GetInt32());

        // As our server saw it: the same agreement on every connection, the peer's close reason.
        Assert.All(server.Upgrades, upgrade => Assert.Equal(deflate, upgrade.Compressed));
        Assert.Equal("superchat", server.Upgrades.First().SubProtocol);
        Assert.Contains((WsCloseStatus.Normal, "peer done ✓"), server.Closes);
        AssertCompressedBothWays(deflate, server.BytesReceived, server.BytesSent);

        // Our server's close, as the peer reports it: exactly our code and reason.
        var serverClose = results["server-close"];
        Assert.Equal(4001, serverClose.GetProperty("code").GetInt32());
        Assert.Equal("going away now — à bientôt", serverClose.GetProperty("reason").GetString());

        // Text that is not UTF-8: failed with 1007, the one error our server had.
        Assert.Equal(WsCloseStatus.InvalidPayload, results["bad-utf8"].GetProperty("closeCode").GetInt32());
        var error = Assert.Single(server.Errors);
        Assert.Contains("UTF-8", error);
    }

    /// <summary>
    /// Our client, their server (tests/node/ws-interop-server.js, tests/python/ws_interop_server.py):
    /// subprotocol, deflate agreed on both sides, echo, their ping, ours, their close.
    /// </summary>
    public static async Task OurClientAgainstTheirServerAsync(WsPeer peer, bool secure, WsDeflateMode mode)
    {
        var deflate = mode != WsDeflateMode.Off;
        using var certificates = secure ? new WsInteropPeers.CertificateFiles() : null;
        var (server, port) = await WsInteropPeers.StartServerAsync(peer, deflate, certificates);
        await using var _ = server;
        using var client = new WsInteropClient(secure, port);
        client.WsOptions.SubProtocols.Add("chat");
        client.WsOptions.SubProtocols.Add("superchat");
        if (deflate)
            client.WsOptions.Deflate = mode == WsDeflateMode.On ? new WsDeflateOptions() : new WsDeflateOptions { ServerContextTakeover = false, ClientContextTakeover = false };

        Assert.True(await client.ConnectAsync());
        Assert.Equal("superchat", client.WsSubProtocol);
        Assert.Equal(deflate, client.IsWsCompressed);

        // The server's own view of the agreement, and what it answered to our offer.
        Assert.True(await client.SendAsync("info"));
        var info = JsonDocument.Parse(await client.ReceiveTextAsync()).RootElement;
        Assert.Equal("superchat", info.GetProperty("protocol").GetString());
        Assert.Equal(deflate ? "permessage-deflate" : string.Empty, info.GetProperty("extensions").GetString());
        Assert.Equal(TheirDeflateAnswer(peer, mode), info.GetProperty("answer").GetString());

        var sent = client.BytesSent;
        var received = client.BytesReceived;
        await EchoAsync(client);
        AssertCompressedBothWays(deflate, client.BytesSent - sent, client.BytesReceived - received);
        await EchoFragmentedAsync(client);

        // Their ping: the server says which pong it got back.
        Assert.True(await client.SendAsync("ping from the server"));
        Assert.Equal("pong from the server", await client.ReceiveTextAsync());

        // Our ping: their pong carries its payload.
        Assert.True(client.SendPingAsync("from the client"));
        await Wait.UntilAsync(() => client.Pongs.Contains("from the client"), () => $"the pong of our ping (pongs: {string.Join(", ", client.Pongs)})", WsInteropPeers.Timeout);

        // Their close: OnWsClose has its code and reason, then the server ends the connection.
        Assert.True(await client.SendAsync("close 4002 server says bye"));
        Assert.Equal((4002, "server says bye"), await client.Closed.Task.WaitAsync(WsInteropPeers.Timeout));
        await client.DisconnectedAsync();
        Assert.Empty(client.Errors);
    }

    /// <summary>
    /// Our client with the upgrade request NetCoreServer's benchmark clients write by hand
    /// ("Sec-WebSocket-Protocol: chat, superchat" among the fields), against their server: the
    /// request is accepted, and the subprotocol chosen from that hand-written offer is too.
    /// Then our close with a reason, answered with the same code.
    /// </summary>
    public static async Task HandWrittenRequestAgainstTheirServerAsync(WsPeer peer, bool secure)
    {
        using var certificates = secure ? new WsInteropPeers.CertificateFiles() : null;
        var (server, port) = await WsInteropPeers.StartServerAsync(peer, deflate: false, certificates);
        await using var _ = server;
        using var client = new WsInteropClient(secure, port) { FillRequestByHand = true };

        Assert.True(await client.ConnectAsync());
        Assert.Equal("superchat", client.WsSubProtocol);
        var message = new byte[32];
        Assert.True(await client.SendAsync(message, WebSocketMessageType.Binary));
        using (var echo = await client.ReceiveAsync())
            Assert.Equal(message, echo.ToArray());

        Assert.True(client.Close(WsCloseStatus.Normal, "client done"));
        Assert.Equal(WsCloseStatus.Normal, (await client.Closed.Task.WaitAsync(WsInteropPeers.Timeout)).Status);
        await client.DisconnectedAsync();
        Assert.Equal(DisconnectReason.PeerClosed, client.DisconnectReason);
        Assert.Empty(client.Errors);
    }

    /// <summary>
    /// What each peer's server answers to our client's offer: websockets limits its own window to
    /// 12 bits unasked, so our client inflates a 12-bit window.
    /// </summary>
    private static string TheirDeflateAnswer(WsPeer peer, WsDeflateMode mode) => (peer, mode) switch
    {
        (_, WsDeflateMode.Off) => string.Empty,
        (WsPeer.Python, WsDeflateMode.On) => "permessage-deflate; server_max_window_bits=12",
        (WsPeer.Python, _) => "permessage-deflate; server_no_context_takeover; client_no_context_takeover; server_max_window_bits=12",
        (_, WsDeflateMode.On) => "permessage-deflate",
        _ => "permessage-deflate; server_no_context_takeover; client_no_context_takeover",
    };

    /// <summary>What our server answers to a peer's offer (both peers offer client_max_window_bits without a value, which needs no answer at 15 bits).</summary>
    private static string OurDeflateAnswer(WsDeflateMode mode) => mode switch
    {
        WsDeflateMode.Off => string.Empty,
        WsDeflateMode.On => "permessage-deflate",
        _ => "permessage-deflate; server_no_context_takeover; client_no_context_takeover",
    };

    /// <summary>Text and binary messages of every size in <see cref="s_sizes"/>, all sent, then each echo checked in order.</summary>
    public static async Task EchoAsync(WsInteropClient client)
    {
        var messages = new List<(WebSocketMessageType Type, byte[] Payload)>();
        foreach (var size in s_sizes)
        {
            messages.Add((WebSocketMessageType.Text, Enumerable.Repeat((byte)'t', size).ToArray()));
            messages.Add((WebSocketMessageType.Binary, Enumerable.Repeat((byte)size, size).ToArray()));
        }

        foreach (var (type, payload) in messages)
            Assert.True(await client.SendAsync(payload, type));
        foreach (var (type, payload) in messages)
        {
            using var echo = await client.ReceiveAsync();
            Assert.True(echo.IsText == (type == WebSocketMessageType.Text), $"A {type} message of {payload.Length} bytes came back as {(echo.IsText ? "text" : "binary")}.");
            Assert.True(payload.AsSpan().SequenceEqual(echo.Span), $"A {type} message of {payload.Length} bytes came back as {echo.Length} different bytes.");
        }
    }

    /// <summary>
    /// A text and a binary message sent in three parts each (three frames; our client sends a
    /// message in parts uncompressed, RSV1 clear, even with deflate agreed), the text with a
    /// two-byte character split between the second and third: their server reassembles them and
    /// echoes each whole (compressed, with deflate).
    /// </summary>
    private static async Task EchoFragmentedAsync(WsInteropClient client)
    {
        var accent = "é"u8.ToArray();
        byte[][] textParts = [[.. Enumerable.Repeat((byte)'x', 2000)], [.. Enumerable.Repeat((byte)'y', 3000), accent[0]], [accent[1], .. Enumerable.Repeat((byte)'z', 100)]];
        byte[][] binaryParts = [Enumerable.Repeat((byte)1, 2000).ToArray(), Enumerable.Repeat((byte)2, 3000).ToArray(), Enumerable.Repeat((byte)3, 100).ToArray()];
        foreach (var (type, parts) in new[] { (WebSocketMessageType.Text, textParts), (WebSocketMessageType.Binary, binaryParts) })
        {
            for (var i = 0; i < parts.Length; i++)
                Assert.True(await client.SendAsync(parts[i], type, endOfMessage: i == parts.Length - 1));
        }

        Assert.Equal(new string('x', 2000) + new string('y', 3000) + "é" + new string('z', 100), await client.ReceiveTextAsync());
        using var binary = await client.ReceiveAsync();
        Assert.False(binary.IsText);
        Assert.Equal(binaryParts.SelectMany(part => part).ToArray(), binary.ToArray());
    }

    /// <summary>
    /// The echoed messages are runs of one byte, so compressed they take a few KiB against 2.3 MB:
    /// with deflate agreed both directions must be far below the payload (it was compressed on
    /// the wire, not only negotiated), without it above.
    /// </summary>
    private static void AssertCompressedBothWays(bool deflate, long bytesIn, long bytesOut)
    {
        if (deflate)
        {
            Assert.True(bytesIn < s_echoBytes / 10, $"{bytesIn} bytes came in for {s_echoBytes} bytes of messages: not compressed.");
            Assert.True(bytesOut < s_echoBytes / 10, $"{bytesOut} bytes went out for {s_echoBytes} bytes of messages: not compressed.");
        }
        else
        {
            Assert.True(bytesIn > s_echoBytes, $"{bytesIn} bytes came in for {s_echoBytes} bytes of messages.");
            Assert.True(bytesOut > s_echoBytes, $"{bytesOut} bytes went out for {s_echoBytes} bytes of messages.");
        }
    }
}
