using System;
using System.Globalization;
using System.Net;
using System.Net.Sockets;

namespace NetServer.Examples.UdpEchoClient;

/// <summary>Sends datagrams to the echo server and prints what comes back.</summary>
internal sealed class EchoClient(string address, int port) : UdpClient(address, port)
{
    protected override void OnConnected() => Console.WriteLine($"Connected to {Endpoint} as {Id}");

    protected override void OnReceived(EndPoint endpoint, ReadOnlySpan<byte> buffer) =>
        Console.WriteLine(DatagramText.Describe(endpoint, buffer));

    protected override void OnDisconnected() => Console.WriteLine("Disconnected");

    protected override void OnError(SocketError error) => Console.WriteLine(error == SocketError.ConnectionRefused
        // The socket is connected to the server, so the system passes on its "port unreachable" answer.
        ? $"No echo server at {Endpoint} (ConnectionRefused): the datagram was dropped. Is the server running?"
        : $"Socket error: {error}");
}

internal static class Program
{
    private const int DefaultPort = 3333;

    /// <summary>Usage: UdpEchoClient [address] [port]. Defaults: 127.0.0.1, 3333. The address may be a host name.</summary>
    private static void Main(string[] args)
    {
        var address = args.Length > 0 ? args[0] : "127.0.0.1";
        var port = args.Length > 1 ? int.Parse(args[1], CultureInfo.InvariantCulture) : DefaultPort;

        // Receive continuously: every echo is printed as it comes, with no ReceiveAsync per datagram.
        using var client = new EchoClient(address, port) { OptionAutoReceive = true };
        ClientConsole.Run(client, "UDP echo client", sendsLines: true);
    }
}
