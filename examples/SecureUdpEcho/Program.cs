using System;
using System.Buffers.Binary;
using System.Globalization;
using System.Net;
using System.Net.Sockets;
using System.Text;

namespace NetServer.Examples.SecureUdpEcho;

/// <summary>Opens every datagram of its sessions, prints it, and sends it back sealed.</summary>
internal sealed class EchoServer(IPAddress address, int port) : SecureUdpServer(address, port)
{
    protected override void OnStarted() => ReceiveAsync();

    protected override void OnReceived(SecureUdpSession session, EndPoint endpoint, byte[] buffer, long offset, long size)
    {
        Console.WriteLine($"Server opened \"{Encoding.UTF8.GetString(buffer, (int)offset, (int)size)}\" from {endpoint} (session {session.LocalIndex:x8})");
        SendAsync(session, buffer, offset, size); // sealed with this session, sent to its endpoint (the newest authenticated one)
        ReceiveAsync();
    }

    protected override void OnError(SocketError error) => Console.WriteLine($"Server socket error: {error}");
}

/// <summary>Prints every echo it could open.</summary>
internal sealed class EchoClient(IPEndPoint server, SecureUdpSession session) : SecureUdpClient(server, session)
{
    protected override void OnReceived(EndPoint endpoint, ReadOnlySpan<byte> buffer) => Console.WriteLine($"Echo: {Encoding.UTF8.GetString(buffer)}");

    protected override void OnError(SocketError error) => Console.WriteLine($"Client socket error: {error}");
}

internal static class Program
{
    /// <summary>
    /// Usage: SecureUdpEcho [port]. A secure UDP echo server on 127.0.0.1 (port 0, the default, picks
    /// a free one) and a client of it in one program, with keys made here: in a real deployment the
    /// secret and the indexes reach both sides over TLS (docs/secure-udp.md). Each line typed is
    /// sealed by the client, opened and echoed by the server; "!forge" sends the server a datagram
    /// with its session's index and no valid tag; an empty line prints the counters and quits.
    /// </summary>
    private static int Main(string[] args)
    {
        var port = args.Length > 0 ? int.Parse(args[0], CultureInfo.InvariantCulture) : 0;

        // One fresh secret per session, never reused: both sides derive their keys from it.
        var secret = SecureUdpSession.NewSecret();
        var context = "SecureUdpEcho example"u8;
        using var server = new EchoServer(IPAddress.Loopback, port);
        var serverIndex = server.Sessions.NewIndex();
        var clientIndex = server.Sessions.NewIndex();
        using var serverSession = new SecureUdpSession(secret, context, SecureUdpRole.Responder, serverIndex, clientIndex);
        using var clientSession = new SecureUdpSession(secret, context, SecureUdpRole.Initiator, clientIndex, serverIndex);
        server.Sessions.TryAdd(serverSession);
        server.Start();
        Console.WriteLine($"Listening on {server.Endpoint}");
        Console.WriteLine($"Session: {serverSession.Algorithm}, server index {serverIndex:x8}, client index {clientIndex:x8}");

        using var client = new EchoClient((IPEndPoint)server.Endpoint, clientSession) { OptionAutoReceive = true };
        client.Connect();
        Console.WriteLine("Type a line to send it sealed, '!forge' to send a forged datagram, or an empty line to quit.");

        while (Console.ReadLine() is { Length: > 0 } line)
        {
            if (line == "!forge")
                Forge(server.Endpoint, serverIndex);
            else
                client.SendAsync(line);
        }

        client.Disconnect();
        server.Stop();
        Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
            $"Server session: opened {serverSession.DatagramsOpened}, authentication failures {serverSession.AuthenticationFailures}, replays {serverSession.ReplaysDropped}; server dropped {server.DatagramsDropped}"));
        Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
            $"Client session: sealed {clientSession.DatagramsSealed}, opened {clientSession.DatagramsOpened}"));
        return 0;
    }

    /// <summary>A datagram with the server session's index, a fresh counter and a made-up tag: counted and dropped, never delivered.</summary>
    private static void Forge(EndPoint server, uint serverIndex)
    {
        var datagram = new byte[SecureUdpSession.Overhead + 5];
        datagram[0] = (byte)SecureDatagramType.Data;
        BinaryPrimitives.WriteUInt32BigEndian(datagram.AsSpan(1), serverIndex);
        BinaryPrimitives.WriteUInt64BigEndian(datagram.AsSpan(6), 1_000_000);
        "forge"u8.CopyTo(datagram.AsSpan(SecureUdpSession.HeaderLength));
        using var socket = new Socket(AddressFamily.InterNetwork, SocketType.Dgram, ProtocolType.Udp);
        socket.SendTo(datagram, server);
        Console.WriteLine("Sent a forged datagram to the server");
    }
}
