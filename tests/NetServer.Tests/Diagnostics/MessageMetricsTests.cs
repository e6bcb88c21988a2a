using System;
using System.Linq;
using System.Net;
using System.Threading.Tasks;
using NetServer.Tests.Infrastructure;
using NetServer.Tests.Messaging;
using NetServer.Tests.WebSockets;
using Xunit;

namespace NetServer.Tests.Diagnostics;

/// <summary>netserver.messages.received counts whole messages, not frames or reads, for WebSocket and byte-message servers.</summary>
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

        var counted = metrics.For("netserver.messages.received", host.Port).ToArray();
        Assert.Equal(2, counted.Sum(m => m.Value));
        Assert.All(counted, m => Assert.Equal("websocket", m.Tags["netserver.protocol"]));
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

        // The session received 5 and the client (a NetServer client of the same endpoint) their 5 echoes.
        var counted = metrics.For("netserver.messages.received", ((IPEndPoint)server.Endpoint).Port).ToArray();
        Assert.Equal(10, counted.Sum(m => m.Value));
        Assert.All(counted, m => Assert.Equal("messages", m.Tags["netserver.protocol"]));
    }
}
