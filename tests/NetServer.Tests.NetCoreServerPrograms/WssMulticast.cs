using System;
using System.Collections.Generic;
using System.Net;
using System.Net.Sockets;
using System.Security.Authentication;
using System.Security.Cryptography.X509Certificates;
using System.Threading;
using System.Threading.Tasks;
using NetServer;

// Mirrors NetCoreServer's performance/WssMulticastServer/Program.cs and performance/WssMulticastClient/Program.cs.
// The benchmarks load their certificates from server.pfx/client.pfx; here the caller passes them in.
namespace NetCoreServerPrograms.WssMulticast;

public class MulticastSession(WssServer server) : WssSession(server)
{
    protected override void OnError(SocketError error) => Console.WriteLine($"Session caught an error with code {error}");
}

public class MulticastServer(SslContext context, IPAddress address, int port) : WssServer(context, address, port)
{
    protected override SslSession CreateSession() => new MulticastSession(this);

    protected override void OnError(SocketError error) => Console.WriteLine($"Server caught an error with code {error}");
}

public class MulticastClient(SslContext context, string address, int port, Totals totals) : WssClient(context, address, port)
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
    /// <summary>The close status the clients end with, the benchmark's own (see WsMulticast.Program.CloseStatus).</summary>
    public const int CloseStatus = 100;

    public static MulticastServer StartServer(X509Certificate2 certificate, IPAddress address, int port)
    {
        // The benchmark's accept-anything callback (CA5359): the shape of the constructor call is what is checked.
#pragma warning disable CA5359
        var context = new SslContext(SslProtocols.Tls12, certificate, (sender, certificate, chain, sslPolicyErrors) => true);
#pragma warning restore CA5359
        var server = new MulticastServer(context, address, port);
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

    public static Task<Report> RunClientsAsync(X509Certificate2 certificate, string address, int port, int clients, int size, TimeSpan duration)
    {
        var totals = new Totals();
        // The benchmark's accept-anything callback (CA5359): the shape of the constructor call is what is checked.
#pragma warning disable CA5359
        var context = new SslContext(SslProtocols.Tls12, certificate, (sender, certificate, chain, sslPolicyErrors) => true);
#pragma warning restore CA5359
        var multicastClients = new List<MulticastClient>();
        for (var i = 0; i < clients; i++)
        {
            var client = new MulticastClient(context, address, port, totals);
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
