using System;
using System.Net;
using System.Net.WebSockets;
using System.Threading;
using System.Threading.Tasks;
using Xunit;

namespace NetServer.Tests.WebSockets;

/// <summary>Our WsServer against our WsClient over loopback: upgrade, echo both ways, close handshake.</summary>
public sealed class WsSmokeTests
{
    private static readonly TimeSpan s_wait = TimeSpan.FromSeconds(10);

    private sealed class EchoServer : WsServer
    {
        public EchoServer(bool deflate = false)
            : base(new IPEndPoint(IPAddress.Loopback, 0))
        {
            if (deflate)
                WsOptions.Deflate = new WsDeflateOptions();
        }

        protected override TcpSession CreateSession() => new EchoSession(this);
    }

    private sealed class EchoSession(WsServer server) : WsSession(server)
    {
        public override void OnWsReceived(WebSocketMessageType type, byte[] buffer, long offset, long size)
        {
            if (type == WebSocketMessageType.Text)
                SendTextAsync(buffer, offset, size);
            else
                SendBinaryAsync(buffer, offset, size);
        }
    }

    [Fact]
    public async Task A_client_upgrades_and_gets_text_and_binary_messages_back()
    {
        using var server = new EchoServer();
        Assert.True(server.Start());
        using var client = new WsClient(IPAddress.Loopback, server.Port);
        Assert.True(await client.ConnectAsync(CancellationToken.None).WaitAsync(s_wait));
        Assert.True(client.IsWebSocket);

        Assert.True(client.SendTextAsync("héllo"));
        using (var echo = await client.ReceiveMessageAsync().AsTask().WaitAsync(s_wait))
        {
            Assert.True(echo.IsText);
            Assert.Equal("héllo", echo.Text);
        }

        var big = new byte[200_000];
        new Random(7).NextBytes(big);
        Assert.True(await client.SendMessageAsync(big).AsTask().WaitAsync(s_wait));
        using (var echo = await client.ReceiveMessageAsync().AsTask().WaitAsync(s_wait))
        {
            Assert.False(echo.IsText);
            Assert.Equal(big, echo.ToArray());
        }

        Assert.True(client.Close(1000));
        var start = DateTime.UtcNow;
        while (client.IsConnected && DateTime.UtcNow - start < s_wait)
            await Task.Delay(10);
        Assert.False(client.IsConnected);
        Assert.Equal(DisconnectReason.PeerClosed, client.DisconnectReason);
    }

    [Fact]
    public async Task Compressed_messages_go_both_ways_when_both_sides_agree()
    {
        using var server = new EchoServer(deflate: true);
        Assert.True(server.Start());
        using var client = new WsClient(IPAddress.Loopback, ((IPEndPoint)server.Endpoint).Port);
        client.WsOptions.Deflate = new WsDeflateOptions();
        Assert.True(await client.ConnectAsync(CancellationToken.None).WaitAsync(s_wait));
        Assert.True(client.IsWsCompressed);
        for (var i = 0; i < 20; i++)
        {
            var text = new string((char)('a' + i), 1000 + i * 500) + " end";
            Assert.True(client.SendTextAsync(text));
            using var echo = await client.ReceiveMessageAsync().AsTask().WaitAsync(s_wait);
            Assert.Equal(text, echo.Text);
        }

        Assert.True(client.BytesSent < 20 * 1000, $"{client.BytesSent} bytes sent: not compressed");
    }
}
