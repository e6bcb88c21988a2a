using System;
using System.Linq;
using System.Net;
using System.Net.Sockets;
using System.Security.Cryptography;
using System.Threading.Tasks;
using NetServer.Tests.Infrastructure;
using Xunit;

namespace NetServer.Tests.SecureUdp;

/// <summary>
/// Secure UDP end to end over real loopback sockets (both I/O modes): echo with every send API,
/// datagrams tampered with in flight, captures replayed, plain and foreign datagrams, roaming only
/// on an authenticated datagram, and the refusals (no session for an endpoint, blocking Receive).
/// Bad datagrams only move counters: no hook, no OnError, no exception.
/// </summary>
public class SecureUdpEchoTests
{
    public static TheoryData<bool> Modes => new() { false, true };

    [Theory]
    [MemberData(nameof(Modes))]
    public async Task Datagrams_echo_through_the_secure_server_with_every_send_api(bool dedicatedThread)
    {
        var (server, serverSession, clientSession) = Start(dedicatedThread);
        await using (server)
        await using (var client = Connect(server.IPEndpoint, clientSession, dedicatedThread))
        {
            var sizes = new[] { 0, 1, 32, 1000, 1500, 60_000 };
            var sent = sizes.Select(RandomNumberGenerator.GetBytes).ToList();
            Assert.True(client.SendAsync(sent[0]));
            Assert.Equal(sent[1].Length, client.Send(sent[1].AsSpan()));
            Assert.True(await client.SendAsync(sent[2].AsMemory()));
            Assert.True(client.SendAsync(sent[3], 0, sent[3].Length));
            Assert.Equal(sent[4].Length, client.Send(sent[4]));
            Assert.True(await client.SendAsync(sent[5].AsMemory()));
            await Wait.UntilAsync(() => client.Received.Count == sent.Count, "every echo");

            Assert.Equal(sent.Select(Convert.ToHexString).Order(), client.Received.Select(Convert.ToHexString).Order());
            Assert.All(server.Received, r => Assert.Same(serverSession, r.Session));
            Assert.Equal(client.LocalEndpoint.Port, ((IPEndPoint)serverSession.RemoteEndpoint!).Port);
            Assert.Equal(sent.Count, serverSession.DatagramsOpened);
            Assert.Equal(sent.Count, client.Session.DatagramsOpened);
            Assert.Equal(sent.Sum(d => d.Length + SecureUdpSession.Overhead), server.BytesReceived); // wire bytes
            AssertClean(server, client);
        }
    }

    [Theory]
    [MemberData(nameof(Modes))]
    public async Task Datagrams_tampered_with_in_flight_are_counted_and_dropped(bool dedicatedThread)
    {
        var (server, serverSession, clientSession) = Start(dedicatedThread);
        await using (server)
        {
            await using var wire = new UdpWire(server.IPEndpoint);
            var flipped = 0;
            var seen = 0;
            wire.ToServer = datagram =>
            {
                if (seen++ % 3 != 1)
                    return datagram;
                flipped++;
                var changed = (byte[])datagram.Clone();
                changed[RandomNumberGenerator.GetInt32(changed.Length)] ^= (byte)(1 << RandomNumberGenerator.GetInt32(8));
                return changed;
            };
            await using var client = Connect(wire.Endpoint, clientSession, dedicatedThread);
            for (var i = 0; i < 30; i++)
                Assert.Equal(4, client.Send(BitConverter.GetBytes(i)));
            await Wait.UntilAsync(() => client.Received.Count == 20 && server.DatagramsDropped == 10, "the intact echoes and the drops");

            Assert.Equal(10, flipped);
            Assert.Equal(20, server.Received.Count);
            Assert.Equal(10, server.DatagramsDropped);
            Assert.Equal(Enumerable.Range(0, 30).Where(i => i % 3 != 1), server.Received.Select(r => BitConverter.ToInt32(r.Data)).Order());
            AssertClean(server, client);
        }
    }

    [Theory]
    [MemberData(nameof(Modes))]
    public async Task Replayed_captures_are_dropped_on_both_sides(bool dedicatedThread)
    {
        var (server, serverSession, clientSession) = Start(dedicatedThread);
        await using (server)
        {
            await using var wire = new UdpWire(server.IPEndpoint);
            await using var client = Connect(wire.Endpoint, clientSession, dedicatedThread);
            for (var i = 0; i < 20; i++)
                Assert.True(client.SendAsync($"#{i}"));
            await Wait.UntilAsync(() => client.Received.Count == 20, "every echo");

            wire.Replay(wire.CapturedToServer.ToArray(), toServer: true);
            wire.Replay(wire.CapturedToClient.ToArray(), toServer: false);
            await Wait.UntilAsync(() => serverSession.ReplaysDropped == 20 && client.Session.ReplaysDropped == 20, "the replays counted");

            Assert.Equal(20, server.Received.Count);
            Assert.Equal(20, client.Received.Count);
            Assert.Equal(20, server.DatagramsDropped);
            Assert.Equal(20, client.DatagramsDropped);
            AssertClean(server, client);
        }
    }

    [Theory]
    [MemberData(nameof(Modes))]
    public async Task Plain_and_foreign_datagrams_reach_no_hook_and_roaming_needs_an_authentic_datagram(bool dedicatedThread)
    {
        var (server, serverSession, clientSession) = Start(dedicatedThread);
        await using (server)
        await using (var client = Connect(server.IPEndpoint, clientSession, dedicatedThread))
        {
            Assert.True(client.SendAsync("first"));
            await Wait.UntilAsync(() => client.Received.Count == 1, "the first echo");
            var home = serverSession.RemoteEndpoint;

            using var stranger = new Socket(AddressFamily.InterNetwork, SocketType.Dgram, ProtocolType.Udp);
            stranger.Bind(new IPEndPoint(IPAddress.Loopback, 0));
            stranger.SendTo("plain text"u8.ToArray(), server.IPEndpoint); // 10 bytes: truncated
            stranger.SendTo(new byte[64], server.IPEndpoint); // type 0
            var foreign = new byte[64];
            foreign[0] = (byte)SecureDatagramType.Data;
            stranger.SendTo(foreign, server.IPEndpoint); // index 0: no session
            var forged = new byte[64];
            forged[0] = (byte)SecureDatagramType.Data;
            System.Buffers.Binary.BinaryPrimitives.WriteUInt32BigEndian(forged.AsSpan(1), serverSession.LocalIndex);
            forged[13] = 7; // a fresh counter: counter 0 was the first datagram's
            stranger.SendTo(forged, server.IPEndpoint); // the right index, no key
            await Wait.UntilAsync(() => server.DatagramsDropped == 4, "four drops");

            Assert.Equal(1, server.Sessions.DatagramsTruncated);
            Assert.Equal(1, server.Sessions.DatagramsOfUnknownType);
            Assert.Equal(1, server.Sessions.DatagramsForUnknownIndex);
            Assert.Equal(1, serverSession.AuthenticationFailures);
            Assert.Same(home, serverSession.RemoteEndpoint); // a datagram that did not authenticate moves nothing
            Assert.Single(server.Received);

            // The client comes back from another port with the same session: the server answers it there.
            Assert.True(client.Disconnect());
            Assert.True(client.Connect());
            Assert.True(client.SendAsync("from elsewhere"));
            await Wait.UntilAsync(() => client.Received.Count == 2, "the echo at the new port");
            Assert.Equal(client.LocalEndpoint.Port, ((IPEndPoint)serverSession.RemoteEndpoint!).Port);
            AssertClean(server, client);
        }
    }

    [Theory]
    [MemberData(nameof(Modes))]
    public async Task A_dropped_datagram_does_not_use_up_a_ReceiveAsync(bool dedicatedThread)
    {
        // One ReceiveAsync() per datagram, as in NetCoreServer: the hook that asks for the next one
        // never runs for a datagram that did not open, so the wish it left must still stand.
        var (server, serverSession, clientSession) = Start(dedicatedThread, askEachDatagram: true);
        await using (server)
        await using (var client = Connect(server.IPEndpoint, clientSession, dedicatedThread))
        {
            using var stranger = new Socket(AddressFamily.InterNetwork, SocketType.Dgram, ProtocolType.Udp);
            stranger.Bind(new IPEndPoint(IPAddress.Loopback, 0));
            for (var i = 0; i < 3; i++)
            {
                stranger.SendTo(new byte[5], server.IPEndpoint);
                await Wait.UntilAsync(() => server.DatagramsDropped == i + 1, $"drop {i}");
                Assert.True(client.SendAsync($"after drop {i}"));
                await Wait.UntilAsync(() => client.Received.Count == i + 1, $"echo {i}");
            }

            Assert.Equal(3, server.Sessions.DatagramsTruncated);
            Assert.Equal(3, serverSession.DatagramsOpened);
            AssertClean(server, client);
        }
    }

    [Fact]
    public async Task A_send_without_a_session_and_the_blocking_receive_are_refused()
    {
        var (server, _, clientSession) = Start(dedicatedThread: false);
        await using (server)
        await using (var client = Connect(server.IPEndpoint, clientSession, dedicatedThread: false))
        {
            var nobody = new IPEndPoint(IPAddress.Loopback, 9);
            Assert.False(server.SendAsync(nobody, "to nobody"u8.ToArray()));
            Assert.Equal(0, server.Send(nobody, "to nobody"u8.ToArray()));
            Assert.False(await server.SendAsync(nobody, new byte[4].AsMemory()));
            Assert.Equal(new[] { SocketError.NotConnected, SocketError.NotConnected, SocketError.NotConnected }, server.Errors.ToArray());
            Assert.Equal(0, server.DatagramsSent);

            EndPoint from = new IPEndPoint(IPAddress.Any, 0);
            Assert.Throws<InvalidOperationException>(() => client.Receive(ref from, new byte[100]));
            Assert.Empty(server.Failures);
        }
    }

    /// <summary>A started secure echo server with one session, and the client's end of that session.</summary>
    private static (EchoSecureServer Server, SecureUdpSession ServerSession, SecureUdpSession ClientSession) Start(bool dedicatedThread, bool askEachDatagram = false)
    {
        var server = new EchoSecureServer(dedicatedThread, askEachDatagram);
        var secret = SecureUdpSession.NewSecret();
        var serverIndex = server.Sessions.NewIndex();
        var clientIndex = server.Sessions.NewIndex();
        var serverSession = new SecureUdpSession(secret, "echo test"u8, SecureUdpRole.Responder, serverIndex, clientIndex);
        Assert.True(server.Sessions.TryAdd(serverSession));
        Assert.True(server.Start());
        return (server, serverSession, new SecureUdpSession(secret, "echo test"u8, SecureUdpRole.Initiator, clientIndex, serverIndex));
    }

    /// <summary>A connected secure client of <paramref name="target"/> (the server, or a wire in front of it).</summary>
    private static RecordingSecureClient Connect(IPEndPoint target, SecureUdpSession session, bool dedicatedThread)
    {
        var client = new RecordingSecureClient(target, session, dedicatedThread);
        Assert.True(client.Connect());
        return client;
    }

    private static void AssertClean(EchoSecureServer server, RecordingSecureClient client)
    {
        Assert.Empty(server.Failures);
        Assert.Empty(client.Failures);
        Assert.Empty(server.Errors);
        Assert.Empty(client.Errors);
    }
}
