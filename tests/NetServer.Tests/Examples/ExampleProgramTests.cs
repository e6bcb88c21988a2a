using System;
using System.Globalization;
using System.Threading.Channels;
using System.IO;
using System.Net;
using System.Linq;
using System.Net.Sockets;
using System.Security.Authentication;
using System.Text;
using System.Threading;
using System.Threading.Tasks;
using NetServer.Tests.Infrastructure;
using NetServer.Tests.Ssl;
using Xunit;

namespace NetServer.Tests.Examples;

/// <summary>
/// The chat examples as a user runs them: each program is a child process driven through its
/// console, talking to real sockets. The servers are checked with raw line clients (through the
/// harness's TLS relay for the TLS server); the clients against a NetServer test server. The TLS
/// programs also meet each other: clients chatting through the server, with and without client certificates.
/// </summary>
public sealed class ExampleProgramTests
{
    private static readonly TimeSpan s_timeout = TimeSpan.FromSeconds(10);

    [Theory]
    [MemberData(nameof(Transports.All), MemberType = typeof(Transports))]
    public async Task ChatServer_greets_relays_members_and_admin_lets_a_member_leave_restarts_and_stops(TransportKind kind)
    {
        using var folder = new TempFolder();
        var socketPath = folder.PathOf("chat.sock");
        await using var server = kind switch
        {
            TransportKind.Tcp => ProgramProcess.Start("TcpChatServer", "0", IPAddress.Loopback.ToString()),
            TransportKind.Uds => ProgramProcess.Start("UdsChatServer", socketPath),
            _ => ProgramProcess.Start("SslChatServer", "0", IPAddress.Loopback.ToString()),
        };

        var listening = await server.WaitForLineAsync("Listening on ");
        EndPoint endpoint = kind == TransportKind.Uds
            ? new UnixDomainSocketEndPoint(socketPath)
            : IPEndPoint.Parse(listening["Listening on ".Length..]);

        using var alice = await LinePeer.ConnectAsync(endpoint, kind);
        using var bob = await LinePeer.ConnectAsync(endpoint, kind);
        Assert.StartsWith("Welcome", await alice.ReadLineAsync(), StringComparison.Ordinal);
        Assert.StartsWith("Welcome", await bob.ReadLineAsync(), StringComparison.Ordinal);

        await alice.SendLineAsync("hello from alice");
        Assert.Equal("hello from alice", await alice.ReadLineAsync());
        Assert.Equal("hello from alice", await bob.ReadLineAsync());

        await server.TypeAsync("maintenance at noon");
        Assert.Equal("(admin) maintenance at noon", await alice.ReadLineAsync());
        Assert.Equal("(admin) maintenance at noon", await bob.ReadLineAsync());

        // "!" reaches everyone, then the server closes the sender's connection gracefully.
        await alice.SendLineAsync("!");
        Assert.Equal("!", await alice.ReadLineAsync());
        Assert.Null(await alice.ReadLineAsync());
        Assert.Equal("!", await bob.ReadLineAsync());
        await bob.SendLineAsync("still here");
        Assert.Equal("still here", await bob.ReadLineAsync());

        // "!" at the console restarts the server on the same endpoint: members are dropped and can come back.
        await server.TypeAsync("!");
        await bob.AssertClosedAsync();
        Assert.Equal(listening, await server.WaitForLineAsync("Listening on "));
        using var carol = await LinePeer.ConnectAsync(endpoint, kind);
        using var dave = await LinePeer.ConnectAsync(endpoint, kind);
        Assert.StartsWith("Welcome", await carol.ReadLineAsync(), StringComparison.Ordinal);
        Assert.StartsWith("Welcome", await dave.ReadLineAsync(), StringComparison.Ordinal);

        // An empty line stops the server: the process ends and every member sees the close.
        await server.TypeAsync(string.Empty);
        Assert.Equal(0, await server.WaitForExitAsync());
        await carol.AssertClosedAsync();
        await dave.AssertClosedAsync();
        if (kind == TransportKind.Uds)
            Assert.False(File.Exists(socketPath), "The server left its socket file behind.");
    }

    [Theory]
    [MemberData(nameof(Transports.All), MemberType = typeof(Transports))]
    public async Task ChatClient_prints_what_arrives_sends_typed_lines_reconnects_after_bang_and_quits(TransportKind kind)
    {
        await using var harness = new ServerHarness(kind);
        var listener = new SessionListener(harness.Probe);
        harness.Start();

        // The harness's TLS server presents an in-process certificate: the client is told to trust its CA.
        using var certs = new TempFolder();
        await File.WriteAllTextAsync(certs.PathOf("ca.pem"), TestCertificates.Authority.ExportCertificatePem());
        var port = harness.Endpoint is IPEndPoint ip ? ip.Port.ToString(CultureInfo.InvariantCulture) : string.Empty;
        await using var client = kind switch
        {
            TransportKind.Tcp => ProgramProcess.Start("TcpChatClient", IPAddress.Loopback.ToString(), port),
            TransportKind.Uds => ProgramProcess.Start("UdsChatClient", harness.SocketPath!),
            _ => ProgramProcess.Start("SslChatClient", IPAddress.Loopback.ToString(), port, "--certs", certs.FullPath),
        };

        var first = await listener.NextSessionAsync();
        await client.WaitForLineAsync("Connected");
        first.Session.SendAsync("news from the server\n");
        await client.WaitForLineAsync("news from the server");

        await client.TypeAsync("hello server");
        Assert.Equal("hello server", await first.ReadLineAsync());

        // "!" drops the connection; the client comes back on its own a moment later.
        await client.TypeAsync("!");
        Assert.Equal(DisconnectReason.PeerClosed, await first.Probe.DisconnectedSignal.Task.WaitAsync(s_timeout));
        var second = await listener.NextSessionAsync();
        await client.WaitForLineAsync("Connected"); // the server may see the connection before the client does
        await client.TypeAsync("hello again");
        Assert.Equal("hello again", await second.ReadLineAsync());

        // An empty line quits: the process ends, its connection closes, and it did not reconnect on the way out.
        await client.TypeAsync(string.Empty);
        Assert.Equal(0, await client.WaitForExitAsync());
        await second.Probe.DisconnectedSignal.Task.WaitAsync(s_timeout);
        Assert.False(listener.HasMoreSessions, "The client connected again while quitting.");
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public async Task SslChat_a_line_typed_in_one_client_reaches_the_other_over_tls(bool mutual)
    {
        string[] serverOptions = mutual ? ["--require-client-cert"] : [];
        string[] clientOptions = mutual ? ["--client-cert"] : [];
        await using var server = ProgramProcess.Start("SslChatServer", ["0", IPAddress.Loopback.ToString(), .. serverOptions]);
        var port = (await server.ListeningPortAsync()).ToString(CultureInfo.InvariantCulture);

        // Found without --certs: the programs look for the repository's certs/ folder themselves.
        await using var alice = ProgramProcess.Start("SslChatClient", ["127.0.0.1", port, .. clientOptions]);
        Assert.Contains("server certificate CN=localhost", await alice.WaitForLineAsync("Secured: "), StringComparison.Ordinal);
        await alice.WaitForLineAsync("Welcome");
        var clientCertificate = mutual ? "client certificate CN=NetServer Test Client" : "client certificate none";
        Assert.Contains(clientCertificate, await server.WaitForLineAsync("Secured session "), StringComparison.Ordinal);

        await using var bob = ProgramProcess.Start("SslChatClient", ["127.0.0.1", port, .. clientOptions]);
        await bob.WaitForLineAsync("Secured: ");
        await bob.WaitForLineAsync("Welcome");
        Assert.Contains(clientCertificate, await server.WaitForLineAsync("Secured session "), StringComparison.Ordinal);

        await alice.TypeAsync("hello over tls");
        await bob.WaitForLineAsync("hello over tls");
        await alice.WaitForLineAsync("hello over tls");

        await bob.TypeAsync(string.Empty);
        await alice.TypeAsync(string.Empty);
        Assert.Equal(0, await bob.WaitForExitAsync());
        Assert.Equal(0, await alice.WaitForExitAsync());
        await server.TypeAsync(string.Empty);
        Assert.Equal(0, await server.WaitForExitAsync());
    }

    [Fact]
    public async Task SslChatServer_requiring_client_certificates_refuses_a_client_without_one()
    {
        var certs = ProgramProcess.RepositoryCertificates();
        await using var server = ProgramProcess.Start("SslChatServer", "0", IPAddress.Loopback.ToString(), "--require-client-cert", "--certs", certs);
        var port = (await server.ListeningPortAsync()).ToString(CultureInfo.InvariantCulture);

        await using var member = ProgramProcess.Start("SslChatClient", "127.0.0.1", port, "--client-cert", "--certs", certs);
        await member.WaitForLineAsync("Welcome");
        await server.WaitForLineAsync("Secured session ");

        // With TLS 1.3 the stranger finishes its side of the handshake before the server checks
        // for a certificate, so it may print "Secured" before the server hangs up; either way it ends disconnected.
        await using var stranger = ProgramProcess.Start("SslChatClient", "127.0.0.1", port, "--certs", certs);
        Assert.Contains("client certificate", await server.WaitForLineAsync("Handshake failed for session "), StringComparison.Ordinal);
        await stranger.WaitForLineAsync("Disconnected");

        // Typed on a refused connection (or on none: the client is between attempts). Once the next
        // "Disconnected" is printed, the connection it might have gone out on is over unread.
        await stranger.TypeAsync("let me in");
        await stranger.WaitForLineAsync("Disconnected");
        await member.TypeAsync("members only");
        await member.WaitForLineAsync("members only");
        Assert.DoesNotContain("let me in", member.Transcript, StringComparison.Ordinal);
        Assert.DoesNotContain("let me in", server.Transcript, StringComparison.Ordinal);
        Assert.DoesNotContain("Welcome", stranger.Transcript, StringComparison.Ordinal);

        await stranger.TypeAsync(string.Empty);
        await member.TypeAsync(string.Empty);
        Assert.Equal(0, await stranger.WaitForExitAsync());
        Assert.Equal(0, await member.WaitForExitAsync());
        await server.TypeAsync(string.Empty);
        Assert.Equal(0, await server.WaitForExitAsync());
    }

    [Fact]
    public async Task SslChatClient_refuses_a_server_whose_certificate_is_from_another_CA()
    {
        // A server presenting a certificate valid for 127.0.0.1 but issued by a CA the client does not trust.
        await using var bench = new SslEchoServer(new SslContext(SslProtocols.None, TestCertificates.UntrustedServer));
        using var certs = new TempFolder();
        await File.WriteAllTextAsync(certs.PathOf("ca.pem"), TestCertificates.Authority.ExportCertificatePem());

        await using var client = ProgramProcess.Start("SslChatClient", IPAddress.Loopback.ToString(), bench.Endpoint.Port.ToString(CultureInfo.InvariantCulture), "--certs", certs.FullPath);
        var failed = await client.WaitForLineAsync("Handshake failed: ");
        Assert.Contains("Expected: a server certificate for 127.0.0.1 issued by a trusted CA.", failed, StringComparison.Ordinal);
        await client.WaitForLineAsync("Disconnected (HandshakeFailed)");

        // The client keeps trying (and keeps refusing) until told to quit; nothing it typed ever reached the server.
        await client.TypeAsync("let me in");
        await client.WaitForLineAsync("Handshake failed: ");
        await client.TypeAsync(string.Empty);
        Assert.Equal(0, await client.WaitForExitAsync());
        Assert.DoesNotContain("Secured:", client.Transcript, StringComparison.Ordinal);
        var (_, sessionProbe) = await bench.SessionAsync(0);
        await sessionProbe.DisconnectedSignal.Task.WaitAsync(s_timeout);
        Assert.Equal(0, bench.Probe.Sessions.Values.Sum(p => p.ReceivedBytes));
    }

    /// <summary>A raw stream socket speaking the chat's line protocol, as nc or telnet would.</summary>
    private sealed class LinePeer : IDisposable
    {
        private readonly Socket _socket;
        private readonly StreamReader _reader;

        private LinePeer(Socket socket)
        {
            _socket = socket;
            _reader = new StreamReader(new NetworkStream(socket, ownsSocket: false), Encoding.UTF8);
        }

        /// <summary>Connects to a chat server; to a TLS one through the harness's relay, which does the TLS.</summary>
        public static async Task<LinePeer> ConnectAsync(EndPoint endpoint, TransportKind kind)
        {
            if (kind == TransportKind.Ssl)
                return new LinePeer(await SecureTransport.ConnectRelayAsync((IPEndPoint)endpoint));

            var socket = endpoint is UnixDomainSocketEndPoint
                ? new Socket(AddressFamily.Unix, SocketType.Stream, ProtocolType.Unspecified)
                : new Socket(endpoint.AddressFamily, SocketType.Stream, ProtocolType.Tcp);
            try
            {
                await socket.ConnectAsync(endpoint).WaitAsync(s_timeout);
                return new LinePeer(socket);
            }
            catch
            {
                socket.Dispose();
                throw;
            }
        }

        public async Task SendLineAsync(string line) =>
            await _socket.SendAsync(Encoding.UTF8.GetBytes(line + "\n"), SocketFlags.None).WaitAsync(s_timeout);

        /// <summary>The next line, or null once the server has closed the connection.</summary>
        public async Task<string?> ReadLineAsync()
        {
            using var timeout = new CancellationTokenSource(s_timeout);
            return await _reader.ReadLineAsync(timeout.Token);
        }

        /// <summary>Checks that the server closed the connection; a stopping server may reset it instead of closing it gracefully.</summary>
        public async Task AssertClosedAsync()
        {
            try
            {
                Assert.Null(await ReadLineAsync());
            }
            catch (IOException e) when (e.InnerException is SocketException { SocketErrorCode: SocketError.ConnectionReset })
            {
                // Reset is a close too.
            }
        }

        public void Dispose()
        {
            _reader.Dispose();
            _socket.Dispose();
        }
    }

    /// <summary>Each session the test server accepts, with the lines it received.</summary>
    private sealed class SessionListener
    {
        private readonly Channel<HeardSession> _sessions = Channel.CreateUnbounded<HeardSession>();

        public SessionListener(ServerProbe server)
        {
            server.ConfigureSession = probe =>
            {
                var heard = new HeardSession(probe);
                probe.Connected = session =>
                {
                    heard.Session = (StreamSession)session;
                    _sessions.Writer.TryWrite(heard);
                };
                probe.Received = (_, buffer, offset, size) => heard.Add(buffer.AsSpan((int)offset, (int)size));
            };
        }

        public bool HasMoreSessions => _sessions.Reader.TryPeek(out _);

        public async Task<HeardSession> NextSessionAsync()
        {
            using var timeout = new CancellationTokenSource(s_timeout);
            return await _sessions.Reader.ReadAsync(timeout.Token);
        }
    }

    /// <summary>One server-side session: OnReceived appends bytes, complete lines go to a channel.</summary>
    private sealed class HeardSession(Probe probe)
    {
        private readonly Channel<string> _lines = Channel.CreateUnbounded<string>();
        private readonly Decoder _decoder = Encoding.UTF8.GetDecoder();
        private readonly StringBuilder _partial = new();

        public Probe Probe { get; } = probe;

        public StreamSession Session { get; set; } = null!;

        // OnReceived never runs concurrently with itself, so _partial needs no lock.
        public void Add(ReadOnlySpan<byte> data)
        {
            var chars = new char[_decoder.GetCharCount(data, flush: false)];
            _decoder.GetChars(data, chars, flush: false);
            foreach (var c in chars)
            {
                if (c != '\n')
                {
                    _partial.Append(c);
                    continue;
                }

                _lines.Writer.TryWrite(_partial.ToString().TrimEnd('\r'));
                _partial.Clear();
            }
        }

        public async Task<string> ReadLineAsync()
        {
            using var timeout = new CancellationTokenSource(s_timeout);
            return await _lines.Reader.ReadAsync(timeout.Token);
        }
    }

    /// <summary>A unique temp folder for one test's files (a socket, a CA certificate), removed afterwards.</summary>
    private sealed class TempFolder : IDisposable
    {
        private readonly string _path = Path.Combine(Path.GetTempPath(), "netserver-example-" + Guid.NewGuid().ToString("N")[..12]);

        public TempFolder() => Directory.CreateDirectory(_path);

        public string FullPath => _path;

        public string PathOf(string name) => Path.Combine(_path, name);

        public void Dispose()
        {
            try
            {
                Directory.Delete(_path, recursive: true);
            }
            catch (IOException)
            {
                // A failed test may leave a socket file in use; a temp folder is harmless.
            }
        }
    }
}
