using System;
using System.Globalization;
using System.Net;
using System.Net.Sockets;
using System.Threading.Tasks;

namespace NetServer.Examples.UdpMulticastServer;

/// <summary>Multicasts the operator's lines to a group; it receives nothing.</summary>
internal sealed class MulticastServer(IPAddress address) : UdpServer(address, 0)
{
    protected override void OnStarted()
    {
        var loopback = OptionMulticastLoopback ? "on" : "off";
        var via = OptionMulticastInterface == 0 ? "the system's choice" : OptionMulticastInterface.ToString(CultureInfo.InvariantCulture);
        Console.WriteLine($"Multicasting to {MulticastEndpoint} (time to live {OptionMulticastTimeToLive}, loopback {loopback}, interface {via})");
    }

    protected override void OnError(SocketError error) => Console.WriteLine($"The server caught a socket error: {error}");
}

internal static class Program
{
    private const string Usage = "Usage: UdpMulticastServer [multicast address] [multicast port] [--ttl HOPS] [--interface INDEX] [--no-loopback]";
    private const string TimeToLive = "--ttl";
    private const string Interface = "--interface";
    private const string NoLoopback = "--no-loopback";
    private const int DefaultPort = 3334;

    /// <summary>
    /// Usage: UdpMulticastServer [multicast address] [multicast port] [--ttl HOPS] [--interface INDEX]
    /// [--no-loopback]. Defaults: 239.255.0.1 (an IPv6 group such as ff15::1 works too), 3334, one hop,
    /// the interface the system picks, and loopback on (listeners on this machine hear the group too).
    /// </summary>
    private static async Task<int> Main(string[] args)
    {
        if (CommandLine.Parse(args, Usage, switches: [NoLoopback], options: [TimeToLive, Interface]) is not { } line)
            return 2;
        var group = IPAddress.Parse(line.Positional(0) ?? "239.255.0.1");
        var port = line.Positional(1) is { } portText ? int.Parse(portText, CultureInfo.InvariantCulture) : DefaultPort;

        // The server only sends: any local port of the group's address family will do.
        var any = group.AddressFamily == AddressFamily.InterNetworkV6 ? IPAddress.IPv6Any : IPAddress.Any;
        using var server = new MulticastServer(any);
        if (line.ValueOf(TimeToLive) is { } hops)
            server.OptionMulticastTimeToLive = int.Parse(hops, CultureInfo.InvariantCulture);
        if (line.ValueOf(Interface) is { } index)
            server.OptionMulticastInterface = int.Parse(index, CultureInfo.InvariantCulture);
        if (line.Has(NoLoopback))
            server.OptionMulticastLoopback = false;

        return await ServerConsole.RunAsync(server, "UDP multicast server", new IPEndPoint(group, port));
    }
}
