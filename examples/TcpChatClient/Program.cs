using System;
using System.Globalization;
using System.Net.Sockets;
using System.Threading.Tasks;

namespace NetServer.Examples.TcpChatClient;

/// <summary>A TCP chat client; what it does with each event is the terminal's business.</summary>
internal sealed class ChatClient(string address, int port, ChatTerminal terminal) : TcpClient(address, port)
{
    protected override void OnConnected() => terminal.Connected(this);

    protected override void OnReceived(ReadOnlySpan<byte> buffer) => terminal.Received(buffer);

    protected override void OnDisconnected(DisconnectReason reason) => terminal.Disconnected(this, reason);

    protected override void OnError(SocketError error) => ChatTerminal.Error(error);
}

internal static class Program
{
    private const int DefaultPort = 1111;

    /// <summary>Usage: TcpChatClient [address] [port]. Defaults: 127.0.0.1, 1111. The address may be a host name.</summary>
    private static async Task Main(string[] args)
    {
        var address = args.Length > 0 ? args[0] : "127.0.0.1";
        var port = args.Length > 1 ? int.Parse(args[1], CultureInfo.InvariantCulture) : DefaultPort;

        using var terminal = new ChatTerminal();
        using var client = new ChatClient(address, port, terminal) { OptionNoDelay = true };
        await terminal.RunAsync(client);
    }
}
