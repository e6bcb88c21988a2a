using System;
using System.Collections.Generic;
using System.Net;
using System.Net.Sockets;
using System.Threading;
using System.Threading.Tasks;
using NetServer;

// Mirrors NetCoreServer's performance/UdpMulticastServer/Program.cs and performance/UdpMulticastClient/Program.cs.
namespace NetCoreServerPrograms.UdpMulticast;

public class MulticastServer(IPAddress address, int port) : UdpServer(address, port)
{
    protected override void OnError(SocketError error) => Console.WriteLine($"Server caught an error with code {error}");
}

public class MulticastClient(string address, string multicast, int port, Totals totals) : NetServer.UdpClient(address, port)
{
    public string Multicast { get; set; } = multicast;

    protected override void OnConnected()
    {
        JoinMulticastGroup(Multicast);
        ReceiveAsync();
    }

    protected override void OnReceived(EndPoint endpoint, byte[] buffer, long offset, long size)
    {
        totals.AddBytes(size);
        ReceiveAsync();
    }

    protected override void OnError(SocketError error)
    {
        Console.WriteLine($"Client caught an error with code {error}");
        totals.AddError();
    }
}

public static class Program
{
    public static MulticastServer StartServer(string address, int port)
    {
        var server = new MulticastServer(IPAddress.Any, 0);
        server.OptionReuseAddress = true;
        server.Start(address, port);
        return server;
    }

    public static Task MulticastAsync(MulticastServer server, int messagesRate, int messageSize, CancellationToken cancellationToken) =>
        Benchmark.MulticastAsync(message => server.Multicast(message) > 0, messagesRate, messageSize, cancellationToken);

    /// <summary>The server's console loop: "!" restarts, an empty line stops; false once stopped.</summary>
    public static bool Command(MulticastServer server, string line)
    {
        if (string.IsNullOrEmpty(line))
        {
            server.Stop();
            return false;
        }

        if (line == "!")
            server.Restart();
        return true;
    }

    public static Task<Report> RunClientsAsync(string address, int port, int clients, int size, TimeSpan duration)
    {
        var totals = new Totals();
        var multicastClients = new List<MulticastClient>();
        for (var i = 0; i < clients; i++)
        {
            var client = new MulticastClient("0.0.0.0", address, port, totals);
            client.SetupMulticast(true);
            multicastClients.Add(client);
        }

        return Benchmark.RunClientsAsync(
            multicastClients,
            static client => client.Connect(),
            static client => client.IsConnected,
            static client => client.Disconnect(),
            static client => client.IsConnected,
            duration,
            totals,
            () => totals.Bytes / size,
            stopWhenDisconnected: true);
    }
}
