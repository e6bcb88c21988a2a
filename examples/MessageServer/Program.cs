using System;
using System.Globalization;
using System.IO;
using System.Net;
using System.Net.Sockets;
using System.Security.Authentication;
using System.Text.Unicode;
using System.Threading.Tasks;

namespace NetServer.Examples.Messaging;

/// <summary>One connection: answers every message with "#N " (its number on this connection) in front of the message.</summary>
internal sealed class CounterSession(MessageServer server) : MessageSession(server)
{
    private int _count;

    protected override void OnConnected() =>
        Console.WriteLine($"Session {Id} connected{(RemoteEndPoint is IPEndPoint from ? $" from {from}" : string.Empty)}");

    protected override void OnMessage(ReadOnlySpan<byte> message)
    {
        // The reply is built in place in pooled send memory, its length prefix filled in by Commit.
        using var reply = StartMessage(message.Length + 16);
        var prefix = reply.GetSpan(16);
        Utf8.TryWrite(prefix, CultureInfo.InvariantCulture, $"#{++_count} ", out var written);
        reply.Advance(written);
        reply.Write(message);
        reply.Commit();
    }

    protected override void OnDisconnected(DisconnectReason reason)
    {
        base.OnDisconnected(reason);
        Console.WriteLine($"Session {Id} left ({reason}) after {_count} messages");
    }
}

/// <summary>The server, over TCP, TLS or a Unix domain socket depending on how it is made.</summary>
internal sealed class CounterServer : MessageServer
{
    public CounterServer(EndPoint endpoint)
        : base(endpoint)
    {
    }

    public CounterServer(SslContext context, EndPoint endpoint)
        : base(context, endpoint)
    {
    }

    protected override MessageSession CreateSession() => new CounterSession(this);

    protected override void OnError(SocketError error) => Console.WriteLine($"The server caught a socket error: {error}");
}

internal static class Program
{
    private const int DefaultTcpPort = 5555;
    private const int DefaultSslPort = 5556;
    private const string Usage = "Usage: MessageServer [tcp|ssl|uds] [port or socket path] [address] [--certs DIR]";

    /// <summary>
    /// Usage: MessageServer [tcp|ssl|uds] [port or socket path] [address] [--certs DIR]. TCP (the
    /// default) listens on 127.0.0.1 port 5555, TLS on port 5556 with the certificates in certs/,
    /// a Unix socket on netserver-messages.sock in the temp folder. Port 0 picks a free port.
    /// </summary>
    private static async Task<int> Main(string[] args)
    {
        if (CommandLine.Parse(args, Usage, switches: [], options: [CertificateFolder.Option]) is not { } line)
            return 2;
        var transport = line.Positional(0) ?? "tcp";
        var address = line.Positional(2) is { } addressText ? IPAddress.Parse(addressText) : IPAddress.Loopback;
        int Port(int fallback) => line.Positional(1) is { } text ? int.Parse(text, CultureInfo.InvariantCulture) : fallback;

        CertificateFolder? certificates = null;
        try
        {
            CounterServer server;
            switch (transport)
            {
                case "tcp":
                    server = new CounterServer(new IPEndPoint(address, Port(DefaultTcpPort)));
                    break;
                case "uds":
                    server = new CounterServer(new UnixDomainSocketEndPoint(line.Positional(1) ?? DefaultSocketPath));
                    break;
                case "ssl":
                    certificates = CertificateFolder.Open(line.ValueOf(CertificateFolder.Option));
                    if (certificates?.Load(CertificateFolder.ServerFile) is not { } certificate)
                        return 1;
                    server = new CounterServer(new SslContext(SslProtocols.None, certificate), new IPEndPoint(address, Port(DefaultSslPort)));
                    break;
                default:
                    Console.WriteLine(Usage);
                    return 2;
            }

            using (server)
            {
                // Stop returns once every session has disconnected; run it off the console's thread.
                return await ServerConsole.RunAsync($"Message server ({transport})", new ServerConsole.Controls(
                    server.Start,
                    () => Task.Run(server.Stop),
                    () => server.IsStarted,
                    () => server.Endpoint,
                    Announce: null));
            }
        }
        finally
        {
            certificates?.Dispose();
        }
    }

    /// <summary>The default socket file, shared with MessageClient.</summary>
    private static string DefaultSocketPath => Path.Combine(Path.GetTempPath(), "netserver-messages.sock");
}
