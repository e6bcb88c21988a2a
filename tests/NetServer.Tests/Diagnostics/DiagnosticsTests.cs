using System;
using System.Collections.Generic;
using System.Net;
using System.Net.Sockets;
using System.Threading.Tasks;
using System.Linq;
using Xunit;

namespace NetServer.Tests.Diagnostics;

/// <summary>The event listener and the "NetServer" meter, over real loopback sockets.</summary>
public sealed class DiagnosticsTests
{
    private static readonly TimeSpan Timeout = TimeSpan.FromSeconds(10);

    private sealed class EchoSession(TcpServer server) : TcpSession(server)
    {
        protected override void OnReceived(byte[] buffer, long offset, long size) => SendAsync(buffer, offset, size);
    }

    private sealed class EchoServer(IPAddress address, int port) : TcpServer(address, port)
    {
        public TaskCompletionSource<DisconnectReason> Disconnected { get; } = new(TaskCreationOptions.RunContinuationsAsynchronously);

        public TaskCompletionSource Connected { get; } = new(TaskCreationOptions.RunContinuationsAsynchronously);


        protected override TcpSession CreateSession() => new EchoSession(this);

        protected override void OnConnected(TcpSession session) => Connected.TrySetResult();

        protected override void OnDisconnected(TcpSession session) => Disconnected.TrySetResult(session.DisconnectReason);
    }

    private static async Task<Socket> ConnectAsync(EchoServer server)
    {
        var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        await socket.ConnectAsync(new IPEndPoint(IPAddress.Loopback, server.Port)).WaitAsync(Timeout);
        return socket;
    }

    private static async Task EchoAsync(Socket socket, byte[] data)
    {
        await socket.SendAsync(data, SocketFlags.None).WaitAsync(Timeout);
        var received = 0;
        var buffer = new byte[data.Length];
        while (received < data.Length)
            received += await socket.ReceiveAsync(buffer.AsMemory(received), SocketFlags.None).AsTask().WaitAsync(Timeout);
    }

    [Fact]
    public async Task Listening_AndConnectionClosedByThePeer_AreReported_WithActiveConnectionsAndDuration()
    {
        using var metrics = new MetricRecorder();
        var listener = new RecordingListener();
        using var server = new EchoServer(IPAddress.Loopback, 0) { EventListener = listener };
        Assert.True(server.Start());
        Assert.Equal($"{server.Endpoint}", await listener.Next("Listening"));
        Assert.NotEqual(0, server.Port);

        using (var socket = await ConnectAsync(server))
        {
            await server.Connected.Task.WaitAsync(Timeout);
            Assert.Equal(1, metrics.For("netserver.active_connections", server.Port).Sum(m => m.Value));
            await EchoAsync(socket, new byte[100]);
            socket.Shutdown(SocketShutdown.Send);
            Assert.Equal(DisconnectReason.PeerClosed, await server.Disconnected.Task.WaitAsync(Timeout));
        }

        var closed = await listener.Next("ConnectionClosed");
        Assert.Contains("PeerClosed", closed, StringComparison.Ordinal);
        Assert.Contains("127.0.0.1", closed, StringComparison.Ordinal);
        Assert.Equal(0, metrics.For("netserver.active_connections", server.Port).Sum(m => m.Value));
        var duration = Assert.Single(metrics.For("netserver.connection.duration", server.Port));
        Assert.Equal("PeerClosed", duration.Tags["netserver.disconnect.reason"]);
        Assert.False(duration.Tags.ContainsKey("error.type"));
        Assert.Equal("tcp", duration.Tags["network.transport"]);
        Assert.Equal("ipv4", duration.Tags["network.type"]);

        server.Stop();
        await listener.Next("Stopped");
    }

    [Fact]
    public async Task LocalDisconnect_IsReported()
    {
        var listener = new RecordingListener();
        using var server = new EchoServer(IPAddress.Loopback, 0) { EventListener = listener };
        server.Start();
        using var socket = await ConnectAsync(server);
        await server.Connected.Task.WaitAsync(Timeout);
        server.DisconnectAll();
        Assert.Contains("ServerStopped", await listener.Next("ConnectionClosed"), StringComparison.Ordinal);

        // A client's own disconnect.
        var clientListener = new RecordingListener();
        using var client = new TcpClient(IPAddress.Loopback, server.Port) { EventListener = clientListener };
        Assert.True(client.Connect());
        client.Disconnect();
        Assert.Contains("LocalDisconnect", await clientListener.Next("ConnectionClosed"), StringComparison.Ordinal);
    }

    [Fact]
    public async Task AcceptRefused_AtTheSessionLimit_IsReportedAndCounted()
    {
        using var metrics = new MetricRecorder();
        var listener = new RecordingListener();
        using var server = new EchoServer(IPAddress.Loopback, 0) { EventListener = listener, OptionMaxSessions = 1 };
        server.Start();
        using var first = await ConnectAsync(server);
        await server.Connected.Task.WaitAsync(Timeout);
        using var second = await ConnectAsync(server);
        Assert.EndsWith(" 1", await listener.Next("AcceptRefused"), StringComparison.Ordinal);
        Assert.Equal(1, metrics.For("netserver.rejected_connections", server.Port).Sum(m => m.Value));
    }

    [Fact]
    public async Task ObservableBytes_EqualWhatWasSent()
    {
        using var metrics = new MetricRecorder();
        using var server = new EchoServer(IPAddress.Loopback, 0);
        server.Start();
        using var socket = await ConnectAsync(server);
        await EchoAsync(socket, new byte[1234]);
        Assert.Equal(1234, metrics.Observed("netserver.io", server.Port, "receive"));
        Assert.Equal(1234, metrics.Observed("netserver.io", server.Port, "transmit"));

        server.Stop();
        Assert.Null(metrics.Observed("netserver.io", server.Port, "receive")); // a stopped server is no longer observed
    }

    [Fact]
    public async Task MalformedHttpRequest_IsAProtocolError_WithThePeer()
    {
        var listener = new RecordingListener();
        using var server = new HttpServer(IPAddress.Loopback, 0) { EventListener = listener };
        server.Start();
        using var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        await socket.ConnectAsync(server.Endpoint).WaitAsync(Timeout);
        await socket.SendAsync("NOT HTTP AT ALL\r\n\r\n"u8.ToArray(), SocketFlags.None).WaitAsync(Timeout);
        var error = await listener.Next("ProtocolError");
        Assert.StartsWith($"{socket.LocalEndPoint} HTTP ", error, StringComparison.Ordinal);
    }

    [Fact]
    public async Task UdpDatagrams_AreObserved()
    {
        using var metrics = new MetricRecorder();
        var listener = new RecordingListener();
        using var server = new UdpServer(IPAddress.Loopback, 0) { EventListener = listener, OptionAutoReceive = true };
        server.Start();
        var port = ((IPEndPoint)server.Endpoint).Port;
        await listener.Next("Listening");
        using var client = new Socket(AddressFamily.InterNetwork, SocketType.Dgram, ProtocolType.Udp);
        for (var i = 0; i < 3; i++)
            await client.SendToAsync(new byte[10], SocketFlags.None, server.Endpoint).WaitAsync(Timeout);

        var deadline = DateTime.UtcNow + Timeout;
        while (server.DatagramsReceived < 3 && DateTime.UtcNow < deadline)
            await Task.Delay(10);
        Assert.Equal(3, metrics.Observed("netserver.udp.datagrams", port, "receive"));
        Assert.Equal(0, metrics.Observed("netserver.udp.datagrams", port, "transmit"));
        Assert.Equal(30, metrics.Observed("netserver.io", port, "receive"));
    }

    [Fact]
    public async Task SendPaused_ForAPeerThatNeverReads()
    {
        var listener = new RecordingListener();
        using var server = new EchoServer(IPAddress.Loopback, 0) { EventListener = listener };
        server.Start();
        var client = new TcpClient(IPAddress.Loopback, server.Port) { OptionSendBufferLimit = 64 * 1024, EventListener = listener };
        using (client)
        {
            // Awaitable sends faster than loopback drains a 64 KiB send limit: a sender parks, which is the pause.
            Assert.True(client.Connect());
            var chunk = new byte[64 * 1024];
            var sends = new List<Task<bool>>();
            for (var i = 0; i < 200 && !listener.Events.Any(e => e.StartsWith("SendPaused", StringComparison.Ordinal)); i++)
                sends.Add(client.SendAsync(chunk.AsMemory()).AsTask());
            Assert.StartsWith("127.0.0.1", await listener.Next("SendPaused"), StringComparison.Ordinal);
            client.Dispose();
        }
    }

    [Fact]
    public async Task MulticastDisconnect_ForASessionThatCannotTakeIt()
    {
        var listener = new RecordingListener();
        using var server = new EchoServer(IPAddress.Loopback, 0) { EventListener = listener };
        server.Start();
        using var socket = await ConnectAsync(server); // never reads
        await server.Connected.Task.WaitAsync(Timeout);
        var big = new byte[1024 * 1024];
        for (var i = 0; i < 64 && !listener.Events.Any(e => e.StartsWith("MulticastDisconnect", StringComparison.Ordinal)); i++)
            server.Multicast(big);
        await listener.Next("MulticastDisconnect");
        Assert.Contains("SendBufferFull", await listener.Next("ConnectionClosed"), StringComparison.Ordinal);
    }

    [Fact]
    public async Task AThrowingListener_BreaksNothing()
    {
        var listener = new ThrowingListener();
        using var server = new EchoServer(IPAddress.Loopback, 0) { EventListener = listener };
        Assert.True(server.Start());
        using (var socket = await ConnectAsync(server))
        {
            await EchoAsync(socket, new byte[10]);
            socket.Shutdown(SocketShutdown.Send);
            Assert.Equal(DisconnectReason.PeerClosed, await server.Disconnected.Task.WaitAsync(Timeout));
        }

        await listener.Next("ConnectionClosed");
        Assert.True(server.Stop());
        await listener.Next("Stopped");
    }
}
