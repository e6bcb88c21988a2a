using System;
using System.Collections.Generic;
using System.Net;
using System.Net.Sockets;
using System.Security.Authentication;
using System.Security.Cryptography.X509Certificates;
using System.Threading.Tasks;
using NetServer;

// Mirrors NetCoreServer's performance/WssEchoServer/Program.cs and performance/WssEchoClient/Program.cs.
// The benchmarks load their certificates from server.pfx/client.pfx; here the caller passes them in.
namespace NetCoreServerPrograms.WssEcho;

public class EchoSession(WssServer server) : WssSession(server)
{
    // Resends the message back to the client.
    public override void OnWsReceived(byte[] buffer, long offset, long size) => SendBinaryAsync(buffer, offset, size);

    protected override void OnError(SocketError error) => Console.WriteLine($"Session caught an error with code {error}");
}

public class EchoServer(SslContext context, IPAddress address, int port) : WssServer(context, address, port)
{
    protected override SslSession CreateSession() => new EchoSession(this);

    protected override void OnError(SocketError error) => Console.WriteLine($"Server caught an error with code {error}");
}

public class EchoClient(SslContext context, string address, int port, int messages, byte[] message, Totals totals) : WssClient(context, address, port)
{
    private long _sent;
    private long _received;

    public long Sent => _sent;

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

    public override void OnWsConnected(HttpResponse response)
    {
        for (long i = messages; i > 0; i--)
            SendMessage();
    }

    protected override void OnSent(long sent, long pending) => _sent += sent;

    public override void OnWsReceived(byte[] buffer, long offset, long size)
    {
        _received += size;
        while (_received >= message.Length)
        {
            SendMessage();
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

    public void SendMessage() => SendBinaryAsync(message, 0, message.Length);
}

public static class Program
{
    public static EchoServer StartServer(X509Certificate2 certificate, IPAddress address, int port)
    {
        var context = new SslContext(SslProtocols.Tls12, certificate);
        var server = new EchoServer(context, address, port);
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

    public static Task<Report> RunClientsAsync(X509Certificate2 certificate, string address, int port, int clients, int messages, int size, TimeSpan duration)
    {
        var totals = new Totals();
        var message = new byte[size];
        // The benchmark's accept-anything callback (CA5359): the shape of the constructor call is what is checked.
#pragma warning disable CA5359
        var context = new SslContext(SslProtocols.Tls12, certificate, (sender, certificate, chain, sslPolicyErrors) => true);
#pragma warning restore CA5359
        var echoClients = new List<EchoClient>();
        for (var i = 0; i < clients; i++)
        {
            var client = new EchoClient(context, address, port, messages, message, totals);
            client.OptionNoDelay = true; // commented out in the benchmark; set here so the setter stays checked
            echoClients.Add(client);
        }

        return Benchmark.RunClientsAsync(
            echoClients,
            static client => client.ConnectAsync(),
            static client => client.IsConnected,
            static client => client.CloseAsync(1000),
            static client => client.IsConnected,
            duration,
            totals,
            () => totals.Bytes / size);
    }
}
