using System;
using System.Collections.Generic;
using System.Net.Sockets;
using System.Threading.Tasks;
using NetServer;

// Mirrors NetCoreServer's performance/UdsEchoServer/Program.cs and performance/UdsEchoClient/Program.cs.
namespace NetCoreServerPrograms.UdsEcho;

public class EchoSession(UdsServer server) : UdsSession(server)
{
    protected override void OnReceived(byte[] buffer, long offset, long size) => SendAsync(buffer, offset, size);

    protected override void OnError(SocketError error) => Console.WriteLine($"Session caught an error with code {error}");
}

public class EchoServer(string path) : UdsServer(path)
{
    protected override UdsSession CreateSession() => new EchoSession(this);

    protected override void OnError(SocketError error) => Console.WriteLine($"Server caught an error with code {error}");
}

public class EchoClient(string path, int messages, byte[] message, Totals totals) : UdsClient(path)
{
    private long _sent;
    private long _received;

    public long Sent => _sent;

    protected override void OnConnected()
    {
        for (long i = messages; i > 0; i--)
            SendAsync(message);
    }

    protected override void OnSent(long sent, long pending) => _sent += sent;

    protected override void OnReceived(byte[] buffer, long offset, long size)
    {
        _received += size;
        while (_received >= message.Length)
        {
            SendAsync(message);
            _received -= message.Length;
        }

        totals.Stop = DateTime.UtcNow;
        totals.AddBytes(size);
    }

    protected override void OnError(SocketError error)
    {
        Console.WriteLine($"Client caught an error with code {error}");
        totals.AddError();
    }
}

public static class Program
{
    public static EchoServer StartServer(string path)
    {
        var server = new EchoServer(path);
        server.Start();
        return server;
    }

    /// <summary>The server's console loop: "!" restarts, an empty line stops; false once stopped.</summary>
    public static bool Command(EchoServer server, string line)
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

    public static Task<Report> RunClientsAsync(string path, int clients, int messages, int size, TimeSpan duration)
    {
        var totals = new Totals();
        var message = new byte[size];
        var echoClients = new List<EchoClient>();
        for (var i = 0; i < clients; i++)
            echoClients.Add(new EchoClient(path, messages, message, totals));

        return Benchmark.RunClientsAsync(
            echoClients,
            static client => client.ConnectAsync(),
            static client => client.IsConnected,
            static client => client.DisconnectAsync(),
            static client => client.IsConnected,
            duration,
            totals,
            () => totals.Bytes / size);
    }
}
