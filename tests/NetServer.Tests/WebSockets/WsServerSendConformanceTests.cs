using System;
using System.Net;
using System.Net.Sockets;
using System.Net.WebSockets;
using System.Text;
using System.Threading.Tasks;
using NetServer.Tests.Infrastructure;
using Xunit;

namespace NetServer.Tests.WebSockets;

/// <summary>
/// What our server sends, read by the raw client: a message sent in parts is a text frame and
/// continuations with a ping between them, server frames are never masked, a close ends it, and
/// a multicast reaches upgraded sessions only.
/// </summary>
public sealed class WsServerSendConformanceTests
{
    private sealed class ScriptServer(Func<WsSession, Task> script) : WsServer(new IPEndPoint(IPAddress.Loopback, 0))
    {
        public TaskCompletionSource<Exception?> Done { get; } = new(TaskCreationOptions.RunContinuationsAsynchronously);

        public Func<WsSession, Task> Script { get; } = script;

        protected override TcpSession CreateSession() => new ScriptSession(this);

        private sealed class ScriptSession(ScriptServer server) : WsSession(server)
        {
            public override void OnWsConnected(HttpRequest request) => _ = RunAsync();

            protected override void OnReceivedRequest(HttpRequest request) => SendResponseAsync(Response.MakeGetResponse("plain"));

            private async Task RunAsync()
            {
                try
                {
                    await server.Script(this);
                    server.Done.TrySetResult(null);
                }
                catch (Exception e)
                {
                    server.Done.TrySetResult(e);
                }
            }
        }
    }

    private static async Task<WsRawClient> OpenAsync(WsServer server)
    {
        var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
        await socket.ConnectAsync(server.Endpoint).WaitAsync(Wait.Default);
        var client = new WsRawClient(socket);
        Assert.StartsWith("HTTP/1.1 101 ", await client.UpgradeAsync(), StringComparison.Ordinal);
        return client;
    }

    private static async Task<WsWireFrame> ExpectFrameAsync(WsRawClient client, int opcode, bool fin, string payload)
    {
        var frame = await client.ReadFrameAsync();
        Assert.True(frame is not null, $"The connection ended instead of \"{payload}\".");
        Assert.True(frame.Opcode == opcode && frame.Fin == fin && !frame.Masked && frame.Rsv == 0, $"Expected opcode {opcode} fin={fin} \"{payload}\", got {frame}");
        Assert.Equal(payload, Encoding.UTF8.GetString(frame.Payload));
        return frame;
    }

    [Fact]
    public async Task A_message_sent_in_parts_is_a_frame_and_continuations_with_a_ping_between()
    {
        using var server = new ScriptServer(async session =>
        {
            Assert.True(await session.SendMessageAsync("part1;"u8.ToArray(), WebSocketMessageType.Text, endOfMessage: false));
            Assert.True(session.SendPingAsync("between"));
            Assert.True(await session.SendMessageAsync("part2;"u8.ToArray(), WebSocketMessageType.Text, endOfMessage: false));
            Assert.True(await session.SendMessageAsync("part3"u8.ToArray(), WebSocketMessageType.Text, endOfMessage: true));
            Assert.True(session.SendBinaryAsync("next"u8));
            Assert.True(session.Close(1000, "done"));
            Assert.False(session.SendTextAsync("after the close")); // no data frame follows a close frame
        });
        Assert.True(server.Start());
        using var client = await OpenAsync(server);
        Assert.Null(await server.Done.Task.WaitAsync(Wait.Default));

        await ExpectFrameAsync(client, WsWire.Text, fin: false, "part1;");
        await ExpectFrameAsync(client, WsWire.Ping, fin: true, "between");
        await ExpectFrameAsync(client, WsWire.Continuation, fin: false, "part2;");
        await ExpectFrameAsync(client, WsWire.Continuation, fin: true, "part3");
        await ExpectFrameAsync(client, WsWire.Binary, fin: true, "next");
        var close = await client.ReadFrameAsync();
        Assert.True(close is { Opcode: WsWire.Close, CloseCode: 1000, Masked: false }, $"Expected the close, got {close}");
        Assert.Equal("done", close.CloseReason);

        await client.SendAsync(WsWire.CloseFrame(1000));
        await client.ExpectEndAsync(); // the server closes TCP once the handshake is done
    }

    [Fact]
    public async Task A_multicast_reaches_upgraded_sessions_only()
    {
        using var server = new ScriptServer(_ => Task.CompletedTask);
        Assert.True(server.Start());
        using var plain = new WsRawClient(await ConnectAsync(server));
        await plain.SendAsync(Encoding.ASCII.GetBytes("GET / HTTP/1.1\r\nHost: x\r\n\r\n"));
        Assert.StartsWith("HTTP/1.1 200 ", await plain.Reader.ReadHeadAsync(), StringComparison.Ordinal);
        Assert.Equal("plain"u8.ToArray(), await plain.Reader.ReadBytesAsync(5));

        using var upgraded = await OpenAsync(server);
        Assert.Null(await server.Done.Task.WaitAsync(Wait.Default)); // OnWsConnected ran: the session joined the multicast (after its 101 went out)
        Assert.True(server.MulticastText("to every WebSocket"));
        await ExpectFrameAsync(upgraded, WsWire.Text, fin: true, "to every WebSocket");

        // The HTTP connection got nothing: its next bytes are the answer to its next request.
        await plain.SendAsync(Encoding.ASCII.GetBytes("GET /again HTTP/1.1\r\nHost: x\r\n\r\n"));
        Assert.StartsWith("HTTP/1.1 200 ", await plain.Reader.ReadHeadAsync(), StringComparison.Ordinal);
    }

    private static async Task<Socket> ConnectAsync(WsServer server)
    {
        var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
        await socket.ConnectAsync(server.Endpoint).WaitAsync(Wait.Default);
        return socket;
    }
}
