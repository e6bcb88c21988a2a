using System;
using System.Diagnostics;
using System.Linq;
using System.Text;
using System.Threading.Tasks;
using NetServer.Tests.Infrastructure;
using Xunit;

namespace NetServer.Tests.WebSockets;

/// <summary>
/// Autobahn group 7 (the close handshake) against our WsServer, driven by a raw client: a close
/// frame is answered with the same status and the server then closes the TCP connection; bad
/// close frames get 1002 or 1007; nothing is read or sent after a close.
/// </summary>
public sealed class WsCloseConformanceTests
{
    public static TheoryData<TransportKind> Transports => WsTransports.All;

    [Theory]
    [MemberData(nameof(Transports))]
    public async Task A_close_after_an_echo_is_answered_and_the_server_closes_the_connection(TransportKind kind)
    {
        // 7.1.1
        await using var host = WsTestHost.Start(kind);
        using var client = await host.OpenAsync();
        await client.SendAsync(WsWire.TextFrame("Hello World!"));
        await client.ExpectMessageAsync(WsWire.Text, "Hello World!"u8.ToArray());
        await client.SendAsync(WsWire.CloseFrame(1000, "done here"));
        await client.ExpectCloseAsync(1000); // and the server closes TCP without waiting for us
        await Wait.UntilAsync(() => host.Log.Ended == 1, "OnWsDisconnected");
        Assert.Equal([1000], host.Log.Closes);
        Assert.Empty(host.Log.Errors);
    }

    [Theory]
    [InlineData("close")]     // 7.1.2: a second close frame
    [InlineData("ping")]      // 7.1.3
    [InlineData("text")]      // 7.1.4
    [InlineData("garbage")]   // not even a frame
    public async Task Nothing_after_a_close_frame_is_read(string after)
    {
        await using var host = WsTestHost.Start();
        using var client = await host.OpenAsync();
        var next = after switch
        {
            "close" => WsWire.CloseFrame(1001),
            "ping" => WsWire.Frame(WsWire.Ping, "ping"u8),
            "text" => WsWire.TextFrame("text after close"),
            _ => Enumerable.Repeat((byte)0xFF, 64).ToArray(),
        };
        await client.SendAsync(WsWire.Concat(WsWire.CloseFrame(1000), next));
        await client.ExpectCloseAsync(1000);
        Assert.Equal([1000], host.Log.Closes);
        Assert.Empty(host.Log.Errors);
    }

    [Fact]
    public async Task A_large_message_before_a_close_is_echoed_then_the_close_answered()
    {
        // 7.1.6: the message, the close and a ping in one write: the echo, the close, and no pong.
        await using var host = WsTestHost.Start();
        using var client = await host.OpenAsync();
        var big = WsWire.Payload(256 * 1024, text: true);
        await client.SendAsync(WsWire.Concat(WsWire.Frame(WsWire.Text, big), WsWire.CloseFrame(1000), WsWire.Frame(WsWire.Ping, []), WsWire.TextFrame("late")));
        await client.ExpectMessageAsync(WsWire.Text, big);
        await client.ExpectCloseAsync(1000);
    }

    /// <summary>What follows a large message in the same write, and the frame the server must answer it with.</summary>
    public static TheoryData<string> AfterLargeEcho => new() { "close", "reserved opcode", "ping" };

    [Theory]
    [MemberData(nameof(AfterLargeEcho))]
    public async Task A_close_or_pong_is_not_lost_behind_an_echo_that_fills_the_send_queue(string after)
    {
        // The client reads nothing while it sends, so the 8 MiB echo waits in the server's send
        // queue, far over its limit (64 KiB here), when the next frame is read. The answer to that
        // frame (RFC 6455 5.5.1: a close MUST be answered; 5.5.2: a ping MUST be) may not be
        // dropped for want of room: it follows the echo.
        await using var host = WsTestHost.Start();
        host.Log.SendBufferLimit = 64 * 1024;
        var socket = new System.Net.Sockets.Socket(System.Net.Sockets.AddressFamily.InterNetwork, System.Net.Sockets.SocketType.Stream, System.Net.Sockets.ProtocolType.Tcp) { ReceiveBufferSize = 4096 };
        await socket.ConnectAsync(host.Server.Endpoint).WaitAsync(Wait.Default);
        using var client = new WsRawClient(socket);
        Assert.StartsWith("HTTP/1.1 101 ", await client.UpgradeAsync(), StringComparison.Ordinal);

        var big = WsWire.Payload(8 * 1024 * 1024, text: false);
        var next = after switch
        {
            "close" => WsWire.CloseFrame(1000),
            "ping" => WsWire.Frame(WsWire.Ping, "still answered"u8),
            _ => WsWire.Frame(3, []),
        };
        await client.SendAsync(WsWire.Concat(WsWire.Frame(WsWire.Binary, big), next));
        await Wait.UntilAsync(() => host.Log.PendingAtControl >= 0, "the frame after the message to be read");
        Assert.True(host.Log.PendingAtControl > 64 * 1024, $"Only {host.Log.PendingAtControl} bytes were queued: the send queue was not full.");
        await client.ExpectMessageAsync(WsWire.Binary, big, TimeSpan.FromSeconds(30));
        switch (after)
        {
            case "close":
                await client.ExpectCloseAsync(1000);
                break;
            case "ping":
                await client.ExpectMessageAsync(WsWire.Pong, "still answered"u8.ToArray());
                break;
            default:
                await client.ExpectCloseAsync(1002);
                break;
        }
    }

    /// <summary>Close payload (hex), chunk size, expected code (-1: an empty close).</summary>
    public static TheoryData<string, string, int, int> PayloadCases => new()
    {
        { "7.3.1 empty", "-", 0, -1 },
        { "7.3.1 empty, one byte per send", "-", 1, -1 },
        { "7.3.2 one byte", "03", 0, 1002 },
        { "7.3.3 1000", "03e8", 0, 1000 },
        { "7.3.3 1000, one byte per send", "03e8", 1, 1000 },
        { "7.3.4 1000 and a reason", "03e8" + Convert.ToHexString("Hello World!"u8), 0, 1000 },
        { "7.3.5 1000 and a 123-byte reason", "03e8" + new string('2', 246), 0, 1000 },
        { "7.3.5 a multi-byte reason", "03e8" + Convert.ToHexString(Encoding.UTF8.GetBytes("κόσμε ☃ 🎉")), 0, 1000 },
        { "7.5.1 a reason that is not UTF-8", "03e8cebae1bdb9cf83cebcceb5eda080656469746564", 0, 1007 },
        { "a reason ending inside a character", "03e8" + "4142e282", 0, 1007 },
    };

    [Theory]
    [MemberData(nameof(PayloadCases))]
    public async Task A_close_frame_is_answered_or_refused_by_its_payload(string name, string hex, int chunk, int expected)
    {
        await using var host = WsTestHost.Start();
        var frame = WsWire.Frame(WsWire.Close, WsWire.Hex(hex));
        if (expected is 1002 or 1007)
        {
            await host.AssertFaultAsync(frame, expected, chunk);
            return;
        }

        using var client = await host.OpenAsync();
        await client.SendAsync(frame, chunk);
        await client.ExpectCloseAsync(expected);
        Assert.True(host.Log.Errors.IsEmpty, $"{name}: {string.Join("; ", host.Log.Errors)}");
    }

    [Fact]
    public async Task A_close_frame_over_125_bytes_is_a_protocol_error()
    {
        // 7.3.6: 1000 and a 124-byte reason.
        await using var host = WsTestHost.Start();
        await host.AssertFaultAsync(WsWire.Frame(WsWire.Close, WsWire.Hex("03e8" + new string('2', 248))), 1002);
    }

    [Theory]
    [MemberData(nameof(WsCloseStatusTests.SendableCodes), MemberType = typeof(WsCloseStatusTests))]
    public async Task A_close_with_a_valid_code_is_answered_with_that_code(int code)
    {
        // 7.7.x (1012-1014: registered with IANA after RFC 6455, accepted; see WsCloseStatus.IsValidOnWire)
        await using var host = WsTestHost.Start();
        using var client = await host.OpenAsync();
        await client.SendAsync(WsWire.CloseFrame(code, "reason"));
        await client.ExpectCloseAsync(code);
        Assert.Equal([code], host.Log.Closes);
        Assert.Empty(host.Log.Errors);
    }

    [Theory]
    [MemberData(nameof(WsCloseStatusTests.UnsendableCodes), MemberType = typeof(WsCloseStatusTests))]
    public async Task A_close_with_a_code_that_may_not_be_sent_is_a_protocol_error(int code)
    {
        // 7.9.x, 7.13.x
        await using var host = WsTestHost.Start();
        await host.AssertFaultAsync(WsWire.CloseFrame(code), 1002);
        Assert.DoesNotContain(code, host.Log.Closes); // refused, not reported as the peer's close
    }

    [Theory]
    [MemberData(nameof(Transports))]
    public async Task A_server_close_is_answered_by_the_client_then_the_server_closes_the_connection(TransportKind kind)
    {
        await using var host = WsTestHost.Start(kind);
        using var client = await host.OpenAsync();
        await Wait.UntilAsync(() => host.Log.Upgraded == 1, "the upgrade");
        Assert.True(host.Server.CloseAll(1001));
        var close = await client.ReadFrameAsync();
        Assert.True(close is { Opcode: WsWire.Close, CloseCode: 1001, Masked: false }, $"Expected the server's close 1001, got {close}");

        // A message from the client after the server's close may still be delivered (RFC 6455 1.4),
        // but its echo is refused: no data frame follows a close frame.
        await client.SendAsync(WsWire.Concat(WsWire.TextFrame("too late"), WsWire.CloseFrame(1001)));
        await client.ExpectEndAsync();
        Assert.Equal([1001], host.Log.Closes);
        Assert.Equal(["The echo of a 8-byte Text message was refused."], host.Log.Errors);
    }

    [Fact]
    public async Task A_server_close_that_is_never_answered_ends_the_connection_after_the_close_timeout()
    {
        await using var host = WsTestHost.Start(configure: options => options.CloseTimeout = TimeSpan.FromMilliseconds(300));
        using var client = await host.OpenAsync();
        await Wait.UntilAsync(() => host.Log.Upgraded == 1, "the upgrade");
        var clock = Stopwatch.StartNew();
        Assert.True(host.Server.CloseAll(1000));
        var close = await client.ReadFrameAsync();
        Assert.True(close is { Opcode: WsWire.Close, CloseCode: 1000 }, $"Expected the server's close, got {close}");
        await client.ExpectEndAsync();
        Assert.True(clock.Elapsed >= TimeSpan.FromMilliseconds(250), $"The server closed after {clock.ElapsedMilliseconds} ms, before its close timeout.");
    }
}
