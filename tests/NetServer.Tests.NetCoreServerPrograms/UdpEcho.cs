using System;
using System.Collections.Generic;
using System.Net;
using System.Net.Sockets;
using System.Threading;
using System.Threading.Tasks;
using NetServer;

// Mirrors NetCoreServer's performance/UdpEchoServer/Program.cs and performance/UdpEchoClient/Program.cs.
namespace NetCoreServerPrograms.UdpEcho;

public class EchoServer(IPAddress address, int port) : UdpServer(address, port)
{
    protected override void OnStarted() => ReceiveAsync();

    protected override void OnReceived(EndPoint endpoint, byte[] buffer, long offset, long size)
    {
        if (size == 0)
            ThreadPool.QueueUserWorkItem(o => ReceiveAsync());
        SendAsync(endpoint, buffer, offset, size);
    }

    // The benchmark receives the next datagram once the echo is sent, from the thread pool.
    protected override void OnSent(EndPoint endpoint, long sent) => ThreadPool.QueueUserWorkItem(o => ReceiveAsync());

    protected override void OnError(SocketError error) => Console.WriteLine($"Server caught an error with code {error}");
}

public class EchoClient(string address, int port, int messages, byte[] message, Totals totals) : NetServer.UdpClient(address, port)
{
    protected override void OnConnected()
    {
        ReceiveAsync();
        for (long i = messages; i > 0; i--)
            Send(message);
    }

    protected override void OnReceived(EndPoint endpoint, byte[] buffer, long offset, long size)
    {
        totals.Stop = DateTime.UtcNow;
        totals.AddBytes(size);
        totals.AddMessage();
        ThreadPool.QueueUserWorkItem(o => ReceiveAsync());
        Send(message);
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
            echoClients.Add(new EchoClient(address, port, messages, message, totals));

        return Benchmark.RunClientsAsync(
            echoClients,
            static client => client.Connect(),
            static client => client.IsConnected,
            static client => client.Disconnect(),
            static client => client.IsConnected,
            duration,
            totals,
            () => totals.Messages);
    }
}
