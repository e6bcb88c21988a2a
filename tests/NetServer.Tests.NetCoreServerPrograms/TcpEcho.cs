using System;
using System.Collections.Generic;
using System.Net;
using System.Net.Sockets;
using System.Threading.Tasks;
using NetServer;

// Mirrors NetCoreServer's performance/TcpEchoServer/Program.cs and performance/TcpEchoClient/Program.cs.
namespace NetCoreServerPrograms.TcpEcho;

public class EchoSession(TcpServer server) : TcpSession(server)
{
    protected override void OnReceived(byte[] buffer, long offset, long size) => SendAsync(buffer, offset, size);

    protected override void OnError(SocketError error) => Console.WriteLine($"Session caught an error with code {error}");
}

public class EchoServer(IPAddress address, int port) : TcpServer(address, port)
{
    protected override TcpSession CreateSession() => new EchoSession(this);

    protected override void OnError(SocketError error) => Console.WriteLine($"Server caught an error with code {error}");
}

public class EchoClient(string address, int port, int messages, byte[] message, Totals totals) : NetServer.TcpClient(address, port)
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
    public static EchoServer StartServer(IPAddress address, int port)
    {
        var server = new EchoServer(address, port);
        server.OptionNoDelay = true; // commented out in the benchmark; set here so the setter stays checked
        server.OptionReuseAddress = true;
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

    public static Task<Report> RunClientsAsync(string address, int port, int clients, int messages, int size, TimeSpan duration)
    {
        var totals = new Totals();
        var message = new byte[size];
        var echoClients = new List<EchoClient>();
        for (var i = 0; i < clients; i++)
        {
            var client = new EchoClient(address, port, messages, message, totals);
            client.OptionNoDelay = true;
            echoClients.Add(client);
        }

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
