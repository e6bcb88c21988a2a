using System;
using System.IO;
using System.Net.Sockets;
using System.Net.WebSockets;
using System.Threading;
using System.Threading.Tasks;
using NetServer.Tests.Infrastructure;
using Xunit;

namespace NetServer.Tests.Http;

/// <summary>
/// HTTP and WebSocket over a Unix domain socket: the same server, session and client classes as
/// over TCP, constructed with a socket file. (Not in the netstandard2.0 test build: those
/// constructors take UnixDomainSocketEndPoint, which netstandard2.0 has not.)
/// </summary>
public sealed class HttpOverUnixSocketTests : IDisposable
{
    private readonly string _directory = Path.Combine(Path.GetTempPath(), "netserver-httpuds-" + Guid.NewGuid().ToString("N")[..12]);

    public HttpOverUnixSocketTests() => Directory.CreateDirectory(_directory);

    public void Dispose() => Directory.Delete(_directory, recursive: true);

    private string SocketPath => Path.Combine(_directory, "http.sock");

    private sealed class EchoSession(HttpServer server) : HttpSession(server)
    {
        protected override void OnReceivedRequest(HttpRequest request) =>
            SendResponseAsync(Response.MakeGetResponse(request.Method + " " + request.Url + " " + request.Body));
    }

    private sealed class EchoServer(string path) : HttpServer(new UnixDomainSocketEndPoint(path))
    {
        protected override TcpSession CreateSession() => new EchoSession(this);
    }

    private sealed class WsEchoSession(WsServer server) : WsSession(server)
    {
        public override void OnWsReceived(WebSocketMessageType type, byte[] buffer, long offset, long size) =>
            _ = type == WebSocketMessageType.Text ? SendTextAsync(buffer, offset, size) : SendBinaryAsync(buffer, offset, size);
    }

    private sealed class WsEchoServer(string path) : WsServer(new UnixDomainSocketEndPoint(path))
    {
        protected override TcpSession CreateSession() => new WsEchoSession(this);
    }

    [CurlFact]
    public async Task Curl_talks_HTTP_to_a_server_on_a_socket_file_and_the_file_goes_with_the_server()
    {
        using (var server = new EchoServer(SocketPath))
        {
            Assert.True(server.Start());
            Assert.True(File.Exists(SocketPath));
            var (exit, output, errors) = await Curl.RunAsync("-sS", "--unix-socket", SocketPath, "http://localhost/one", "-d", "body");
            Assert.True(exit == 0, errors);
            Assert.Equal("POST /one body", output);
            Assert.True(server.Stop());
        }

        Assert.False(File.Exists(SocketPath));
    }

    [Fact]
    public async Task HttpClientEx_reuses_its_connection_over_a_socket_file()
    {
        using var server = new EchoServer(SocketPath);
        Assert.True(server.Start());
        using var client = new HttpClientEx(new UnixDomainSocketEndPoint(SocketPath));
        Assert.Equal("GET /a ", (await client.SendGetRequest("/a", Wait.Default)).Body);
        Assert.Equal("PUT /b x", (await client.SendPutRequest("/b", "x", Wait.Default)).Body);
        Assert.Equal(1, server.ConnectedSessions);
    }

    [Fact]
    public async Task A_WebSocket_client_and_server_talk_over_a_socket_file()
    {
        using var server = new WsEchoServer(SocketPath);
        Assert.True(server.Start());
        using var client = new WsClient(new UnixDomainSocketEndPoint(SocketPath));
        Assert.True(await client.ConnectAsync(CancellationToken.None).WaitAsync(Wait.Default));
        Assert.True(client.SendTextAsync("over a socket file"));
        using (var echo = await client.ReceiveMessageAsync().AsTask().WaitAsync(Wait.Default))
            Assert.Equal("over a socket file", echo.Text);
        Assert.True(server.MulticastBinary([1, 2, 3]));
        using (var multicast = await client.ReceiveMessageAsync().AsTask().WaitAsync(Wait.Default))
            Assert.Equal(new byte[] { 1, 2, 3 }, multicast.ToArray());
        Assert.True(client.Close(WsCloseStatus.Normal));
        await Wait.UntilAsync(() => !client.IsConnected, "the close handshake");
        Assert.Equal(DisconnectReason.PeerClosed, client.DisconnectReason);
    }
}
