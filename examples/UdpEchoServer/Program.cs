using System;
using System.Globalization;
using System.Net;
using System.Net.Sockets;
using System.Threading.Tasks;

namespace NetServer.Examples.UdpEchoServer;

/// <summary>Sends every datagram back to whoever sent it, unchanged.</summary>
internal sealed class EchoServer(IPAddress address, int port) : UdpServer(address, port)
{
    // Each ReceiveAsync asks for one datagram: the first here, the next from OnReceived.
    protected override void OnStarted() => ReceiveAsync();

    protected override void OnReceived(EndPoint endpoint, ReadOnlySpan<byte> buffer)
    {
        Console.WriteLine(DatagramText.Describe(endpoint, buffer));

        // The datagram is copied if it has to wait, so the receive buffer can be reused at once.
        SendAsync(endpoint, buffer);
        ReceiveAsync();
    }

    protected override void OnError(SocketError error) => Console.WriteLine($"The server caught a socket error: {error}");
}

internal static class Program
{
    private const int DefaultPort = 3333;

    /// <summary>Usage: UdpEchoServer [port] [address]. Port 0 lets the system pick a free port; the address defaults to 127.0.0.1 (pass 0.0.0.0 to answer other machines).</summary>
    private static async Task<int> Main(string[] args)
    {
        var port = args.Length > 0 ? int.Parse(args[0], CultureInfo.InvariantCulture) : DefaultPort;
        var address = args.Length > 1 ? IPAddress.Parse(args[1]) : IPAddress.Loopback;

        using var server = new EchoServer(address, port);
        return await ServerConsole.RunAsync(server, "UDP echo server");
    }
}
