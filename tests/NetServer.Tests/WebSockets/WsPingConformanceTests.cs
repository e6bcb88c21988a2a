using System;
using System.Diagnostics;
using System.Linq;
using System.Text;
using System.Threading.Tasks;
using NetServer.Tests.Infrastructure;
using Xunit;

namespace NetServer.Tests.WebSockets;

/// <summary>Autobahn group 2 (ping and pong) against our WsServer, driven by a raw client.</summary>
public sealed class WsPingConformanceTests
{
    /// <summary>Transport, ping payload (hex), chunk size.</summary>
    public static TheoryData<TransportKind, string, int> PingCases
    {
        get
        {
            var data = new TheoryData<TransportKind, string, int>();
            var payloads = new[]
            {
                "-",                                                    // 2.1 no payload
                Convert.ToHexString("Hello, world!"u8),                // 2.2 text
                "00fffefdfcfb0000ff",                                  // 2.3 binary
                Convert.ToHexString(Enumerable.Repeat((byte)0xFE, 125).ToArray()), // 2.4 the largest a control frame carries
            };
            foreach (var kind in WsTransports.Kinds)
            {
                foreach (var payload in payloads)
                {
                    data.Add(kind, payload, 0);
                    data.Add(kind, payload, 1); // 2.6: one byte per send
                }
            }

            return data;
        }
    }

    public static TheoryData<TransportKind> Transports => WsTransports.All;

    [Theory]
    [MemberData(nameof(PingCases))]
    public async Task A_ping_is_answered_with_a_pong_carrying_its_payload(TransportKind kind, string hex, int chunk)
    {
        await using var host = WsTestHost.Start(kind);
        using var client = await host.OpenAsync();
        var payload = WsWire.Hex(hex);
        await client.SendAsync(WsWire.Frame(WsWire.Ping, payload), chunk);
        await client.ExpectMessageAsync(WsWire.Pong, payload);

        await client.SendAsync(WsWire.CloseFrame(1000));
        await client.ExpectCloseAsync(1000);
        Assert.Empty(host.Log.Errors);
    }

    [Theory]
    [InlineData(126, 0)]
    [InlineData(126, 1)]
    [InlineData(65535, 0)]
    public async Task A_ping_over_125_bytes_is_a_protocol_error(int length, int chunk)
    {
        await using var host = WsTestHost.Start();
        await host.AssertFaultAsync(WsWire.Frame(WsWire.Ping, new byte[length]), 1002, chunk);
    }

    [Fact]
    public async Task A_pong_over_125_bytes_is_a_protocol_error()
    {
        await using var host = WsTestHost.Start();
        await host.AssertFaultAsync(WsWire.Frame(WsWire.Pong, new byte[126]), 1002);
    }

    [Theory]
    [InlineData("-")]
    [InlineData("756e736f6c6963697465642070616e67")]
    public async Task An_unsolicited_pong_is_ignored(string hex)
    {
        await using var host = WsTestHost.Start();
        using var client = await host.OpenAsync();

        // 2.8/2.9: the pong gets nothing back; the ping after it gets its own pong as the very next frame.
        await client.SendAsync(WsWire.Concat(WsWire.Frame(WsWire.Pong, WsWire.Hex(hex)), WsWire.Frame(WsWire.Ping, "ping"u8)));
        await client.ExpectMessageAsync(WsWire.Pong, "ping"u8.ToArray());
        await client.SendAsync(WsWire.TextFrame("after"));
        await client.ExpectMessageAsync(WsWire.Text, "after"u8.ToArray());
        Assert.Empty(host.Log.Errors);
    }

    [Theory]
    [InlineData(0)]
    [InlineData(1)]
    [InlineData(5)]
    public async Task Ten_pings_in_a_row_are_answered_in_order(int chunk)
    {
        await using var host = WsTestHost.Start();
        using var client = await host.OpenAsync();
        var pings = Enumerable.Range(0, 10).Select(i => Encoding.ASCII.GetBytes($"payload-{i}")).ToArray();
        await client.SendAsync(WsWire.Concat([.. pings.Select(p => WsWire.Frame(WsWire.Ping, p))]), chunk);
        foreach (var payload in pings)
            await client.ExpectMessageAsync(WsWire.Pong, payload);
        Assert.Empty(host.Log.Errors);
    }

    [Fact]
    public async Task An_idle_peer_is_pinged_and_kept_while_it_answers()
    {
        // WsOptions.KeepAliveInterval: a ping after that long without receiving anything.
        await using var host = WsTestHost.Start(configure: options =>
        {
            options.KeepAliveInterval = TimeSpan.FromMilliseconds(150);
            options.KeepAliveTimeout = TimeSpan.FromSeconds(8); // generous: a slow answer on a loaded machine is not the subject
        });
        using var client = await host.OpenAsync();
        var answered = Stopwatch.StartNew();
        for (var i = 0; i < 3; i++)
        {
            var ping = await client.ReadFrameAsync(TimeSpan.FromSeconds(12));
            Assert.True(ping is { Opcode: WsWire.Ping, Fin: true, Masked: false }, $"Expected a keep-alive ping, got {ping}");

            // After an answer the next ping is due an interval (two at most: the clock looks once per
            // interval) after the last bytes received, not after the whole KeepAliveTimeout (8 s).
            // The bound leaves the loaded machine 20 intervals (a CI run once saw 1.7 s).
            if (i > 0)
                Assert.True(answered.Elapsed < TimeSpan.FromSeconds(3), $"The next ping came {answered.ElapsedMilliseconds} ms after the pong (interval 150 ms).");
            await client.SendAsync(WsWire.Frame(WsWire.Pong, ping.Payload));
            answered.Restart();
        }

        await client.SendAsync(WsWire.TextFrame("still connected"));
        var echo = await client.ReadFrameAsync();
        while (echo is { Opcode: WsWire.Ping })
            echo = await client.ReadFrameAsync();
        Assert.True(echo is { Opcode: WsWire.Text }, $"Expected the echo, got {echo}");
        Assert.Equal("still connected"u8.ToArray(), echo.Payload);
        Assert.Empty(host.Log.Errors);
    }

    [Fact]
    public async Task An_idle_peer_that_does_not_answer_the_keep_alive_ping_is_disconnected()
    {
        await using var host = WsTestHost.Start(configure: options =>
        {
            options.KeepAliveInterval = TimeSpan.FromMilliseconds(150);
            options.KeepAliveTimeout = TimeSpan.FromMilliseconds(300);
        });
        using var client = await host.OpenAsync();
        var ping = await client.ReadFrameAsync(TimeSpan.FromSeconds(5));
        Assert.True(ping is { Opcode: WsWire.Ping }, $"Expected a keep-alive ping, got {ping}");
        var next = await client.ReadFrameAsync(TimeSpan.FromSeconds(5)); // no answer: the connection ends
        Assert.True(next is null || next.Opcode == WsWire.Close, $"Expected the end of the connection, got {next}");
        if (next is not null)
            await client.ExpectEndAsync();
        await Wait.UntilAsync(() => !host.Log.Errors.IsEmpty, "OnWsError for the keep-alive timeout");
    }

    [Theory]
    [MemberData(nameof(Transports))]
    public async Task Pings_between_messages_are_answered_between_their_echoes(TransportKind kind)
    {
        await using var host = WsTestHost.Start(kind);
        using var client = await host.OpenAsync();
        await client.SendAsync(WsWire.Concat(
            WsWire.TextFrame("one"),
            WsWire.Frame(WsWire.Ping, "p1"u8),
            WsWire.BinaryFrame([1, 2, 3]),
            WsWire.Frame(WsWire.Ping, "p2"u8)));
        await client.ExpectMessageAsync(WsWire.Text, "one"u8.ToArray());
        await client.ExpectMessageAsync(WsWire.Pong, "p1"u8.ToArray());
        await client.ExpectMessageAsync(WsWire.Binary, [1, 2, 3]);
        await client.ExpectMessageAsync(WsWire.Pong, "p2"u8.ToArray());
    }
}
