using System;
using System.Buffers.Binary;
using System.Linq;
using System.Net;
using System.Net.Sockets;
using System.Text;
using System.Threading.Tasks;
using NetServer.Tests.Infrastructure;
using Xunit;

namespace NetServer.Tests.Proxy;

/// <summary>
/// The PROXY protocol on a byte-message server (and so on ProtoServer and the relay, built on it):
/// the server's options reach its transport, and the message session sees the real client.
/// </summary>
public sealed class ProxyMessageServerTests
{
    private static readonly IPEndPoint s_client = new(IPAddress.Parse("203.0.113.50"), 5150);
    private static readonly IPEndPoint s_front = new(IPAddress.Parse("198.51.100.2"), 7000);

    private sealed class SeeingSession(MessageServer server) : MessageSession(server)
    {
        protected override void OnMessage(ReadOnlySpan<byte> message)
        {
            // Answer with what the session sees of its peer, so the test reads it over the wire.
            var proxy = Proxy is { } info ? $" v{info.Version} {info.Destination}" : " none";
            SendAsync(Encoding.ASCII.GetBytes($"{RemoteEndPoint}{proxy}"));
        }
    }

    private sealed class SeeingServer(IPEndPoint endpoint) : MessageServer(endpoint)
    {
        protected override MessageSession CreateSession() => new SeeingSession(this);
    }

    private static SeeingServer Start(string trusted)
    {
        var server = new SeeingServer(new IPEndPoint(IPAddress.Loopback, 0))
        {
            OptionProxyProtocol = ProxyProtocolMode.Required,
            OptionProxyHeaderTimeout = TimeSpan.FromSeconds(5),
        };
        server.OptionProxyTrustedNetworks.Add(trusted);
        Assert.True(server.Start());
        return server;
    }

    private static byte[] Message(string text)
    {
        var body = Encoding.ASCII.GetBytes(text);
        var frame = new byte[4 + body.Length];
        BinaryPrimitives.WriteInt32LittleEndian(frame, body.Length);
        body.CopyTo(frame, 4);
        return frame;
    }

    private static async Task<string> ReadMessageAsync(Socket socket)
    {
        var prefix = await Wait.ReadExactlyAsync(socket, 4);
        var length = BinaryPrimitives.ReadInt32LittleEndian(prefix);
        return Encoding.ASCII.GetString(await Wait.ReadExactlyAsync(socket, length));
    }

    [Fact]
    public async Task A_message_session_behind_a_trusted_proxy_sees_the_real_client()
    {
        using var server = Start("127.0.0.0/8");
        Assert.Equal(ProxyProtocolMode.Required, server.OptionProxyProtocol);
        Assert.Equal(TimeSpan.FromSeconds(5), server.OptionProxyHeaderTimeout);
        using var socket = await ProxyHeaders.ConnectAsync(server.Endpoint);

        // Header and first message in one write: nothing after the header may be lost.
        await socket.SendAsync(ProxyHeaders.V2(s_client, s_front).Concat(Message("who")).ToArray(), SocketFlags.None).WaitAsync(Wait.Default);
        Assert.Equal($"{s_client} v2 {s_front}", await ReadMessageAsync(socket));

        // A v1 header on a second connection.
        using var second = await ProxyHeaders.ConnectAsync(server.Endpoint);
        await second.SendAsync(ProxyHeaders.V1("192.0.2.33", 1234, "198.51.100.2", 7000).Concat(Message("who")).ToArray(), SocketFlags.None).WaitAsync(Wait.Default);
        Assert.Equal($"192.0.2.33:1234 v1 {s_front}", await ReadMessageAsync(second));
    }

    [Fact]
    public async Task An_untrusted_peer_is_refused_and_the_server_goes_on()
    {
        using var server = Start("10.0.0.0/8");
        using var socket = await ProxyHeaders.ConnectAsync(server.Endpoint);
        await socket.SendAsync(ProxyHeaders.V2(s_client, s_front).Concat(Message("who")).ToArray(), SocketFlags.None).WaitAsync(Wait.Default);

        // Closed without an answer.
        Assert.Empty(await ProxyHeaders.ReadToEndAsync(socket));
        await Wait.UntilAsync(() => server.ConnectedSessions == 0, "the refused session gone");
        Assert.True(server.IsStarted);
    }

    [Fact]
    public void Required_with_no_trusted_proxy_fails_the_start_as_on_a_stream_server()
    {
        using var server = new SeeingServer(new IPEndPoint(IPAddress.Loopback, 0)) { OptionProxyProtocol = ProxyProtocolMode.Required };
        var error = Assert.Throws<InvalidOperationException>(() => server.Start());
        Assert.Contains("OptionProxyTrustedNetworks is empty", error.Message, StringComparison.Ordinal);
    }
}
