using System;
using System.Net.Sockets;
using System.Threading.Tasks;

namespace NetServer.Examples.UdsChatClient;

/// <summary>A chat client on a Unix domain socket; the terminal handles what it hears.</summary>
internal sealed class ChatClient(string path, ChatTerminal terminal) : UdsClient(path)
{
    protected override void OnConnected() => terminal.Connected(this);

    protected override void OnReceived(ReadOnlySpan<byte> buffer) => terminal.Received(buffer);

    protected override void OnDisconnected(DisconnectReason reason) => terminal.Disconnected(this, reason);

    protected override void OnError(SocketError error) => ChatTerminal.Error(error);
}

internal static class Program
{
    /// <summary>Usage: UdsChatClient [socket path]. The path defaults to the one UdsChatServer uses.</summary>
    private static async Task Main(string[] args)
    {
        var path = args.Length > 0 ? args[0] : ChatProtocol.DefaultSocketPath;
        using var terminal = new ChatTerminal();
        using var client = new ChatClient(path, terminal);
        await terminal.RunAsync(client);
    }
}
