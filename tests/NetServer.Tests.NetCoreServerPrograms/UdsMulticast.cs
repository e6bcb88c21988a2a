using System;
using System.Collections.Generic;
using System.Net.Sockets;
using System.Threading;
using System.Threading.Tasks;
using NetServer;

// Mirrors NetCoreServer's performance/UdsMulticastServer/Program.cs and performance/UdsMulticastClient/Program.cs.
namespace NetCoreServerPrograms.UdsMulticast;

public class MulticastSession(UdsServer server) : UdsSession(server)
{
    /// <summary>The benchmark's cap: at most 1 MiB pending per session.</summary>
    public const long Limit = 1 * 1024 * 1024;

    public override bool SendAsync(byte[] buffer, long offset, long size)
    {
        var pending = BytesPending + BytesSending;
        if (pending + size > Limit)
            return false;
        if (size > Limit - pending)
            size = Limit - pending;
        return base.SendAsync(buffer, offset, size);
    }

    protected override void OnError(SocketError error) => Console.WriteLine($"Session caught an error with code {error}");
}

public class MulticastServer(string path) : UdsServer(path)
{
    protected override UdsSession CreateSession() => new MulticastSession(this);

    protected override void OnError(SocketError error) => Console.WriteLine($"Server caught an error with code {error}");
}

public class MulticastClient(string path, Totals totals) : UdsClient(path)
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
    public static MulticastServer StartServer(string path)
    {
        var server = new MulticastServer(path);
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

    public static Task<Report> RunClientsAsync(string path, int clients, int size, TimeSpan duration)
    {
        var totals = new Totals();
        var multicastClients = new List<MulticastClient>();
        for (var i = 0; i < clients; i++)
            multicastClients.Add(new MulticastClient(path, totals));

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
