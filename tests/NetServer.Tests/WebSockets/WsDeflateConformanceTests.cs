using System;
using System.IO;
using System.Linq;
using System.Text;
using System.Threading.Tasks;
using NetServer.Tests.Infrastructure;
using Xunit;

namespace NetServer.Tests.WebSockets;

/// <summary>
/// Autobahn groups 12 and 13 (permessage-deflate, RFC 7692) against our WsServer with
/// WsOptions.Deflate set, driven by a raw client that compresses with DeflateStream and inflates
/// the server's replies with DeflateStream: the negotiation answer, compressed echoes of many sizes
/// with and without context takeover on either side, and the faults (1002, 1007, 1009).
/// </summary>
public sealed class WsDeflateConformanceTests
{
    private const string Offer = "Sec-WebSocket-Extensions: permessage-deflate\r\n";

    private static WsTestHost StartDeflate(TransportKind kind = TransportKind.Tcp, Action<WsDeflateOptions>? deflate = null, int maxMessageSize = 0) =>
        WsTestHost.Start(kind, options =>
        {
            options.Deflate = new WsDeflateOptions();
            deflate?.Invoke(options.Deflate);
            if (maxMessageSize > 0)
                options.MaxMessageSize = maxMessageSize;
        });

    /// <summary>The value of a header field in a response head, or null.</summary>
    private static string? Field(string head, string name)
    {
        foreach (var line in head.Split("\r\n"))
        {
            if (line.StartsWith(name + ":", StringComparison.OrdinalIgnoreCase))
                return line.Substring(name.Length + 1).Trim();
        }

        return null;
    }

    /// <summary>Reads the server's echo of <paramref name="message"/>: compressed (RSV1) exactly when it is at least MinMessageSize (32) bytes.</summary>
    private static async Task ExpectEchoAsync(WsRawClient client, WsTestInflater inflater, int opcode, byte[] message, int minCompressed = 32)
    {
        var frame = await client.ReadFrameAsync();
        Assert.True(frame is not null, "The connection ended instead of the echo.");
        Assert.True(frame.Opcode == opcode && frame.Fin && !frame.Masked, $"Expected a whole opcode-{opcode} frame, got {frame}" + (frame.Opcode == WsWire.Close ? $" \"{frame.CloseReason}\"" : string.Empty));
        var compressed = message.Length >= minCompressed;
        Assert.True(frame.Rsv == (compressed ? 4 : 0), $"A {message.Length}-byte message came back with RSV {frame.Rsv}.");
        WsRawClient.AssertBytes(message, compressed ? inflater.Inflate(frame.Payload) : frame.Payload);
    }

    // ---- Negotiation ----

    /// <summary>Server setting, the client's offer, the exact answer ("-": none, the connection runs uncompressed).</summary>
    public static TheoryData<string, string, string> NegotiationCases => new()
    {
        { "default", "permessage-deflate", "permessage-deflate" },
        { "default", "permessage-deflate; client_no_context_takeover", "permessage-deflate; client_no_context_takeover" },
        { "default", "permessage-deflate; server_no_context_takeover", "permessage-deflate; server_no_context_takeover" },
        { "default", "permessage-deflate; server_no_context_takeover; client_no_context_takeover", "permessage-deflate; server_no_context_takeover; client_no_context_takeover" },
        { "default", "permessage-deflate; client_max_window_bits", "permessage-deflate" },
        { "default", "permessage-deflate; client_max_window_bits=10", "permessage-deflate; client_max_window_bits=10" },
        { "default", "permessage-deflate; server_max_window_bits=15", "permessage-deflate; server_max_window_bits=15" },
        { "default", "permessage-deflate; server_max_window_bits=10", "-" },                 // 15-bit compressor only: declined
        { "default", "permessage-deflate; server_max_window_bits=10, permessage-deflate; client_no_context_takeover", "permessage-deflate; client_no_context_takeover" },
        { "default", "permessage-deflate; unknown_parameter", "-" },
        { "default", "permessage-deflate; server_no_context_takeover=1", "-" },
        { "default", "permessage-deflate; client_max_window_bits=16", "-" },
        { "default", "x-webkit-deflate-frame", "-" },
        { "default", "foo, permessage-deflate", "permessage-deflate" },
        { "default", "permessage-deflate; client_max_window_bits=\"10\"", "permessage-deflate; client_max_window_bits=10" }, // quoted (RFC 7692 5.2)
        { "default", "x-foo\r\nSec-WebSocket-Extensions: permessage-deflate; server_no_context_takeover", "permessage-deflate; server_no_context_takeover" }, // a second line
        { "default", "permessage-deflate; client_max_window_bits=010", "-" },       // leading zero
        { "server-no-takeover", "permessage-deflate", "permessage-deflate; server_no_context_takeover" },
        { "client-no-takeover", "permessage-deflate", "permessage-deflate; client_no_context_takeover" },
        { "off", "permessage-deflate", "-" },
    };

    [Theory]
    [MemberData(nameof(NegotiationCases))]
    public async Task The_server_answers_an_offer_exactly_and_then_compresses_as_agreed(string server, string offer, string answer)
    {
        await using var host = server == "off" ? WsTestHost.Start() : StartDeflate(deflate: options =>
        {
            options.ServerContextTakeover = server != "server-no-takeover";
            options.ClientContextTakeover = server != "client-no-takeover";
        });
        using var client = new WsRawClient(await host.ConnectRawAsync());
        var head = await client.UpgradeAsync($"Sec-WebSocket-Extensions: {offer}\r\n");
        Assert.StartsWith("HTTP/1.1 101 ", head, StringComparison.Ordinal);
        Assert.Equal(answer == "-" ? null : answer, Field(head, "Sec-WebSocket-Extensions"));

        var message = Encoding.ASCII.GetBytes(string.Concat(Enumerable.Repeat("compress me ", 20)));
        if (answer == "-")
        {
            // Not agreed: the server neither compresses nor accepts compressed frames.
            await client.SendAsync(WsWire.Frame(WsWire.Text, message));
            await client.ExpectMessageAsync(WsWire.Text, message);
            await client.SendAsync(WsWire.Frame(WsWire.Text, new WsTestCompressor(false).Compress(message), rsv: 4));
            await client.ExpectCloseAsync(1002);
            return;
        }

        using var compressor = new WsTestCompressor(takeover: false);
        using var inflater = new WsTestInflater(takeover: false);
        await client.SendAsync(WsWire.Frame(WsWire.Text, compressor.Compress(message), rsv: 4));
        await ExpectEchoAsync(client, inflater, WsWire.Text, message);
        Assert.Empty(host.Log.Errors);
    }

    // ---- Echo ----

    private static readonly int[] s_sizes = [0, 1, 16, 31, 32, 33, 64, 256, 1024, 4096, 8192, 16384, 32768, 65535, 65536, 131072, 1024 * 1024];

    /// <summary>Transport, the client's offer parameters (after "permessage-deflate").</summary>
    public static TheoryData<TransportKind, string> EchoModes
    {
        get
        {
            var data = new TheoryData<TransportKind, string>();
            foreach (var kind in WsTransports.Kinds)
            {
                data.Add(kind, string.Empty);
                data.Add(kind, "; client_no_context_takeover");
                data.Add(kind, "; server_no_context_takeover");
                data.Add(kind, "; server_no_context_takeover; client_no_context_takeover");
            }

            return data;
        }
    }

    [Theory]
    [MemberData(nameof(EchoModes))]
    public async Task Compressed_messages_of_many_sizes_come_back_compressed(TransportKind kind, string parameters)
    {
        // 12.x/13.x: each size as text (compressible) and binary (random), each message twice so a
        // shared window is used; our side keeps its window unless it offered not to, and inflates
        // the replies with one window for all, or a fresh one per message when the server resets.
        await using var host = StartDeflate(kind);
        using var client = new WsRawClient(await host.ConnectRawAsync());
        var head = await client.UpgradeAsync($"Sec-WebSocket-Extensions: permessage-deflate{parameters}\r\n");
        Assert.Equal("permessage-deflate" + parameters, Field(head, "Sec-WebSocket-Extensions"));
        using var compressor = new WsTestCompressor(takeover: !parameters.Contains("client_no", StringComparison.Ordinal));
        using var inflater = new WsTestInflater(takeover: !parameters.Contains("server_no", StringComparison.Ordinal));

        var corpus = Encoding.ASCII.GetBytes(string.Concat(Enumerable.Range(0, 60000).Select(i => $"{{\"id\":{i},\"user\":\"name{i % 97}\"}},")));
        foreach (var size in s_sizes)
        {
            var text = corpus.AsSpan(size % 1000, size).ToArray();
            var binary = WsWire.Payload(size, text: false, seed: size);
            foreach (var (opcode, message) in new[] { (WsWire.Text, text), (WsWire.Binary, binary), (WsWire.Text, text), (WsWire.Binary, binary) })
            {
                await client.SendAsync(WsWire.Frame(opcode, compressor.Compress(message), rsv: 4));
                await ExpectEchoAsync(client, inflater, opcode, message);
            }
        }

        await client.SendAsync(WsWire.CloseFrame(1000));
        await client.ExpectCloseAsync(1000);
        Assert.Empty(host.Log.Errors);
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public async Task The_server_keeps_its_window_only_when_allowed(bool serverNoContextTakeover)
    {
        await using var host = StartDeflate();
        using var client = new WsRawClient(await host.ConnectRawAsync());
        await client.UpgradeAsync(serverNoContextTakeover ? "Sec-WebSocket-Extensions: permessage-deflate; server_no_context_takeover\r\n" : Offer);
        var message = Encoding.ASCII.GetBytes(string.Concat(Enumerable.Range(0, 100).Select(i => $"line {i * 7919 % 1000}; ")));
        var replies = new byte[2][];
        for (var i = 0; i < 2; i++)
        {
            await client.SendAsync(WsWire.Frame(WsWire.Binary, message));
            var frame = await client.ReadFrameAsync();
            Assert.True(frame is { Opcode: WsWire.Binary, Rsv: 4 }, $"Expected a compressed echo, got {frame}");
            replies[i] = frame.Payload;
        }

        if (serverNoContextTakeover)
        {
            // A fresh window per message: the same message compresses to the same bytes, and each inflates alone.
            Assert.Equal(replies[0], replies[1]);
            Assert.Equal(message, new WsTestInflater(false).Inflate(replies[1]));
        }
        else
        {
            // The second refers back to the first (RFC 7692 7.2.3.3): far smaller, and it needs the first's window.
            Assert.True(replies[1].Length < replies[0].Length / 4, $"{replies[1].Length} bytes, then {replies[0].Length}: no context kept.");
            using var inflater = new WsTestInflater(true);
            Assert.Equal(message, inflater.Inflate(replies[0]));
            Assert.Equal(message, inflater.Inflate(replies[1]));
        }
    }

    [Fact]
    public async Task Uncompressed_messages_are_accepted_on_a_compressed_connection()
    {
        await using var host = StartDeflate();
        using var client = await host.OpenAsync(Offer);
        using var inflater = new WsTestInflater(true);
        foreach (var size in new[] { 0, 10, 100, 70000 })
        {
            var message = WsWire.Payload(size, text: true);
            await client.SendAsync(WsWire.Frame(WsWire.Text, message));
            await ExpectEchoAsync(client, inflater, WsWire.Text, message);
        }
    }

    [Theory]
    [InlineData(0)]
    [InlineData(1)]
    public async Task A_compressed_message_in_fragments_with_a_ping_between_comes_back_whole(int chunk)
    {
        // RSV1 on the first frame only (RFC 7692 6.1); the ping is answered before the message ends.
        await using var host = StartDeflate();
        using var client = await host.OpenAsync(Offer);
        var message = Encoding.UTF8.GetBytes(string.Concat(Enumerable.Repeat("fragmented κόσμε ", 40)));
        var compressed = new WsTestCompressor(false).Compress(message);
        var half = compressed.Length / 2;
        await client.SendFramesAsync(chunk,
            WsWire.Frame(WsWire.Text, compressed.AsSpan(0, 7), fin: false, rsv: 4),
            WsWire.Frame(WsWire.Continuation, compressed.AsSpan(7, half - 7), fin: false),
            WsWire.Frame(WsWire.Ping, "between"u8),
            WsWire.Frame(WsWire.Continuation, [], fin: false),
            WsWire.Frame(WsWire.Continuation, compressed.AsSpan(half)));
        await client.ExpectMessageAsync(WsWire.Pong, "between"u8.ToArray());
        await ExpectEchoAsync(client, new WsTestInflater(false), WsWire.Text, message);
        Assert.Empty(host.Log.Errors);
    }

    [Fact]
    public async Task A_message_ended_with_a_final_block_is_accepted_and_the_next_starts_afresh()
    {
        // RFC 7692 7.2.3.4: BFINAL set, the stream not flushed the usual way.
        await using var host = StartDeflate();
        using var client = await host.OpenAsync("Sec-WebSocket-Extensions: permessage-deflate; client_no_context_takeover\r\n");
        using var inflater = new WsTestInflater(true);
        var first = Encoding.ASCII.GetBytes(string.Concat(Enumerable.Repeat("final block ", 30)));
        await client.SendAsync(WsWire.Frame(WsWire.Text, WsTestCompressor.CompressFinal(first), rsv: 4));
        await ExpectEchoAsync(client, inflater, WsWire.Text, first);
        var second = Encoding.ASCII.GetBytes(string.Concat(Enumerable.Repeat("next message ", 30)));
        await client.SendAsync(WsWire.Frame(WsWire.Binary, new WsTestCompressor(false).Compress(second), rsv: 4));
        await ExpectEchoAsync(client, inflater, WsWire.Binary, second);
        Assert.Empty(host.Log.Errors);
    }

    // ---- Faults ----

    [Theory]
    [InlineData(WsWire.Continuation, 4)]
    [InlineData(WsWire.Ping, 4)]
    [InlineData(WsWire.Pong, 4)]
    [InlineData(WsWire.Close, 4)]
    [InlineData(WsWire.Text, 2)]
    [InlineData(WsWire.Text, 1)]
    [InlineData(WsWire.Binary, 6)]
    [InlineData(WsWire.Binary, 5)]
    public async Task Reserved_bits_the_extension_does_not_allow_there_are_a_protocol_error(int opcode, int rsv)
    {
        await using var host = StartDeflate();
        var compressed = new WsTestCompressor(false).Compress(Encoding.ASCII.GetBytes("compressed message, then the bad frame"));
        var bytes = opcode == WsWire.Continuation
            ? WsWire.Concat(
                WsWire.Frame(WsWire.Text, compressed.AsSpan(0, 5), fin: false, rsv: 4),
                WsWire.Frame(WsWire.Continuation, compressed.AsSpan(5), rsv: rsv)) // RSV1 on a continuation
            : WsWire.Frame(opcode, opcode == WsWire.Close ? WsWire.ClosePayload(1000, []) : compressed, rsv: rsv);
        await host.AssertFaultAsync(bytes, 1002, fields: Offer);
    }

    public static TheoryData<string> CorruptData => new()
    {
        "ff",               // BFINAL with the reserved block type 11
        "07",
        "0005000000",       // a stored block whose NLEN is not the complement of LEN
        "0000000000",
        "6c6f72656d20697073756d20646f6c6f72", // plain text, not deflate
        "f20001fefe",
    };

    [Theory]
    [MemberData(nameof(CorruptData))]
    public async Task Data_that_does_not_inflate_is_closed_with_1007(string hex)
    {
        var payload = WsWire.Hex(hex);
        Assert.ThrowsAny<InvalidDataException>(() => new WsTestInflater(false).Inflate(payload)); // corrupt by DeflateStream too
        await using var host = StartDeflate();
        await host.AssertFaultAsync(WsWire.Frame(WsWire.Binary, payload, rsv: 4), 1007, fields: Offer);
    }

    [Fact]
    public async Task Corrupt_data_in_the_first_fragment_closes_before_the_message_ends()
    {
        await using var host = StartDeflate();
        await host.AssertFaultAsync(WsWire.Frame(WsWire.Text, WsWire.Hex("ff0102030405"), fin: false, rsv: 4), 1007, fields: Offer);
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public async Task A_zip_bomb_over_MaxMessageSize_is_closed_with_1009(bool fragmentedUnfinished)
    {
        // 16 MiB of zeros compress to about 16 KiB; the limit is 1 MiB. Fragmented, only the first
        // 8 KiB are sent, in a message that never ends: inflating must stop at the limit as it goes.
        await using var host = StartDeflate(maxMessageSize: 1024 * 1024);
        var bomb = new WsTestCompressor(false).Compress(new byte[16 * 1024 * 1024]);
        Assert.True(bomb.Length < 64 * 1024, $"{bomb.Length} compressed bytes");
        byte[] bytes;
        if (!fragmentedUnfinished)
        {
            bytes = WsWire.Frame(WsWire.Binary, bomb, rsv: 4);
        }
        else
        {
            var frames = Enumerable.Range(0, 8).Select(i => WsWire.Frame(i == 0 ? WsWire.Binary : WsWire.Continuation, bomb.AsSpan(i * 1024, 1024), fin: false, rsv: i == 0 ? 4 : 0));
            bytes = WsWire.Concat([.. frames]);
        }

        await host.AssertFaultAsync(bytes, 1009, fields: Offer);
    }

    [Theory]
    [InlineData(0)]
    [InlineData(1)]
    public async Task A_message_that_inflates_to_exactly_MaxMessageSize_passes_and_one_byte_more_fails(int extra)
    {
        const int Limit = 256 * 1024;
        await using var host = StartDeflate(maxMessageSize: Limit);
        var message = new byte[Limit + extra];
        message[^1] = 1;
        var bytes = WsWire.Frame(WsWire.Binary, new WsTestCompressor(false).Compress(message), rsv: 4);
        if (extra > 0)
        {
            await host.AssertFaultAsync(bytes, 1009, fields: Offer);
            return;
        }

        using var client = await host.OpenAsync(Offer);
        await client.SendAsync(bytes);
        await ExpectEchoAsync(client, new WsTestInflater(true), WsWire.Binary, message);
    }

    [Fact]
    public async Task An_incompressible_message_of_MaxMessageSize_passes_though_its_compressed_form_is_larger()
    {
        // Random bytes grow when deflated (stored blocks): the limit is on the message, not its compressed form.
        const int Limit = 64 * 1024;
        await using var host = StartDeflate(maxMessageSize: Limit);
        using var client = await host.OpenAsync(Offer);
        var message = WsWire.Payload(Limit, text: false);
        var compressed = new WsTestCompressor(false).Compress(message);
        Assert.True(compressed.Length > Limit, $"{compressed.Length} compressed bytes");
        await client.SendAsync(WsWire.Frame(WsWire.Binary, compressed, rsv: 4));
        await ExpectEchoAsync(client, new WsTestInflater(true), WsWire.Binary, message);
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public async Task Compressed_data_announced_far_over_MaxMessageSize_is_refused_from_its_header(bool inContinuation)
    {
        // Twice the limit: more than deflate's worst expansion of a message within it.
        await using var host = StartDeflate(maxMessageSize: 4096);
        var bytes = inContinuation
            ? WsWire.Concat(WsWire.Frame(WsWire.Binary, [0x00], fin: false, rsv: 4), WsWire.Frame(WsWire.Continuation, [], announced: 8192))
            : WsWire.Frame(WsWire.Binary, [], rsv: 4, announced: 8192);
        await host.AssertFaultAsync(bytes, 1009, fields: Offer);
    }

    [Fact]
    public async Task Compressed_text_that_inflates_to_invalid_UTF8_is_closed_with_1007()
    {
        await using var host = StartDeflate();
        var invalid = WsWire.Concat(Encoding.ASCII.GetBytes(string.Concat(Enumerable.Repeat("valid text ", 10))), WsWire.Hex("eda080"));
        await host.AssertFaultAsync(WsWire.Frame(WsWire.Text, new WsTestCompressor(false).Compress(invalid), rsv: 4), 1007, fields: Offer);
    }
}
