using System;
using System.Globalization;
using System.Net.Sockets;
using System.Threading.Tasks;

namespace NetServer.Examples.WsChatClient;

/// <summary>A WebSocket chat client; what it does with each event is the terminal's business.</summary>
internal sealed class ChatClient(string address, int port, ChatTerminal terminal) : WsClient(address, port)
{
    // Connected once the server has accepted the upgrade, not at TCP connect: only then can it chat.
    public override void OnWsConnected(HttpResponse response) => terminal.Connected(this);

    public override void OnWsReceived(byte[] buffer, long offset, long size) => ChatTerminal.ReceivedMessage(buffer.AsSpan((int)offset, (int)size));

    public override void OnWsClose(byte[] buffer, long offset, long size, int status) => ChatTerminal.Closed(status, buffer.AsSpan((int)offset, (int)size));

    public override void OnWsError(string error) => ChatTerminal.WebSocketError(error);

    protected override void OnDisconnected(DisconnectReason reason) => terminal.Disconnected(this, reason);

    protected override void OnError(SocketError error) => ChatTerminal.Error(error);
}

internal static class Program
{
    private const int DefaultPort = 8081;

    /// <summary>Usage: WsChatClient [address] [port]. Defaults: 127.0.0.1, 8081. The address may be a host name.</summary>
    private static async Task Main(string[] args)
    {
        var address = args.Length > 0 ? args[0] : "127.0.0.1";
        var port = args.Length > 1 ? int.Parse(args[1], CultureInfo.InvariantCulture) : DefaultPort;

        using var terminal = new ChatTerminal();
        using var client = new ChatClient(address, port, terminal) { OptionNoDelay = true };
        await terminal.RunAsync(client);
    }
}
