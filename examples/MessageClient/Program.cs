using System;
using System.Diagnostics;
using System.Globalization;
using System.IO;
using System.Net.Sockets;
using System.Security.Authentication;
using System.Text;
using System.Threading;
using System.Threading.Tasks;

namespace NetServer.Examples.Messaging;

internal static class Program
{
    private const int DefaultTcpPort = 5555;
    private const int DefaultSslPort = 5556;
    private const string CountOption = "--count";
    private const string Usage = "Usage: MessageClient [tcp|ssl|uds] [address or socket path] [port] [--count N] [--certs DIR]";

    // How long a reply may take before the client gives up on it.
    private static readonly TimeSpan s_replyTimeout = TimeSpan.FromSeconds(10);

    /// <summary>
    /// Usage: MessageClient [tcp|ssl|uds] [address or socket path] [port] [--count N] [--certs DIR].
    /// Connects to MessageServer (by default over TCP to 127.0.0.1 port 5555), then sends every
    /// line typed as one message and prints the reply, awaited with ReceiveAsync. With --count N it
    /// sends N messages itself instead, checks every reply and prints how long it took.
    /// </summary>
    private static async Task<int> Main(string[] args)
    {
        if (CommandLine.Parse(args, Usage, switches: [], options: [CountOption, CertificateFolder.Option]) is not { } line)
            return 2;
        var transport = line.Positional(0) ?? "tcp";
        var address = line.Positional(1) ?? "127.0.0.1";
        int Port(int fallback) => line.Positional(2) is { } text ? int.Parse(text, CultureInfo.InvariantCulture) : fallback;

        using var certificates = transport == "ssl" ? CertificateFolder.Open(line.ValueOf(CertificateFolder.Option)) : null;
        MessageClient client;
        switch (transport)
        {
            case "tcp":
                client = new MessageClient(address, Port(DefaultTcpPort));
                break;
            case "uds":
                client = new MessageClient(new UnixDomainSocketEndPoint(line.Positional(1) ?? Path.Combine(Path.GetTempPath(), "netserver-messages.sock")));
                break;
            case "ssl":
                if (certificates?.Load(CertificateFolder.AuthorityFile) is not { } authority)
                    return 1;

                // The server's certificate must come from the test CA and name the address connected to.
                var context = new SslContext();
                context.TrustedCertificateAuthorities.Add(authority);
                client = new MessageClient(context, address, Port(DefaultSslPort));
                break;
            default:
                Console.WriteLine(Usage);
                return 2;
        }

        using (client)
        {
            try
            {
                await client.ConnectAsync();
            }
            catch (Exception e) when (e is SocketException or AuthenticationException or TimeoutException)
            {
                Console.WriteLine($"Cannot connect to {client.Endpoint} ({e.Message}). Is MessageServer running?");
                return 1;
            }

            Console.WriteLine($"Connected to {client.Endpoint} over {transport}");
            try
            {
                return line.ValueOf(CountOption) is { } count
                    ? await SendManyAsync(client, int.Parse(count, CultureInfo.InvariantCulture))
                    : await ChatAsync(client);
            }
            catch (IOException e)
            {
                // ReceiveAsync: the connection closed and no reply is left.
                Console.WriteLine($"Disconnected: {e.Message}");
                return 1;
            }
            finally
            {
                await client.DisconnectAsync();
            }
        }
    }

    /// <summary>Each line typed goes out as one message; its reply is awaited and printed. An empty line quits.</summary>
    private static async Task<int> ChatAsync(MessageClient client)
    {
        Console.WriteLine("Type a line to send it as a message, or an empty line to quit.");
        while (Console.ReadLine() is { Length: > 0 } text)
        {
            client.SendAsync(text);
            using var timeout = new CancellationTokenSource(s_replyTimeout);
            using var reply = await client.ReceiveAsync(timeout.Token);
            Console.WriteLine($"Reply: {Encoding.UTF8.GetString(reply.Span)}");
        }

        return 0;
    }

    /// <summary>Sends <paramref name="count"/> messages, up to 64 awaiting their replies at a time, and checks every reply.</summary>
    private static async Task<int> SendManyAsync(MessageClient client, int count)
    {
        const int window = 64;
        var clock = Stopwatch.StartNew();
        var sent = 0;
        for (var received = 0; received < count; received++)
        {
            // Keep the window full: the awaited send waits when the send queue is over its limit.
            while (sent < count && sent - received < window)
            {
                if (!await client.SendAsync(Encoding.UTF8.GetBytes($"message {++sent}").AsMemory()))
                    throw new IOException($"The connection closed ({client.DisconnectReason}) while sending.");
            }

            using var timeout = new CancellationTokenSource(s_replyTimeout);
            using var reply = await client.ReceiveAsync(timeout.Token);
            var expected = $"#{received + 1} message {received + 1}";
            if (Encoding.UTF8.GetString(reply.Span) != expected)
            {
                Console.WriteLine($"Reply {received + 1} is \"{Encoding.UTF8.GetString(reply.Span)}\", expected \"{expected}\".");
                return 1;
            }
        }

        var elapsed = clock.Elapsed;
        Console.WriteLine($"Got {count} replies in {elapsed.TotalMilliseconds:F0} ms ({count / Math.Max(elapsed.TotalSeconds, 1e-6):F0} messages/s)");
        return 0;
    }
}
