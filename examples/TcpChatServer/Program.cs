using System;
using System.Globalization;
using System.Net;
using System.Net.Sockets;
using System.Threading.Tasks;

namespace NetServer.Examples.TcpChatServer;

/// <summary>One chat member connected over TCP.</summary>
internal sealed class ChatSession(ChatServer server) : TcpSession(server)
{
    private readonly LineReader _lines = new();

    protected override void OnReceived(ReadOnlySpan<byte> buffer) => ChatRoom.Relay(Server, this, _lines, buffer);

    protected override void OnError(SocketError error) => Console.WriteLine($"Session {Id} caught a socket error: {error}");
}

/// <summary>The chat room on a TCP port.</summary>
internal sealed class ChatServer(IPAddress address, int port) : TcpServer(address, port)
{
    protected override TcpSession CreateSession() => new ChatSession(this);

    protected override void OnConnected(TcpSession session) => ChatRoom.Welcome(session, session.Socket?.RemoteEndPoint?.ToString());

    protected override void OnDisconnected(TcpSession session) => ChatRoom.Farewell(session);

    protected override void OnError(SocketError error) => Console.WriteLine($"The server caught a socket error: {error}");
}

internal static class Program
{
    private const int DefaultPort = 1111;

    /// <summary>Usage: TcpChatServer [port] [address]. Port 0 lets the system pick a free port; the address defaults to 127.0.0.1 (pass 0.0.0.0 to accept other machines).</summary>
    private static async Task<int> Main(string[] args)
    {
        var port = args.Length > 0 ? int.Parse(args[0], CultureInfo.InvariantCulture) : DefaultPort;
        var address = args.Length > 1 ? IPAddress.Parse(args[1]) : IPAddress.Loopback;

        // No delay: chat lines are small and should leave at once. Reuse address: a restart can
        // bind the port again while connections it just closed are still in TIME_WAIT.
        using var server = new ChatServer(address, port) { OptionNoDelay = true, OptionReuseAddress = true };
        return await ChatRoom.RunConsoleAsync(server, "TCP chat server");
    }
}
