using System;
using System.Globalization;
using System.Net;
using System.Net.Sockets;
using System.Net.WebSockets;
using System.Threading.Tasks;

namespace NetServer.Examples.WsChatServer;

/// <summary>One connection: HTTP for the page's files, then a chat member once it upgrades to WebSocket.</summary>
internal sealed class ChatSession(ChatServer server) : WsSession(server), ChatRoom.IWsMember
{
    private readonly ChatRoom.IWsRoom _room = server;

    public override bool OnWsConnecting(HttpRequest request, HttpResponse response) => ChatRoom.Admit(this, request);

    public override void OnWsConnected(HttpRequest request) => ChatRoom.Welcome(this);

    public override void OnWsReceived(WebSocketMessageType type, byte[] buffer, long offset, long size) => ChatRoom.Relay(_room, this, type, buffer, offset, size);

    public override void OnWsDisconnected() => ChatRoom.Farewell(this);

    public override void OnWsError(string error) => Console.WriteLine($"Session {Id}: {error}");

    protected override void OnReceivedRequest(HttpRequest request) => SendResponseAsync(ChatRoom.Answer(request, Response));

    protected override void OnReceivedCachedRequest(HttpRequest request, byte[] content)
    {
        base.OnReceivedCachedRequest(request, content);
        PageFolder.LogStatic(request);
    }

    protected override void OnReceivedRequestError(HttpRequest request, string error) => Console.WriteLine($"Session {Id}: refused a request: {error}");

    protected override void OnError(SocketError error) => Console.WriteLine($"Session {Id} caught a socket error: {error}");
}

/// <summary>The chat room on a TCP port: WebSocket members, and the chat page (www/ws) as static content.</summary>
internal sealed class ChatServer(IPAddress address, int port) : WsServer(address, port), ChatRoom.IWsRoom
{
    protected override TcpSession CreateSession() => new ChatSession(this);

    protected override void OnError(SocketError error) => Console.WriteLine($"The server caught a socket error: {error}");
}

internal static class Program
{
    private const int DefaultPort = 8081;
    private const string Usage = "Usage: WsChatServer [port] [address] [--www DIR]";

    /// <summary>
    /// Usage: WsChatServer [port] [address] [--www DIR]. Defaults: port 8081 (0 lets the system
    /// pick a free one), address 127.0.0.1 (pass 0.0.0.0 to accept other machines). The chat page
    /// comes from the repository's www/ws folder unless --www names another.
    /// </summary>
    private static async Task<int> Main(string[] args)
    {
        if (CommandLine.Parse(args, Usage, switches: [], options: [PageFolder.Option]) is not { } line)
            return 2;
        var port = line.Positional(0) is { } portText ? int.Parse(portText, CultureInfo.InvariantCulture) : DefaultPort;
        var address = line.Positional(1) is { } addressText ? IPAddress.Parse(addressText) : IPAddress.Loopback;
        if (PageFolder.Find(line.ValueOf(PageFolder.Option), ChatRoom.PageFolderName) is not { } page)
            return 1;

        // As in the TCP chat: no delay for small messages, reuse address for a quick restart.
        using var server = new ChatServer(address, port) { OptionNoDelay = true, OptionReuseAddress = true };
        server.AddStaticContent(page, ChatRoom.PagePrefix);
        return await ChatRoom.RunConsoleAsync(server, "WebSocket chat server", "http");
    }
}
