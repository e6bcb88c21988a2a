using System;
using System.Net;
using System.Threading.Tasks;
using NetServer.Tests.Infrastructure;
using NetServer.Tests.Messaging;
using NetServer.Tests.WebSockets;
using Xunit;

namespace NetServer.Tests.Diagnostics;

/// <summary>netserver.messages.received and .sent: the whole messages (not frames, reads or writes) a WebSocket or byte-message server's sessions received and sent.</summary>
public sealed class MessageMetricsTests
{
    [Fact]
    public async Task WebSocket_messages_are_counted_once_each_whatever_their_fragments()
    {
        using var metrics = new MetricRecorder();
        await using var host = WsTestHost.Start();
        using var client = await host.OpenAsync();
        var payload = WsWire.Payload(300, text: false);
        await client.SendAsync(WsWire.Frame(WsWire.Binary, payload));
        await client.ExpectMessageAsync(WsWire.Binary, payload);

        // One message in three fragments, then a ping: still two messages.
        await client.SendFramesAsync(0,
            WsWire.Frame(WsWire.Binary, payload.AsSpan(0, 100), fin: false),
            WsWire.Frame(WsWire.Continuation, payload.AsSpan(100, 100), fin: false),
            WsWire.Frame(WsWire.Continuation, payload.AsSpan(200, 100)),
            WsWire.Frame(WsWire.Ping, []));
        await client.ExpectMessageAsync(WsWire.Binary, payload);

        var counted = await CountedAsync(metrics, "netserver.messages.received", host.Port, 2);
        Assert.Equal("websocket", counted.Tags["netserver.protocol"]);

        // Two echoes sent; the pong that answered the ping is a control frame, not a message.
        var sent = await CountedAsync(metrics, "netserver.messages.sent", host.Port, 2);
        Assert.Equal("websocket", sent.Tags["netserver.protocol"]);
    }

    [Fact]
    public async Task Byte_messages_are_counted_once_each()
    {
        using var metrics = new MetricRecorder();
        using var server = TestMessageServer.Create(TransportKind.Tcp, s => new EchoMessageSession(s));
        Assert.True(server.Start());
        using var client = server.CreateClient();
        Assert.True(await client.ConnectAsync().WaitAsync(Wait.Default));
        for (var i = 0; i < 5; i++)
            Assert.True(client.SendAsync(Framing.Pattern(i, 100 + i)));
        for (var i = 0; i < 5; i++)
            using (await client.ReceiveAsync().AsTask().WaitAsync(Wait.Default))
            {
            }

        // The server's sessions received 5 (the client's 5 echoes are not a server's).
        var port = ((IPEndPoint)server.Endpoint).Port;
        var counted = await CountedAsync(metrics, "netserver.messages.received", port, 5);
        Assert.Equal("messages", counted.Tags["netserver.protocol"]);

        // Sent: the 5 echoes (answered from OnMessage, so batched), one send from outside a hook, and a multicast to the one session.
        var session = Assert.Single(server.Sessions);
        Assert.True(session.SendAsync(Framing.Pattern(9, 2000)));
        Assert.True(server.Multicast(Framing.Pattern(10, 10)));
        for (var i = 0; i < 2; i++)
            using (await client.ReceiveAsync().AsTask().WaitAsync(Wait.Default))
            {
            }

        var sent = await CountedAsync(metrics, "netserver.messages.sent", port, 7);
        Assert.Equal("messages", sent.Tags["netserver.protocol"]);
    }

    /// <summary>
    /// The one observed total of <paramref name="instrument"/> for the server on <paramref name="port"/>, once it reached
    /// <paramref name="expected"/>: a read's messages are added after its hooks ran, so after the
    /// echoes of the last ones may already be back; it must then stay there.
    /// </summary>
    private static async Task<MetricRecorder.Recorded> CountedAsync(MetricRecorder metrics, string instrument, int port, double expected)
    {
        MetricRecorder.Recorded? last = null;
        await Wait.UntilAsync(() =>
        {
            metrics.Measurements.Clear();
            metrics.Collect();
            last = Assert.Single(metrics.For(instrument, port));
            return last.Value >= expected;
        }, () => $"{expected} messages counted, saw {last?.Value}");
        await Task.Delay(100);
        metrics.Measurements.Clear();
        metrics.Collect();
        var counted = Assert.Single(metrics.For(instrument, port));
        Assert.Equal(expected, counted.Value);
        return counted;
    }
}
