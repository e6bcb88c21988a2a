using System;
using System.Globalization;
using System.Net;
using System.Net.Sockets;

namespace NetServer.Examples.UdpMulticastClient;

/// <summary>Listens on a port, joins a multicast group on every connect, and prints what the group receives.</summary>
internal sealed class MulticastClient(IPAddress address, int port, IPAddress group) : UdpClient(address, port)
{
    protected override void OnConnected()
    {
        Console.WriteLine($"Listening on {Endpoint} as {Id}");

        // Groups belong to the socket: a reconnect opens a new one, which joins again.
        try
        {
            JoinMulticastGroup(group);
        }
        catch (SocketException e)
        {
            Console.WriteLine($"Cannot join {group}: {e.Message} ({e.SocketErrorCode}); is there a route for multicast? Try --interface.");
        }
    }

    protected override void OnJoinedMulticastGroup(IPAddress address) => Console.WriteLine($"Joined {address}");

    protected override void OnReceived(EndPoint endpoint, ReadOnlySpan<byte> buffer) =>
        Console.WriteLine(DatagramText.Describe(endpoint, buffer));

    protected override void OnDisconnected() => Console.WriteLine("Disconnected");

    protected override void OnError(SocketError error) => Console.WriteLine($"Socket error: {error}");
}

internal static class Program
{
    private const string Usage = "Usage: UdpMulticastClient [listen address] [multicast address] [multicast port] [--interface INDEX]";
    private const string Interface = "--interface";
    private const int DefaultPort = 3334;

    /// <summary>
    /// Usage: UdpMulticastClient [listen address] [multicast address] [multicast port] [--interface INDEX].
    /// Defaults: 0.0.0.0, 239.255.0.1, 3334, and the interface the system picks. For an IPv6 group
    /// listen on :: (for example <c>:: ff15::1 3334</c>).
    /// </summary>
    private static int Main(string[] args)
    {
        if (CommandLine.Parse(args, Usage, switches: [], options: [Interface]) is not { } line)
            return 2;
        var address = IPAddress.Parse(line.Positional(0) ?? "0.0.0.0");
        var group = IPAddress.Parse(line.Positional(1) ?? "239.255.0.1");
        var port = line.Positional(2) is { } portText ? int.Parse(portText, CultureInfo.InvariantCulture) : DefaultPort;
        if (address.AddressFamily != group.AddressFamily)
        {
            // The system would only say "protocol not available" when joining.
            Console.WriteLine($"Listen on an address of the group's family: 0.0.0.0 for an IPv4 group, :: for an IPv6 one (not {address} for {group}).");
            return 2;
        }

        using var client = new MulticastClient(address, port, group) { OptionAutoReceive = true };

        // Bind to the listen address instead of connecting, and share the port with other listeners on this machine.
        client.SetupMulticast(true);
        if (line.ValueOf(Interface) is { } index)
            client.OptionMulticastInterface = int.Parse(index, CultureInfo.InvariantCulture);

        ClientConsole.Run(client, "UDP multicast client", sendsLines: false);
        return 0;
    }
}
