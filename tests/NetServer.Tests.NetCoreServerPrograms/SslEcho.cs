using System;
using System.Collections.Generic;
using System.Net;
using System.Net.Sockets;
using System.Security.Authentication;
using System.Security.Cryptography.X509Certificates;
using System.Threading.Tasks;
using NetServer;

// Mirrors NetCoreServer's performance/SslEchoServer/Program.cs and performance/SslEchoClient/Program.cs.
// The benchmarks load their certificates from server.pfx/client.pfx; here the caller passes them in.
namespace NetCoreServerPrograms.SslEcho;

public class EchoSession(SslServer server) : SslSession(server)
{
    protected override void OnReceived(byte[] buffer, long offset, long size) => SendAsync(buffer, offset, size);

    protected override void OnError(SocketError error) => Console.WriteLine($"Session caught an error with code {error}");
}

public class EchoServer(SslContext context, IPAddress address, int port) : SslServer(context, address, port)
{
    protected override SslSession CreateSession() => new EchoSession(this);

    protected override void OnError(SocketError error) => Console.WriteLine($"Server caught an error with code {error}");
}

public class EchoClient(SslContext context, string address, int port, int messages, byte[] message, Totals totals) : SslClient(context, address, port)
{
    private long _sent;
    private long _received;

    public long Sent => _sent;

    protected override void OnHandshaked()
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
            client.OptionNoDelay = true;
            echoClients.Add(client);
        }

        return Benchmark.RunClientsAsync(
            echoClients,
            static client => client.ConnectAsync(),
            static client => client.IsHandshaked,
            static client => client.DisconnectAsync(),
            static client => client.IsConnected,
            duration,
            totals,
            () => totals.Bytes / size);
    }
}
