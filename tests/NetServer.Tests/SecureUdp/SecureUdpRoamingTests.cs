using System;
using System.Diagnostics;
using System.Linq;
using System.Net;
using System.Net.Sockets;
using System.Threading.Tasks;
using Xunit;

namespace NetServer.Tests.SecureUdp;

/// <summary>
/// Where a secure server answers a session: only an authenticated datagram with the highest counter
/// yet moves it (not a replay, not a held-back one from elsewhere), and never onto an endpoint
/// another live session holds; replies go by session.
/// </summary>
public class SecureUdpRoamingTests
{
    [Fact]
    public async Task Only_a_newer_datagram_moves_the_endpoint_a_replay_or_a_held_back_one_does_not()
    {
        using var server = new EchoSecureServer(dedicatedThread: false);
        var (serverSession, clientSession) = AddSession(server, 1);
        Assert.True(server.Start());
        using var a = Bound();
        using var b = Bound();

        var first = SecureSessions.Seal(clientSession, "1");
        a.SendTo(first, server.IPEndpoint);
        await Until(() => server.Received.Count == 1);
        Assert.Equal(a.LocalEndPoint, serverSession.RemoteEndpoint);

        // Captured and replayed from another socket: a replay, dropped.
        b.SendTo(first, server.IPEndpoint);
        await Until(() => serverSession.ReplaysDropped == 1);
        Assert.Equal(a.LocalEndPoint, serverSession.RemoteEndpoint);

        // An older datagram held back and released from another address after a newer one: delivered, but it moves nothing.
        var older = SecureSessions.Seal(clientSession, "2");
        var newer = SecureSessions.Seal(clientSession, "3");
        a.SendTo(newer, server.IPEndpoint);
        await Until(() => server.Received.Count == 2);
        b.SendTo(older, server.IPEndpoint);
        await Until(() => server.Received.Count == 3);
        Assert.Equal(a.LocalEndPoint, serverSession.RemoteEndpoint);

        // A genuine roam: the client's socket changes and it sends new datagrams.
        b.SendTo(SecureSessions.Seal(clientSession, "4"), server.IPEndpoint);
        await Until(() => server.Received.Count == 4);
        Assert.Equal(b.LocalEndPoint, serverSession.RemoteEndpoint);
        Assert.Empty(server.Failures);
    }

    [Fact]
    public async Task An_endpoint_stays_with_its_first_live_session_and_replies_go_by_session()
    {
        using var server = new EchoSecureServer(dedicatedThread: false);
        var (sessionA, clientA) = AddSession(server, 1);
        var (sessionB, clientB) = AddSession(server, 2);
        Assert.True(server.Start());
        using var a = Bound();

        a.SendTo(SecureSessions.Seal(clientA, "from A"), server.IPEndpoint);
        await Until(() => server.Received.Count == 1);

        // Client B, authenticated, spoofs A's source: its datagram is delivered, A's endpoint stays A's.
        a.SendTo(SecureSessions.Seal(clientB, "B as A"), server.IPEndpoint);
        await Until(() => server.Received.Count == 2);
        Assert.Equal(1, server.EndpointConflicts);
        Assert.Null(sessionB.RemoteEndpoint);
        Assert.Equal(a.LocalEndPoint, sessionA.RemoteEndpoint);
        await Until(() => server.Errors.Contains(SocketError.NotConnected)); // the reply to B has nowhere to go

        // What reaches A is sealed with A's keys only.
        var buffer = new byte[2048];
        a.ReceiveTimeout = 5000;
        var length = a.Receive(buffer);
        Assert.Equal(SecureDatagramStatus.Ok, clientA.Open(buffer.AsSpan(0, length), out _, out var payloadLength));
        Assert.Equal("from A"u8.ToArray(), buffer.AsSpan(SecureUdpSession.HeaderLength, payloadLength).ToArray());

        // Once A's session is removed, its endpoint is free for B.
        Assert.True(server.Sessions.Remove(sessionA));
        a.SendTo(SecureSessions.Seal(clientB, "B"), server.IPEndpoint);
        await Until(() => server.Received.Count == 3);
        Assert.Equal(a.LocalEndPoint, sessionB.RemoteEndpoint);
    }

    private static (SecureUdpSession Server, SecureUdpSession Client) AddSession(SecureUdpServer server, uint seed)
    {
        var secret = SecureUdpSession.NewSecret();
        var serverIndex = server.Sessions.NewIndex();
        var clientIndex = serverIndex ^ 0x5A5A0000 ^ seed;
        var serverSession = new SecureUdpSession(secret, "roam"u8, SecureUdpRole.Responder, serverIndex, clientIndex);
        Assert.True(server.Sessions.TryAdd(serverSession));
        return (serverSession, new SecureUdpSession(secret, "roam"u8, SecureUdpRole.Initiator, clientIndex, serverIndex));
    }

    private static Socket Bound()
    {
        var socket = new Socket(AddressFamily.InterNetwork, SocketType.Dgram, ProtocolType.Udp);
        socket.Bind(new IPEndPoint(IPAddress.Loopback, 0));
        return socket;
    }

    private static async Task Until(Func<bool> condition)
    {
        var deadline = Stopwatch.StartNew();
        while (!condition())
        {
            Assert.True(deadline.Elapsed < TimeSpan.FromSeconds(10), "The condition did not come true within 10 s.");
            await Task.Delay(10);
        }
    }
}
