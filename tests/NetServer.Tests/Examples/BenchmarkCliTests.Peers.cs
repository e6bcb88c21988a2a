using System;
using System.Buffers.Binary;
using System.Globalization;
using System.IO;
using System.Linq;
using System.Net;
using System.Net.Security;
using System.Net.Sockets;
using System.Security.Cryptography.X509Certificates;
using System.Threading;
using System.Threading.Tasks;
using NetServer.Tests.Infrastructure;
using Xunit;

namespace NetServer.Tests.Examples;

/// <summary>Our msg, latency, reply, handshake and echo roles against any peer of the same wire shape.</summary>
public sealed partial class BenchmarkCliTests
{
    [Fact]
    public async Task Msg_echo_server_sends_every_message_back_whole_when_frames_split_across_writes()
    {
        await using var server = ProgramProcess.Start(Cli, s_timeout, "msg", "echo", "--role", "server", "-p", "0", "-z", "0", "-q");
        var port = PortOf(await server.WaitForLineAsync("Server listening on "));

        // 300 length-prefixed messages of 0 to 99 bytes, written in pieces of 1 to 70 bytes; each
        // answer is the same frame (the server sends the message back as a message of its own).
        using var timeout = new CancellationTokenSource(s_timeout);
        using var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
        await socket.ConnectAsync(new IPEndPoint(IPAddress.Loopback, port), timeout.Token);
        var stream = new MemoryStream();
        for (var i = 0; i < 300; i++)
        {
            var length = i * 37 % 100;
            var prefix = new byte[4];
            BinaryPrimitives.WriteInt32LittleEndian(prefix, length);
            stream.Write(prefix);
            stream.Write(Enumerable.Range(0, length).Select(b => (byte)(b + i)).ToArray());
        }

        var sent = stream.ToArray();
        var random = new Random(11);
        var sending = Task.Run(async () =>
        {
            for (var written = 0; written < sent.Length;)
            {
                var piece = Math.Min(random.Next(1, 71), sent.Length - written);
                await socket.SendAsync(sent.AsMemory(written, piece), SocketFlags.None, timeout.Token);
                written += piece;
            }
        });
        var received = new byte[sent.Length];
        for (var read = 0; read < received.Length;)
        {
            var n = await socket.ReceiveAsync(received.AsMemory(read), SocketFlags.None, timeout.Token);
            Assert.True(n > 0, "The server closed the connection.");
            read += n;
        }

        await sending.WaitAsync(s_timeout);
        Assert.Equal(sent, received);
    }

    [Fact]
    public async Task Our_msg_client_drives_any_server_that_sends_its_frames_back()
    {
        // A byte echo server returns every frame whole, so it answers msg echo as a message server would.
        using var listener = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        listener.Bind(new IPEndPoint(IPAddress.Loopback, 0));
        listener.Listen();
        using var stop = new CancellationTokenSource();
        var serving = EchoAllAsync(listener, secure: false, stop.Token);
        try
        {
            var port = ((IPEndPoint)listener.LocalEndPoint!).Port;
            await using var client = ProgramProcess.Start(Cli, s_timeout,
                "msg", "echo", "--role", "client", "-p", port.ToString(CultureInfo.InvariantCulture), "-c", "2", "-m", "50", "-s", "16", "-z", "1", "-q");
            var result = await ResultAsync(client);
            Assert.Equal(0, await client.WaitForExitAsync());
            Assert.Equal("client", result.GetProperty("role").GetString());
            Assert.Equal(0, result.GetProperty("errors").GetInt64());
            var messages = result.GetProperty("totalMessages").GetInt64();
            Assert.True(messages > 2 * 50, $"The client counted only {messages} messages.");
            Assert.Equal(messages * 16, result.GetProperty("totalBytes").GetInt64());
        }
        finally
        {
            await stop.CancelAsync();
            listener.Close();
            await serving.WaitAsync(s_timeout);
        }
    }

    [Theory]
    [InlineData("tcp")]
    [InlineData("uds")]
    [InlineData("ssl")]
    public async Task Latency_scenario_reports_round_trips_and_ordered_percentiles(string protocol)
    {
        await using var bench = ProgramProcess.Start(Cli, s_timeout, protocol, "latency", "-c", "2", "-z", "1", "-q");
        var result = await ResultAsync(bench);
        Assert.Equal(0, await bench.WaitForExitAsync());

        Assert.Equal(protocol, result.GetProperty("protocol").GetString());
        Assert.Equal("latency", result.GetProperty("scenario").GetString());
        Assert.Equal(2, result.GetProperty("clients").GetInt32());
        Assert.Equal(0, result.GetProperty("errors").GetInt64());
        AssertSaneRoundTrips(result);
    }

    [Theory]
    [InlineData("tcp")]
    [InlineData("ssl")]
    public async Task Our_latency_client_times_any_echo_server(string protocol)
    {
        // The plain socket (or SslStream) echo server of the seed wire shape, as echoref's server is.
        using var certificates = new CertificateFolder();
        using var listener = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        listener.Bind(new IPEndPoint(IPAddress.Loopback, 0));
        listener.Listen();
        using var stop = new CancellationTokenSource();
        var serving = EchoAllAsync(listener, protocol == "ssl", stop.Token);
        try
        {
            var port = ((IPEndPoint)listener.LocalEndPoint!).Port;
            await using var client = ProgramProcess.Start(Cli, s_timeout,
                [protocol, "latency", "--role", "client", "-p", port.ToString(CultureInfo.InvariantCulture), "-z", "1", "-q", .. certificates.Option(protocol)]);
            var result = await ResultAsync(client);
            Assert.Equal(0, await client.WaitForExitAsync());
            Assert.Equal("client", result.GetProperty("role").GetString());
            Assert.Equal(1, result.GetProperty("clients").GetInt32());
            Assert.Equal(0, result.GetProperty("errors").GetInt64());
            AssertSaneRoundTrips(result);
        }
        finally
        {
            await stop.CancelAsync();
            listener.Close();
            await serving.WaitAsync(s_timeout);
        }
    }

    [Fact]
    public async Task Reply_server_answers_every_message_unchanged_when_messages_split_across_writes()
    {
        await using var server = ProgramProcess.Start(Cli, s_timeout, "tcp", "reply", "--role", "server", "-p", "0", "-s", "32", "-z", "0", "-q");
        var port = PortOf(await server.WaitForLineAsync("Server listening on "));

        // 200 numbered messages written in pieces of 1 to 70 bytes, so most end or start inside a
        // piece; after each piece, the answers to the messages it completed are read back. A piece
        // that ends inside a message leaves its start with the server until the next piece.
        using var timeout = new CancellationTokenSource(s_timeout);
        using var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
        await socket.ConnectAsync(new IPEndPoint(IPAddress.Loopback, port), timeout.Token);
        var sent = Enumerable.Range(0, 200 * 32).Select(static i => (byte)((i / 32) + (i % 32))).ToArray();
        var received = new byte[sent.Length];
        var random = new Random(7);
        var (written, read) = (0, 0);
        while (written < sent.Length)
        {
            var piece = Math.Min(random.Next(1, 71), sent.Length - written);
            await socket.SendAsync(sent.AsMemory(written, piece), SocketFlags.None, timeout.Token);
            written += piece;
            for (var answered = written / 32 * 32; read < answered;)
            {
                var n = await socket.ReceiveAsync(received.AsMemory(read, answered - read), SocketFlags.None, timeout.Token);
                Assert.True(n > 0, "The server closed the connection.");
                read += n;
            }
        }

        Assert.Equal(sent, received);
    }

    [Theory]
    [InlineData("ssl")]
    [InlineData("tcp")]
    public async Task Handshake_scenario_reports_handshakes_and_no_error(string protocol)
    {
        await using var bench = ProgramProcess.Start(Cli, s_timeout, protocol, "handshake", "-c", "4", "-z", "1", "-q");
        var result = await ResultAsync(bench);
        Assert.Equal(0, await bench.WaitForExitAsync());

        Assert.Equal(protocol, result.GetProperty("protocol").GetString());
        Assert.Equal("handshake", result.GetProperty("scenario").GetString());
        Assert.Equal("both", result.GetProperty("role").GetString());
        Assert.Equal(4, result.GetProperty("clients").GetInt32());
        Assert.Equal(0, result.GetProperty("errors").GetInt64());
        var handshakes = result.GetProperty("handshakes").GetInt64();
        Assert.True(handshakes > 0, "No handshake was completed.");
        Assert.True(result.GetProperty("handshakesPerSecond").GetDouble() > 0);
        Assert.True(result.GetProperty("handshakeNs").GetDouble() > 0);

        // Every cycle makes new objects (socket, session; for TLS the SslStream), so zero would mean the figure is not measured.
        Assert.True(result.GetProperty("allocatedBytesPerHandshake").GetDouble() > 0);
    }

    [Theory]
    [InlineData("tcp")]
    [InlineData("ssl")]
    public async Task Our_client_drives_any_echo_server_with_the_seed_wire_shape(string protocol)
    {
        // A plain socket (or SslStream) echo server: whatever arrives goes back. The client writes
        // 50 x 16 bytes per connection once, then bounces what it receives, and counts messages as bytes / 16.
        using var certificates = new CertificateFolder();
        using var listener = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        listener.Bind(new IPEndPoint(IPAddress.Loopback, 0));
        listener.Listen();
        using var stop = new CancellationTokenSource();
        var serving = EchoAllAsync(listener, protocol == "ssl", stop.Token);
        try
        {
            var port = ((IPEndPoint)listener.LocalEndPoint!).Port;
            await using var client = ProgramProcess.Start(Cli, s_timeout,
                [protocol, "echo", "--role", "client", "-p", port.ToString(CultureInfo.InvariantCulture), "-c", "2", "-m", "50", "-s", "16", "-z", "1", "-q", .. certificates.Option(protocol)]);
            var result = await ResultAsync(client);
            Assert.Equal(0, await client.WaitForExitAsync());
            Assert.Equal(0, result.GetProperty("errors").GetInt64());
            var bytes = result.GetProperty("totalBytes").GetInt64();
            Assert.True(bytes > 2 * 50 * 16, $"The client measured only {bytes} bytes of echo.");
            Assert.Equal(bytes / 16, result.GetProperty("totalMessages").GetInt64());
        }
        finally
        {
            await stop.CancelAsync();
            listener.Close();
            await serving.WaitAsync(s_timeout);
        }
    }

    [Theory]
    [InlineData("tcp")]
    [InlineData("ssl")]
    public async Task Any_echo_shaped_client_drives_our_server(string protocol)
    {
        using var certificates = new CertificateFolder();
        await using var server = ProgramProcess.Start(Cli, s_timeout, [protocol, "echo", "--role", "server", "-p", "0", "-z", "0", "-q", .. certificates.Option(protocol)]);
        var port = PortOf(await server.WaitForLineAsync("Server listening on "));

        // 1000 x 32 bytes in flight, bounced 20 times; every byte comes back unchanged (over TLS: an SslStream client).
        using var timeout = new CancellationTokenSource(s_timeout);
        using var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        await socket.ConnectAsync(new IPEndPoint(IPAddress.Loopback, port), timeout.Token);
        await using var stream = protocol == "ssl"
            ? await SecureAsync(socket, server: false, timeout.Token)
            : new NetworkStream(socket, ownsSocket: true);
        var sent = Enumerable.Range(0, 32_000).Select(static i => (byte)(i * 7)).ToArray();
        var received = new byte[sent.Length];
        for (var round = 0; round < 20; round++)
        {
            await stream.WriteAsync(sent, timeout.Token);
            for (var got = 0; got < received.Length;)
            {
                var n = await stream.ReadAsync(received.AsMemory(got), timeout.Token);
                Assert.True(n > 0, "The server closed the connection.");
                got += n;
            }

            Assert.Equal(sent, received);
        }
    }

    private static async Task EchoAllAsync(Socket listener, bool secure, CancellationToken token)
    {
        var connections = new System.Collections.Generic.List<Task>();
        try
        {
            while (true)
            {
                var peer = await listener.AcceptAsync(token);
                connections.Add(EchoAsync(peer, secure, token));
            }
        }
        catch (Exception e) when (e is OperationCanceledException or SocketException or ObjectDisposedException)
        {
            // Stopped.
        }

        await Task.WhenAll(connections);
    }

    private static async Task EchoAsync(Socket peer, bool secure, CancellationToken token)
    {
        try
        {
            await using var stream = secure ? await SecureAsync(peer, server: true, token) : new NetworkStream(peer, ownsSocket: true);
            var buffer = new byte[4096];
            int n;
            while ((n = await stream.ReadAsync(buffer, token)) > 0)
                await stream.WriteAsync(buffer.AsMemory(0, n), token);
        }
        catch (Exception e) when (e is OperationCanceledException or SocketException or IOException or System.Security.Authentication.AuthenticationException)
        {
            // The client went away or the test is done.
        }
        finally
        {
            peer.Dispose();
        }
    }

    /// <summary>TLS over <paramref name="socket"/> with the in-process test certificates (those <see cref="CertificateFolder"/> gives the CLI).</summary>
    private static async Task<Stream> SecureAsync(Socket socket, bool server, CancellationToken token)
    {
        var tls = new SslStream(new NetworkStream(socket, ownsSocket: true));
        try
        {
            if (server)
            {
                await tls.AuthenticateAsServerAsync(new SslServerAuthenticationOptions { ServerCertificate = TestCertificates.Server }, token);
            }
            else
            {
                var policy = new X509ChainPolicy { TrustMode = X509ChainTrustMode.CustomRootTrust, RevocationMode = X509RevocationMode.NoCheck };
                policy.CustomTrustStore.Add(TestCertificates.Authority);
                await tls.AuthenticateAsClientAsync(new SslClientAuthenticationOptions { TargetHost = "127.0.0.1", CertificateChainPolicy = policy }, token);
            }

            return tls;
        }
        catch
        {
            await tls.DisposeAsync();
            throw;
        }
    }

    /// <summary>
    /// A temporary certificate folder for the CLI's --certs: the in-process test server certificate
    /// as server.pfx (the CLI's password) and the test CA as ca.pem.
    /// </summary>
    private sealed class CertificateFolder : IDisposable
    {
        private readonly string _path = Path.Combine(Path.GetTempPath(), $"netserver-bench-certs-{Guid.NewGuid():N}");

        public CertificateFolder()
        {
            Directory.CreateDirectory(_path);
            File.WriteAllBytes(Path.Combine(_path, "server.pfx"), TestCertificates.Server.Export(X509ContentType.Pkcs12, "netserver"));
            File.WriteAllText(Path.Combine(_path, "ca.pem"), TestCertificates.Authority.ExportCertificatePem());
        }

        /// <summary>The --certs option for <paramref name="protocol"/> (none unless ssl or wss).</summary>
        public string[] Option(string protocol) => protocol is "ssl" or "wss" ? ["--certs", _path] : [];

        public void Dispose() => Directory.Delete(_path, recursive: true);
    }
}
