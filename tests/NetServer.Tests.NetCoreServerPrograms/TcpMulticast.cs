using System;
using System.Collections.Generic;
using System.Net;
using System.Net.Sockets;
using System.Threading;
using System.Threading.Tasks;
using NetServer;

// Mirrors NetCoreServer's performance/TcpMulticastServer/Program.cs and performance/TcpMulticastClient/Program.cs.
namespace NetCoreServerPrograms.TcpMulticast;

public class MulticastSession(TcpServer server) : TcpSession(server)
{
    /// <summary>The benchmark's cap: at most 1 MiB pending per session.</summary>
    public const long Limit = 1 * 1024 * 1024;

    private long _refused;

    /// <summary>How many sends the cap refused (not in the benchmark; for the tests).</summary>
    public long Refused => Interlocked.Read(ref _refused);

    // The benchmark caps what each session may have pending by overriding this send: Multicast must go through it.
    public override bool SendAsync(byte[] buffer, long offset, long size)
    {
        var pending = BytesPending + BytesSending;
        if (pending + size > Limit)
        {
            Interlocked.Increment(ref _refused);
            return false;
        }

        if (size > Limit - pending)
            size = Limit - pending;
        return base.SendAsync(buffer, offset, size);
    }

    protected override void OnError(SocketError error) => Console.WriteLine($"Session caught an error with code {error}");
}

public class MulticastServer(IPAddress address, int port) : TcpServer(address, port)
{
    protected override TcpSession CreateSession() => new MulticastSession(this);

    protected override void OnError(SocketError error) => Console.WriteLine($"Server caught an error with code {error}");
}

public class MulticastClient(string address, int port, Totals totals) : NetServer.TcpClient(address, port)
{
    protected override void OnReceived(byte[] buffer, long offset, long size) => totals.AddBytes(size);

    protected override void OnError(SocketError error)
    {
        Console.WriteLine($"Client caught an error with code {error}");
        totals.AddError();
    }
}

public static class Program
{
    public static MulticastServer StartServer(IPAddress address, int port)
    {
        var server = new MulticastServer(address, port);
        server.OptionNoDelay = true; // commented out in the benchmark; set here so the setter stays checked
        server.OptionReuseAddress = true;
        server.Start();
        return server;
    }

    public static Task MulticastAsync(MulticastServer server, int messagesRate, int messageSize, CancellationToken cancellationToken) =>
        Benchmark.MulticastAsync(message => server.Multicast(message), messagesRate, messageSize, cancellationToken);

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
            var client = new MulticastClient(address, port, totals);
            client.OptionNoDelay = true;
            multicastClients.Add(client);
        }

        return Benchmark.RunClientsAsync(
            multicastClients,
            static client => client.ConnectAsync(),
            static client => client.IsConnected,
            static client => client.DisconnectAsync(),
            static client => client.IsConnected,
            duration,
            totals,
            () => totals.Bytes / size,
            stopWhenDisconnected: true);
    }
}
