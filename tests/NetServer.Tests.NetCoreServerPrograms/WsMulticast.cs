using System;
using System.Collections.Generic;
using System.Net;
using System.Net.Sockets;
using System.Threading;
using System.Threading.Tasks;
using NetServer;

// Mirrors NetCoreServer's performance/WsMulticastServer/Program.cs and performance/WsMulticastClient/Program.cs.
namespace NetCoreServerPrograms.WsMulticast;

public class MulticastSession(WsServer server) : WsSession(server)
{
    protected override void OnError(SocketError error) => Console.WriteLine($"Session caught an error with code {error}");
}

public class MulticastServer(IPAddress address, int port) : WsServer(address, port)
{
    protected override TcpSession CreateSession() => new MulticastSession(this);

    protected override void OnError(SocketError error) => Console.WriteLine($"Server caught an error with code {error}");
}

public class MulticastClient(string address, int port, Totals totals) : WsClient(address, port)
{
    // The benchmark writes the whole upgrade request by hand, the key from WsNonce.
    public override void OnWsConnecting(HttpRequest request)
    {
        request.SetBegin("GET", "/");
        request.SetHeader("Host", "localhost");
        request.SetHeader("Origin", "http://localhost");
        request.SetHeader("Upgrade", "websocket");
        request.SetHeader("Connection", "Upgrade");
        request.SetHeader("Sec-WebSocket-Key", Convert.ToBase64String(WsNonce));
        request.SetHeader("Sec-WebSocket-Protocol", "chat, superchat");
        request.SetHeader("Sec-WebSocket-Version", "13");
        request.SetBody();
    }

    public override void OnWsReceived(byte[] buffer, long offset, long size) => totals.AddBytes(size);

    protected override void OnError(SocketError error)
    {
        Console.WriteLine($"Client caught an error with code {error}");
        totals.AddError();
    }
}

public static class Program
{
    /// <summary>
    /// The close status the clients end with, the benchmark's own: 100, which may not travel in a
    /// close frame (RFC 6455 7.4.2); our CloseAsync sends a close frame without a status for it.
    /// </summary>
    public const int CloseStatus = 100;

    public static MulticastServer StartServer(IPAddress address, int port)
    {
        var server = new MulticastServer(address, port);
        server.OptionNoDelay = true; // commented out in the benchmark; set here so the setter stays checked
        server.OptionReuseAddress = true;
        server.Start();
        return server;
    }

    public static Task MulticastAsync(MulticastServer server, int messagesRate, int messageSize, CancellationToken cancellationToken) =>
        Benchmark.MulticastAsync(message => server.MulticastBinary(message, 0, message.Length), messagesRate, messageSize, cancellationToken);

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
            client.OptionNoDelay = true; // commented out in the benchmark; set here so the setter stays checked
            multicastClients.Add(client);
        }

        return Benchmark.RunClientsAsync(
            multicastClients,
            static client => client.ConnectAsync(),
            static client => client.IsConnected,
            static client => client.CloseAsync(CloseStatus),
            static client => client.IsConnected,
            duration,
            totals,
            () => totals.Bytes / size,
            stopWhenDisconnected: true);
    }
}
