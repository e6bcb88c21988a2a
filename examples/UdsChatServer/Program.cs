using System;
using System.Net.Sockets;
using System.Threading.Tasks;

namespace NetServer.Examples.UdsChatServer;

/// <summary>One chat member connected through the Unix domain socket.</summary>
internal sealed class ChatSession(ChatServer server) : UdsSession(server)
{
    private readonly LineReader _lines = new();

    protected override void OnReceived(ReadOnlySpan<byte> buffer) => ChatRoom.Relay(Server, this, _lines, buffer);

    protected override void OnError(SocketError error) => Console.WriteLine($"Session {Id} caught a socket error: {error}");
}

/// <summary>The chat room on a socket file; UdsServer removes the file when it stops.</summary>
internal sealed class ChatServer(string path) : UdsServer(path)
{
    protected override UdsSession CreateSession() => new ChatSession(this);

    // Unix socket peers are unnamed: there is no remote address to show.
    protected override void OnConnected(UdsSession session) => ChatRoom.Welcome(session, from: null);

    protected override void OnDisconnected(UdsSession session) => ChatRoom.Farewell(session);

    protected override void OnError(SocketError error) => Console.WriteLine($"The server caught a socket error: {error}");
}

internal static class Program
{
    /// <summary>Usage: UdsChatServer [socket path]. The path defaults to netserver-chat.sock in the temp folder.</summary>
    private static async Task<int> Main(string[] args)
    {
        var path = args.Length > 0 ? args[0] : ChatProtocol.DefaultSocketPath;
        using var server = new ChatServer(path);
        return await ChatRoom.RunConsoleAsync(server, "Unix domain socket chat server");
    }
}
