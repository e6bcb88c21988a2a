using System;
using System.Globalization;
using System.Net;
using System.Net.Sockets;
using System.Net.WebSockets;
using System.Security.Authentication;
using System.Threading.Tasks;

namespace NetServer.Examples.WssChatServer;

/// <summary>One connection over TLS: HTTPS for the page's files, then a chat member once it upgrades to WebSocket.</summary>
internal sealed class ChatSession(ChatServer server) : WssSession(server), ChatRoom.IWsMember
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

/// <summary>The chat room on a TCP port behind TLS: WebSocket members, and the chat page (www/ws) as static content.</summary>
internal sealed class ChatServer(SslContext context, IPAddress address, int port) : WssServer(context, address, port), ChatRoom.IWsRoom
{
    protected override SslSession CreateSession() => new ChatSession(this);

    protected override void OnHandshaked(SslSession session) => Console.WriteLine($"Secured session {session.Id}: {TlsReport.Describe(session.Tls!, "client")}");

    protected override void OnHandshakeFailed(SslSession session, Exception exception) =>
        Console.WriteLine($"Handshake failed for session {session.Id}: {exception.Message}");

    protected override void OnError(SocketError error) => Console.WriteLine($"The server caught a socket error: {error}");
}

internal static class Program
{
    private const int DefaultPort = 8444;
    private const string Usage = "Usage: WssChatServer [port] [address] [--www DIR] [--certs DIR]";

    /// <summary>
    /// Usage: WssChatServer [port] [address] [--www DIR] [--certs DIR]. Defaults: port 8444 (0 lets
    /// the system pick a free one), address 127.0.0.1. The page comes from www/ws and the
    /// certificate (server.pfx, issued by the test CA) from certs/, both found above the program.
    /// </summary>
    private static async Task<int> Main(string[] args)
    {
        if (CommandLine.Parse(args, Usage, switches: [], options: [PageFolder.Option, CertificateFolder.Option]) is not { } line)
            return 2;
        var port = line.Positional(0) is { } portText ? int.Parse(portText, CultureInfo.InvariantCulture) : DefaultPort;
        var address = line.Positional(1) is { } addressText ? IPAddress.Parse(addressText) : IPAddress.Loopback;
        if (PageFolder.Find(line.ValueOf(PageFolder.Option), ChatRoom.PageFolderName) is not { } page)
            return 1;
        using var certificates = CertificateFolder.Open(line.ValueOf(CertificateFolder.Option));
        if (certificates?.Load(CertificateFolder.ServerFile) is not { } certificate)
            return 1;
        Console.WriteLine($"Certificate {certificate.Subject} from {certificates.Location}");

        // TLS 1.2 and 1.3 (Protocols None: SslContext asks for no other), no client certificates.
        using var server = new ChatServer(new SslContext(SslProtocols.None, certificate), address, port)
        {
            OptionNoDelay = true,
            OptionReuseAddress = true,
        };
        server.AddStaticContent(page, ChatRoom.PagePrefix);
        return await ChatRoom.RunConsoleAsync(server, "WebSocket secure chat server", "https");
    }
}
