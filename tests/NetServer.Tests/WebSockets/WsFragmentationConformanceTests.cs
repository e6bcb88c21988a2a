using System.Linq;
using System.Text;
using System.Threading.Tasks;
using NetServer.Tests.Infrastructure;
using Xunit;

namespace NetServer.Tests.WebSockets;

/// <summary>Autobahn group 5 (fragmentation) against our WsServer, driven by a raw client.</summary>
public sealed class WsFragmentationConformanceTests
{
    private const int Cont = WsWire.Continuation;

    /// <summary>Transport, opcode, chunk size.</summary>
    public static TheoryData<TransportKind, int, int> TwoFragmentCases
    {
        get
        {
            var data = new TheoryData<TransportKind, int, int>();
            foreach (var kind in WsTransports.Kinds)
            {
                foreach (var opcode in new[] { WsWire.Text, WsWire.Binary })
                {
                    data.Add(kind, opcode, 0);
                    data.Add(kind, opcode, 1);
                }
            }

            return data;
        }
    }

    public static TheoryData<TransportKind> Transports => WsTransports.All;

    [Theory]
    [MemberData(nameof(TwoFragmentCases))]
    public async Task A_message_in_two_fragments_comes_back_as_one(TransportKind kind, int opcode, int chunk)
    {
        // 5.3-5.5
        await using var host = WsTestHost.Start(kind);
        using var client = await host.OpenAsync();
        await client.SendFramesAsync(chunk,
            WsWire.Frame(opcode, "fragment1"u8, fin: false),
            WsWire.Frame(Cont, "fragment2"u8));
        await client.ExpectMessageAsync(opcode, "fragment1fragment2"u8.ToArray());
        Assert.Empty(host.Log.Errors);
    }

    [Theory]
    [MemberData(nameof(TwoFragmentCases))]
    public async Task A_ping_between_fragments_is_answered_before_the_message(TransportKind kind, int opcode, int chunk)
    {
        // 5.6-5.8
        await using var host = WsTestHost.Start(kind);
        using var client = await host.OpenAsync();
        await client.SendFramesAsync(chunk,
            WsWire.Frame(opcode, "fragment1"u8, fin: false),
            WsWire.Frame(WsWire.Ping, "ping payload"u8),
            WsWire.Frame(Cont, "fragment2"u8));
        await client.ExpectMessageAsync(WsWire.Pong, "ping payload"u8.ToArray());
        await client.ExpectMessageAsync(opcode, "fragment1fragment2"u8.ToArray());
    }

    [Theory]
    [MemberData(nameof(Transports))]
    public async Task Control_frames_between_fragments_are_handled_at_once(TransportKind kind)
    {
        // 5.19/5.20: each ping is answered while the message is still unfinished, and unsolicited
        // pongs between fragments are ignored.
        await using var host = WsTestHost.Start(kind);
        using var client = await host.OpenAsync();
        await client.SendFramesAsync(0,
            WsWire.Frame(WsWire.Text, "f1"u8, fin: false),
            WsWire.Frame(Cont, "f2"u8, fin: false),
            WsWire.Frame(WsWire.Ping, "p1"u8));
        await client.ExpectMessageAsync(WsWire.Pong, "p1"u8.ToArray());
        await client.SendFramesAsync(0,
            WsWire.Frame(Cont, "f3"u8, fin: false),
            WsWire.Frame(WsWire.Pong, "unsolicited"u8),
            WsWire.Frame(Cont, "f4"u8, fin: false),
            WsWire.Frame(WsWire.Ping, "p2"u8));
        await client.ExpectMessageAsync(WsWire.Pong, "p2"u8.ToArray());
        await client.SendAsync(WsWire.Frame(Cont, "f5"u8));
        await client.ExpectMessageAsync(WsWire.Text, "f1f2f3f4f5"u8.ToArray());
        Assert.Empty(host.Log.Errors);
    }

    [Theory]
    [InlineData(WsWire.Ping)]
    [InlineData(WsWire.Pong)]
    [InlineData(WsWire.Close)]
    public async Task A_fragmented_control_frame_is_a_protocol_error(int opcode)
    {
        // 5.1, 5.2
        await using var host = WsTestHost.Start();
        var first = opcode == WsWire.Close ? WsWire.ClosePayload(1000, []) : "fragment1"u8.ToArray();
        await host.AssertFaultAsync(WsWire.Concat(WsWire.Frame(opcode, first, fin: false), WsWire.Frame(Cont, "fragment2"u8)), 1002);
    }

    [Theory]
    [InlineData(true, 0)]
    [InlineData(true, 1)]
    [InlineData(false, 0)]
    [InlineData(false, 1)]
    public async Task A_continuation_without_a_message_is_a_protocol_error(bool fin, int chunk)
    {
        // 5.9-5.14
        await using var host = WsTestHost.Start();
        var bytes = WsWire.Concat(
            WsWire.Frame(Cont, "non-continuation payload"u8, fin: fin),
            WsWire.TextFrame("Hello, world!"));
        await host.AssertFaultAsync(bytes, 1002, chunk);
    }

    [Fact]
    public async Task A_continuation_after_a_finished_message_is_a_protocol_error()
    {
        // 5.15: the first message is whole and echoed; the stray continuation after it fails.
        await using var host = WsTestHost.Start();
        var bytes = WsWire.Concat(
            WsWire.Frame(WsWire.Text, "fragment1"u8, fin: false),
            WsWire.Frame(Cont, "fragment2"u8),
            WsWire.Frame(Cont, "fragment3"u8, fin: false),
            WsWire.Frame(WsWire.Text, "fragment4"u8));
        await host.AssertFaultAsync(bytes, 1002, before: (WsWire.Text, "fragment1fragment2"u8.ToArray()));
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public async Task Continuations_before_any_message_are_a_protocol_error(bool firstFin)
    {
        // 5.16, 5.17
        await using var host = WsTestHost.Start();
        var bytes = WsWire.Concat(
            WsWire.Frame(Cont, "fragment1"u8, fin: firstFin),
            WsWire.Frame(Cont, "fragment2"u8),
            WsWire.Frame(WsWire.Text, "fragment3"u8, fin: false),
            WsWire.Frame(Cont, "fragment4"u8));
        await host.AssertFaultAsync(bytes, 1002);
    }

    [Theory]
    [InlineData(WsWire.Text, WsWire.Text, true)]
    [InlineData(WsWire.Text, WsWire.Text, false)]
    [InlineData(WsWire.Text, WsWire.Binary, true)]
    [InlineData(WsWire.Binary, WsWire.Text, false)]
    public async Task A_new_message_inside_an_unfinished_one_is_a_protocol_error(int first, int second, bool secondFin)
    {
        // 5.18
        await using var host = WsTestHost.Start();
        var bytes = WsWire.Concat(
            WsWire.Frame(first, "fragment1"u8, fin: false),
            WsWire.Frame(second, "fragment2"u8, fin: secondFin));
        await host.AssertFaultAsync(bytes, 1002);
    }

    [Theory]
    [MemberData(nameof(Transports))]
    public async Task Fragments_of_one_byte_each_rebuild_the_message(TransportKind kind)
    {
        // Multi-byte characters split between fragments, one payload byte per frame.
        await using var host = WsTestHost.Start(kind);
        using var client = await host.OpenAsync();
        var text = Encoding.UTF8.GetBytes("Hello, wörld ☃ € 🎉 κόσμε");
        var frames = text.Select((b, i) => WsWire.Frame(i == 0 ? WsWire.Text : Cont, new[] { b }, fin: i == text.Length - 1)).ToArray();
        await client.SendAsync(WsWire.Concat(frames));
        await client.ExpectMessageAsync(WsWire.Text, text);

        var binary = WsWire.Payload(300, text: false);
        frames = binary.Select((b, i) => WsWire.Frame(i == 0 ? WsWire.Binary : Cont, new[] { b }, fin: i == binary.Length - 1)).ToArray();
        await client.SendAsync(WsWire.Concat(frames), chunk: 7);
        await client.ExpectMessageAsync(WsWire.Binary, binary);
        Assert.Empty(host.Log.Errors);
    }

    [Theory]
    [InlineData(WsWire.Text)]
    [InlineData(WsWire.Binary)]
    public async Task Empty_fragments_are_allowed(int opcode)
    {
        // Autobahn 6.1.2/6.1.3: empty fragments, alone or around data.
        await using var host = WsTestHost.Start();
        using var client = await host.OpenAsync();
        await client.SendFramesAsync(0,
            WsWire.Frame(opcode, [], fin: false),
            WsWire.Frame(Cont, [], fin: false),
            WsWire.Frame(Cont, []));
        await client.ExpectMessageAsync(opcode, []);

        await client.SendFramesAsync(0,
            WsWire.Frame(opcode, [], fin: false),
            WsWire.Frame(Cont, "middle"u8, fin: false),
            WsWire.Frame(Cont, [], fin: false),
            WsWire.Frame(Cont, [], fin: false),
            WsWire.Frame(Cont, "end"u8, fin: false),
            WsWire.Frame(Cont, []));
        await client.ExpectMessageAsync(opcode, "middleend"u8.ToArray());
        Assert.Empty(host.Log.Errors);
    }

    [Fact]
    public async Task A_close_between_fragments_ends_the_connection_without_the_message()
    {
        // 7.1.5: the unfinished message is never delivered, the continuation after the close is ignored.
        await using var host = WsTestHost.Start();
        using var client = await host.OpenAsync();
        await client.SendFramesAsync(0,
            WsWire.Frame(WsWire.Text, "fragment1"u8, fin: false),
            WsWire.CloseFrame(1000),
            WsWire.Frame(Cont, "fragment2"u8));
        await client.ExpectCloseAsync(1000);
        Assert.Empty(host.Log.Errors);
    }
}
