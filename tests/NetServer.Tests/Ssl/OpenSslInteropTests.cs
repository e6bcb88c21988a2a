using System;
using System.Collections.Concurrent;
using System.Collections.Generic;
using System.Diagnostics;
using System.IO;
using System.Net;
using System.Net.Sockets;
using System.Security.Authentication;
using System.Security.Cryptography.X509Certificates;
using System.Text;
using System.Threading;
using System.Threading.Channels;
using System.Threading.Tasks;
using NetServer.Tests.Infrastructure;
using Xunit;

namespace NetServer.Tests.Ssl;

/// <summary>
/// TLS against another implementation: the <c>openssl</c> command-line tool (part of Debian's base
/// system) as a client of our <see cref="SslServer"/> (<c>s_client</c>) and as a server for our
/// <see cref="SslClient"/> (<c>s_server</c>), with and without client certificates, with chains
/// through an intermediate CA both ways, and offering only TLS 1.1. The in-process test
/// certificates are exported as PEM files into a temp folder of each test's own.
/// </summary>
public sealed partial class OpenSslInteropTests : IDisposable
{
    private static readonly TimeSpan s_timeout = TimeSpan.FromSeconds(15);

    private readonly string _directory;

    public OpenSslInteropTests()
    {
        _directory = Path.Combine(Path.GetTempPath(), "netserver-openssl-" + Guid.NewGuid().ToString("N")[..12]);
        Directory.CreateDirectory(_directory);
        TestCertificates.ExportPem(TestCertificates.Authority, CaPath);
        TestCertificates.ExportPem(TestCertificates.Server, ServerCertificatePath, ServerKeyPath);
        TestCertificates.ExportPem(TestCertificates.Client, ClientCertificatePath, ClientKeyPath);
        TestCertificates.ExportPem(TestCertificates.Intermediate, IntermediatePath);
        TestCertificates.ExportPem(TestCertificates.ChainedServer, ChainedServerCertificatePath, ChainedServerKeyPath);
        TestCertificates.ExportPem(TestCertificates.ChainedClient, ChainedClientCertificatePath, ChainedClientKeyPath);
    }

    private string CaPath => Path.Combine(_directory, "ca.pem");

    private string ServerCertificatePath => Path.Combine(_directory, "server.pem");

    private string ServerKeyPath => Path.Combine(_directory, "server.key");

    private string ClientCertificatePath => Path.Combine(_directory, "client.pem");

    private string ClientKeyPath => Path.Combine(_directory, "client.key");

    private string IntermediatePath => Path.Combine(_directory, "intermediate.pem");

    private string ChainedServerCertificatePath => Path.Combine(_directory, "chained-server.pem");

    private string ChainedServerKeyPath => Path.Combine(_directory, "chained-server.key");

    private string ChainedClientCertificatePath => Path.Combine(_directory, "chained-client.pem");

    private string ChainedClientKeyPath => Path.Combine(_directory, "chained-client.key");

    public void Dispose()
    {
        try
        {
            Directory.Delete(_directory, recursive: true);
        }
        catch (IOException)
        {
            // A child that outlived its kill may still hold a file; the temp folder is harmless.
        }
    }

    // --- openssl s_client against our server ---

    [Fact]
    public async Task Openssl_s_client_verifies_our_server_and_gets_its_line_echoed()
    {
        await using var bench = new SslEchoServer(TestCertificates.ServerContext());
        await using var openssl = OpenSsl.Start(_directory, "s_client", "-connect", $"127.0.0.1:{bench.Endpoint.Port}", "-CAfile", CaPath, "-verify_return_error");

        await openssl.WaitForLineAsync(line => line.Contains("Verify return code: 0 (ok)", StringComparison.Ordinal), "the verified handshake");
        var (session, sessionProbe) = await bench.SessionAsync(0);
        await sessionProbe.HandshakedSignal.Task.WaitAsync(s_timeout);
        Assert.Null(((SslSession)session).Tls!.RemoteCertificate);

        // Not a line s_client reads as a command (Q, R, k, K at the start).
        const string line = "hello from openssl s_client";
        await openssl.WriteLineAsync(line);
        await openssl.WaitForLineAsync(l => l.Contains(line, StringComparison.Ordinal), "the echo of the line");
        Assert.Equal(Encoding.ASCII.GetByteCount(line + "\n"), sessionProbe.ReceivedBytes);
    }

    [Fact]
    public async Task Openssl_s_client_with_a_client_certificate_is_authenticated_by_a_server_that_requires_one()
    {
        await using var bench = new SslEchoServer(TestCertificates.ServerContext(SslClientCertificateMode.Required));
        await using var openssl = OpenSsl.Start(
            _directory, "s_client", "-connect", $"127.0.0.1:{bench.Endpoint.Port}", "-CAfile", CaPath, "-verify_return_error",
            "-cert", ClientCertificatePath, "-key", ClientKeyPath);

        await openssl.WaitForLineAsync(line => line.Contains("Verify return code: 0 (ok)", StringComparison.Ordinal), "the verified handshake");
        const string line = "mutual hello";
        await openssl.WriteLineAsync(line);
        await openssl.WaitForLineAsync(l => l.Contains(line, StringComparison.Ordinal), "the echo of the line");

        var (session, sessionProbe) = await bench.SessionAsync(0);
        Assert.True(sessionProbe.HandshakedSignal.Task.IsCompleted);
        var remote = ((SslSession)session).Tls!.RemoteCertificate;
        Assert.NotNull(remote);
        Assert.Equal(TestCertificates.Client.Subject, remote!.Subject);
        Assert.Equal(TestCertificates.Client.Thumbprint, remote.GetCertHashString());
    }

    [Fact]
    public async Task Openssl_s_client_without_a_client_certificate_is_refused_by_a_server_that_requires_one()
    {
        await using var bench = new SslEchoServer(TestCertificates.ServerContext(SslClientCertificateMode.Required));
        await using (var openssl = OpenSsl.Start(_directory, "s_client", "-connect", $"127.0.0.1:{bench.Endpoint.Port}", "-CAfile", CaPath, "-verify_return_error"))
        {
            var (session, sessionProbe) = await bench.SessionAsync(0);
            var failure = await sessionProbe.HandshakeFailedSignal.Task.WaitAsync(s_timeout);
            Assert.IsAssignableFrom<AuthenticationException>(failure);
            Assert.Equal(DisconnectReason.HandshakeFailed, await sessionProbe.DisconnectedSignal.Task.WaitAsync(s_timeout));
            Assert.Same(failure, session.DisconnectException);
            Assert.DoesNotContain("handshaked", sessionProbe.Events);

            // s_client ends on its own: the server closed the connection.
            await openssl.WaitForExitAsync();
        }

        // And the server serves the next client.
        await bench.AssertServesAsync(TestCertificates.ClientContext(TestCertificates.Client));
    }

    [Net10Fact("netstandard2.1 has no SslStreamCertificateContext to send intermediates with")]
    public async Task Openssl_s_client_verifies_our_server_that_sends_its_intermediate_against_the_root_alone()
    {
        // The leaf and its intermediate (public part only, as a chain file would give it); s_client knows only the root.
        using var intermediate = X509CertificateLoader.LoadCertificate(TestCertificates.Intermediate.RawData);
        await using var bench = new SslEchoServer(new SslContext(SslProtocols.None, new X509Certificate2Collection { TestCertificates.ChainedServer, intermediate }));
        await using var openssl = OpenSsl.Start(_directory, "s_client", "-connect", $"127.0.0.1:{bench.Endpoint.Port}", "-CAfile", CaPath, "-verify_return_error");

        await openssl.WaitForLineAsync(line => line.Contains("Verify return code: 0 (ok)", StringComparison.Ordinal), "the verified handshake");
        Assert.Contains(" 1 s:CN = NetServer Tests Intermediate CA", openssl.Transcript, StringComparison.Ordinal); // sent, second in the chain
        const string line = "chained hello";
        await openssl.WriteLineAsync(line);
        await openssl.WaitForLineAsync(l => l.Contains(line, StringComparison.Ordinal), "the echo of the line");
    }

    [Fact]
    public async Task Openssl_s_client_with_a_certificate_from_an_intermediate_is_authenticated_by_a_server_trusting_the_root()
    {
        await using var bench = new SslEchoServer(TestCertificates.ServerContext(SslClientCertificateMode.Required));
        await using var openssl = OpenSsl.Start(
            _directory, "s_client", "-connect", $"127.0.0.1:{bench.Endpoint.Port}", "-CAfile", CaPath, "-verify_return_error",
            "-cert", ChainedClientCertificatePath, "-key", ChainedClientKeyPath, "-cert_chain", IntermediatePath);

        await openssl.WaitForLineAsync(line => line.Contains("Verify return code: 0 (ok)", StringComparison.Ordinal), "the verified handshake");
        const string line = "chained client hello";
        await openssl.WriteLineAsync(line);
        await openssl.WaitForLineAsync(l => l.Contains(line, StringComparison.Ordinal), "the echo of the line");

        var (session, _) = await bench.SessionAsync(0);
        Assert.Equal(TestCertificates.ChainedClient.Thumbprint, ((SslSession)session).Tls!.RemoteCertificate!.GetCertHashString());
    }

    [Net10Fact("it runs the SslChatServer example program, built for net10.0")]
    public async Task A_server_with_the_default_protocols_refuses_TLS_1_1_even_where_the_systems_OpenSSL_would_allow_it()
    {
        // Debian's OpenSSL 3 refuses TLS 1.1 at its default security level, so a server in this
        // process would refuse it whatever we asked. The TLS chat example (SslContext defaults)
        // runs instead with an OpenSSL configuration that allows it, as an older or relaxed system
        // would: there only our own default keeps TLS 1.1 off. (Before SslContext named TLS 1.2
        // and 1.3 itself, this s_client got in with TLS 1.1.)
        var relaxed = Path.Combine(_directory, "relaxed-openssl.cnf");
        await File.WriteAllTextAsync(relaxed, """
            openssl_conf = openssl_init
            [openssl_init]
            ssl_conf = ssl_section
            [ssl_section]
            system_default = system_default_section
            [system_default_section]
            MinProtocol = TLSv1
            CipherString = DEFAULT:@SECLEVEL=0
            """);
        var environment = new Dictionary<string, string> { ["OPENSSL_CONF"] = relaxed };
        await using var server = ProgramProcess.Start("SslChatServer", environment, "0", IPAddress.Loopback.ToString());
        var listening = await server.WaitForLineAsync("Listening on ");
        var port = IPEndPoint.Parse(listening["Listening on ".Length..]).Port;

        // s_client's own security level allows TLS 1.1 too.
        await using (var old = OpenSsl.Start(_directory, "s_client", "-connect", $"127.0.0.1:{port}", "-tls1_1", "-cipher", "DEFAULT:@SECLEVEL=0"))
        {
            await server.WaitForLineAsync("Handshake failed for session ");
            await old.WaitForExitAsync();
            Assert.Contains("Cipher is (NONE)", old.Transcript, StringComparison.Ordinal);
            Assert.DoesNotContain("Secured session", server.Transcript, StringComparison.Ordinal);
        }

        // The same server and configuration serve a client that offers TLS 1.2 or 1.3.
        await using var current = OpenSsl.Start(_directory, "s_client", "-connect", $"127.0.0.1:{port}");
        Assert.Contains(": Tls13, ", await server.WaitForLineAsync("Secured session "), StringComparison.Ordinal);
        await current.WaitForLineAsync(line => line.StartsWith("New, TLSv1.3, Cipher is ", StringComparison.Ordinal), "the TLS 1.3 handshake");
    }

    [Fact]
    public async Task Openssl_s_client_reads_close_notify_when_our_session_disconnects_first()
    {
        await using var bench = new SslEchoServer(TestCertificates.ServerContext());
        await using var openssl = OpenSsl.Start(_directory, "s_client", "-connect", $"127.0.0.1:{bench.Endpoint.Port}", "-CAfile", CaPath, "-verify_return_error", "-msg");

        await openssl.WaitForLineAsync(line => line.Contains("Verify return code: 0 (ok)", StringComparison.Ordinal), "the verified handshake");
        var (session, sessionProbe) = await bench.SessionAsync(0);
        await sessionProbe.HandshakedSignal.Task.WaitAsync(s_timeout);

        // A round trip, then silence: the session's receive loop waits in its read when it closes,
        // the case in which only a TCP FIN used to go out.
        await openssl.WriteLineAsync("before the close");
        await openssl.WaitForLineAsync(l => l.Contains("before the close", StringComparison.Ordinal), "the echo of the line");
        Assert.True(await HarnessExtensions.RunBlocking(session.Disconnect).WaitAsync(s_timeout));
        Assert.Equal(DisconnectReason.LocalDisconnect, await sessionProbe.DisconnectedSignal.Task.WaitAsync(s_timeout));

        // s_client ends on its own once the connection is over; -msg prints each alert it reads ("<<<").
        await openssl.WaitForExitAsync();
        AssertReadCloseNotify(openssl.Transcript);
        Assert.Null(session.DisconnectException);
    }

    // --- our client against openssl s_server ---

    [Fact]
    public async Task Our_client_exchanges_lines_with_openssl_s_server()
    {
        await using var openssl = await OpenSsl.StartServerAsync(_directory, "-cert", ServerCertificatePath, "-key", ServerKeyPath);

        var probe = new Probe { RecordHandshakes = true };
        var received = new ReceivedText(probe);
        var pool = new LeakCheckingBufferPool();
        using (var client = new ProbeSslClient(TestCertificates.ClientContext(), new IPEndPoint(IPAddress.Loopback, openssl.Port), probe) { BufferPool = pool })
        {
            Assert.True(await client.ConnectAsync(CancellationToken.None).WaitAsync(s_timeout), "Our client could not connect to s_server:" + Environment.NewLine + openssl.Transcript);
            Assert.True(client.IsHandshaked);
            Assert.Equal(TestCertificates.Server.Thumbprint, client.Tls!.RemoteCertificate!.GetCertHashString());

            Assert.True(client.SendAsync("from our client\n"));
            await openssl.WaitForLineAsync(line => line.Contains("from our client", StringComparison.Ordinal), "s_server to print our line");

            // Not a line s_server reads as a command (Q, q, P, S, or r/R/k/K/c alone).
            await openssl.WriteLineAsync("from s_server");
            await received.WaitForAsync("from s_server\n");

            Assert.True(client.Disconnect());
            Assert.Equal(DisconnectReason.LocalDisconnect, await probe.DisconnectedSignal.Task.WaitAsync(s_timeout));
            Assert.DoesNotContain(probe.Events, e => e.StartsWith("error:", StringComparison.Ordinal));
        }

        await pool.AssertAllReturnedAsync();
    }

    [Fact]
    public async Task Openssl_s_server_reads_close_notify_when_our_asynchronously_connected_client_disconnects()
    {
        await using var openssl = await OpenSsl.StartServerAsync(_directory, "-cert", ServerCertificatePath, "-key", ServerKeyPath, "-msg");

        var probe = new Probe { RecordHandshakes = true };
        var received = new ReceivedText(probe);
        using var client = new ProbeSslClient(TestCertificates.ClientContext(), new IPEndPoint(IPAddress.Loopback, openssl.Port), probe);
        Assert.True(await client.ConnectAsync(CancellationToken.None).WaitAsync(s_timeout), "Our client could not connect to s_server:" + Environment.NewLine + openssl.Transcript);

        // A line each way, so the client's receive loop is waiting in its read when it closes.
        Assert.True(client.SendAsync("from our client\n"));
        await openssl.WaitForLineAsync(line => line.Contains("from our client", StringComparison.Ordinal), "s_server to print our line");
        await openssl.WriteLineAsync("from s_server");
        await received.WaitForAsync("from s_server\n");

        Assert.True(await HarnessExtensions.RunBlocking(client.Disconnect).WaitAsync(s_timeout));
        Assert.Equal(DisconnectReason.LocalDisconnect, await probe.DisconnectedSignal.Task.WaitAsync(s_timeout));
        Assert.Null(client.DisconnectException);

        // s_server ends the connection with DONE after a close_notify, with ERROR after a bare end of stream.
        var end = await openssl.WaitForLineAsync(line => line is "DONE" or "ERROR", "s_server to end the connection");
        AssertReadCloseNotify(openssl.Transcript);
        Assert.Equal("DONE", end);
    }

    [Fact]
    public async Task Our_client_with_a_certificate_is_accepted_by_openssl_s_server_that_requires_one()
    {
        await using var openssl = await OpenSsl.StartServerAsync(_directory, "-cert", ServerCertificatePath, "-key", ServerKeyPath, "-Verify", "1", "-CAfile", CaPath);

        var probe = new Probe { RecordHandshakes = true };
        var received = new ReceivedText(probe);
        using var client = new ProbeSslClient(TestCertificates.ClientContext(TestCertificates.Client), new IPEndPoint(IPAddress.Loopback, openssl.Port), probe);
        Assert.True(await client.ConnectAsync(CancellationToken.None).WaitAsync(s_timeout), "Our client could not connect to s_server:" + Environment.NewLine + openssl.Transcript);

        // s_server verified our certificate (its subject is printed as the peer's)...
        Assert.True(client.SendAsync("authenticated client\n"));
        await openssl.WaitForLineAsync(line => line.Contains("authenticated client", StringComparison.Ordinal), "s_server to print our line");
        Assert.Contains("NetServer Tests Client", openssl.Transcript, StringComparison.Ordinal);

        // ...and the connection carries data both ways.
        await openssl.WriteLineAsync("welcome, authenticated client");
        await received.WaitForAsync("welcome, authenticated client\n");
        Assert.True(client.IsHandshaked);
        Assert.True(client.Disconnect());
    }

    [Fact]
    public async Task Our_client_without_a_certificate_is_refused_by_openssl_s_server_that_requires_one()
    {
        await using var openssl = await OpenSsl.StartServerAsync(_directory, "-cert", ServerCertificatePath, "-key", ServerKeyPath, "-Verify", "1", "-CAfile", CaPath);

        var probe = new Probe { RecordHandshakes = true };
        var received = new ReceivedText(probe);
        using var client = new ProbeSslClient(TestCertificates.ClientContext(), new IPEndPoint(IPAddress.Loopback, openssl.Port), probe);
        try
        {
            await client.ConnectAsync(CancellationToken.None).WaitAsync(s_timeout);
        }
        catch (Exception e) when (e is AuthenticationException or IOException)
        {
            // Over TLS 1.2 the refusal ends our handshake; over TLS 1.3 our side of the handshake
            // is done before s_server has looked for our certificate, and its alert ends the connection.
        }

        var reason = await probe.DisconnectedSignal.Task.WaitAsync(s_timeout);
        Assert.False(client.IsConnected);
        if (probe.HandshakeFailedSignal.Task.IsCompleted)
            Assert.Equal(DisconnectReason.HandshakeFailed, reason);
        else
            Assert.NotEqual(DisconnectReason.LocalDisconnect, reason);
        Assert.Equal(string.Empty, received.Text);
        await Wait.UntilAsync(() => openssl.Transcript.Contains("peer did not return a certificate", StringComparison.OrdinalIgnoreCase), "s_server to report the missing certificate", s_timeout);
    }

    [Fact]
    public async Task Our_client_trusting_the_root_alone_accepts_openssl_s_server_that_sends_leaf_and_intermediate()
    {
        await using var openssl = await OpenSsl.StartServerAsync(_directory, "-cert", ChainedServerCertificatePath, "-key", ChainedServerKeyPath, "-cert_chain", IntermediatePath);

        var probe = new Probe { RecordHandshakes = true };
        var received = new ReceivedText(probe);
        using var client = new ProbeSslClient(TestCertificates.ClientContext(), new IPEndPoint(IPAddress.Loopback, openssl.Port), probe);
        Assert.True(await client.ConnectAsync(CancellationToken.None).WaitAsync(s_timeout), "Our client refused s_server's chain:" + Environment.NewLine + client.DisconnectException + Environment.NewLine + openssl.Transcript);
        Assert.Equal(TestCertificates.ChainedServer.Thumbprint, client.Tls!.RemoteCertificate!.GetCertHashString());

        await openssl.WriteLineAsync("chain accepted");
        await received.WaitForAsync("chain accepted\n");
        Assert.True(client.Disconnect());
    }

    /// <summary>
    /// Checks an openssl transcript (with <c>-msg</c>) for a close_notify alert read from our side
    /// ("&lt;&lt;&lt; TLS 1.3, Alert [length 0002], warning close_notify") and for the absence of
    /// the error it reports when the connection ends without one.
    /// </summary>
    private static void AssertReadCloseNotify(string transcript)
    {
        var lines = transcript.Split(Environment.NewLine);
        Assert.True(
            Array.Exists(lines, line => line.StartsWith("<<< ", StringComparison.Ordinal) && line.Contains("close_notify", StringComparison.Ordinal)),
            "openssl read no close_notify from our side:" + Environment.NewLine + transcript);
        Assert.DoesNotContain("unexpected eof", transcript, StringComparison.OrdinalIgnoreCase);
    }

    /// <summary>Collects what a client probe receives, as text.</summary>
    private sealed class ReceivedText
    {
        private readonly StringBuilder _text = new();

        public ReceivedText(Probe probe) => probe.Received = (_, buffer, offset, size) =>
        {
            lock (_text)
                _text.Append(Encoding.ASCII.GetString(buffer, (int)offset, (int)size));
        };

        public string Text
        {
            get
            {
                lock (_text)
                    return _text.ToString();
            }
        }

        public Task WaitForAsync(string expected) => Wait.UntilAsync(() => Text.Contains(expected, StringComparison.Ordinal), $"our client to receive \"{expected.TrimEnd()}\"", s_timeout);
    }

    /// <summary>
    /// The <c>openssl</c> tool as a child process: its stdin written by line, its stdout and stderr
    /// read by line (stdout lines can be waited for), every wait bounded, killed when disposed.
    /// </summary>
    private sealed class OpenSsl : IAsyncDisposable
    {
        private readonly Process _process;
        private readonly Channel<string> _lines = Channel.CreateUnbounded<string>();
        private readonly ConcurrentQueue<string> _transcript = new();

        private OpenSsl(Process process)
        {
            _process = process;
            _process.OutputDataReceived += (_, e) => OnOutput(e.Data, stdout: true);
            _process.ErrorDataReceived += (_, e) => OnOutput(e.Data, stdout: false);
            _process.BeginOutputReadLine();
            _process.BeginErrorReadLine();
        }

        /// <summary>The port an <c>s_server</c> listens on.</summary>
        public int Port { get; private set; }

        public string Transcript => string.Join(Environment.NewLine, _transcript);

        public static OpenSsl Start(string directory, params string[] args)
        {
            var info = new ProcessStartInfo(FindTool())
            {
                UseShellExecute = false,
                RedirectStandardInput = true,
                RedirectStandardOutput = true,
                RedirectStandardError = true,
                WorkingDirectory = directory,
                StandardInputEncoding = new UTF8Encoding(encoderShouldEmitUTF8Identifier: false),
                StandardOutputEncoding = Encoding.UTF8,
                StandardErrorEncoding = Encoding.UTF8,
            };
            foreach (var arg in args)
                info.ArgumentList.Add(arg);
            return new OpenSsl(Process.Start(info) ?? throw new InvalidOperationException("openssl did not start"));
        }

        /// <summary>
        /// Starts <c>openssl s_server</c> on a free loopback port (found by binding port 0 and
        /// letting it go; another process may take it meanwhile, so a failed bind is retried on
        /// another port) and returns once it listens ("ACCEPT").
        /// </summary>
        public static async Task<OpenSsl> StartServerAsync(string directory, params string[] args)
        {
            var transcripts = new StringBuilder();
            for (var attempt = 0; attempt < 5; attempt++)
            {
                int port;
                using (var probe = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp))
                {
                    probe.Bind(new IPEndPoint(IPAddress.Loopback, 0));
                    port = ((IPEndPoint)probe.LocalEndPoint!).Port;
                }

                var server = Start(directory, ["s_server", "-accept", $"127.0.0.1:{port}", .. args]);
                var listening = false;
                try
                {
                    listening = await server.TryWaitForLineAsync(line => line == "ACCEPT") is not null;
                }
                finally
                {
                    if (!listening)
                    {
                        transcripts.AppendLine(server.Transcript);
                        await server.DisposeAsync();
                    }
                }

                if (listening)
                {
                    server.Port = port;
                    return server;
                }
            }

            Assert.Fail("openssl s_server did not start listening in 5 attempts:" + Environment.NewLine + transcripts);
            return null!;
        }

        public async Task WriteLineAsync(string line)
        {
            // "\n" only: s_client and s_server pass stdin on byte for byte.
            await _process.StandardInput.WriteAsync(line + "\n").WaitAsync(s_timeout);
            await _process.StandardInput.FlushAsync().WaitAsync(s_timeout);
        }

        /// <summary>
        /// Waits for a stdout line matching <paramref name="match"/> (earlier lines are skipped); fails
        /// the test on timeout or exit. openssl writes the peer's data unbuffered and its own reports
        /// through a buffer, so data can land in the middle of a report line: match data with Contains.
        /// </summary>
        public async Task<string> WaitForLineAsync(Func<string, bool> match, string what) =>
            await TryWaitForLineAsync(match)
            ?? throw new Xunit.Sdk.XunitException($"openssl exited before {what}. Output:{Environment.NewLine}{Transcript}");

        /// <summary>As <see cref="WaitForLineAsync"/>, but null when openssl exits first.</summary>
        private async Task<string?> TryWaitForLineAsync(Func<string, bool> match)
        {
            using var timeout = new CancellationTokenSource(s_timeout);
            try
            {
                while (await _lines.Reader.WaitToReadAsync(timeout.Token))
                {
                    while (_lines.Reader.TryRead(out var line))
                    {
                        if (match(line))
                            return line;
                    }
                }
            }
            catch (OperationCanceledException)
            {
                Assert.Fail($"No matching openssl output within {s_timeout.TotalSeconds} s. Output:{Environment.NewLine}{Transcript}");
            }

            return null;
        }

        /// <summary>Waits (bounded) for openssl to end on its own.</summary>
        public async Task WaitForExitAsync()
        {
            try
            {
                await _process.WaitForExitAsync().WaitAsync(s_timeout);
            }
            catch (TimeoutException)
            {
                Assert.Fail($"openssl did not exit within {s_timeout.TotalSeconds} s. Output:{Environment.NewLine}{Transcript}");
            }
        }

        public async ValueTask DisposeAsync()
        {
            try
            {
                if (!_process.HasExited)
                {
                    _process.Kill(entireProcessTree: true);
                    await _process.WaitForExitAsync().WaitAsync(s_timeout);
                }
            }
            finally
            {
                _process.Dispose();
            }
        }

        private static string FindTool()
        {
            foreach (var folder in (Environment.GetEnvironmentVariable("PATH") ?? "").Split(Path.PathSeparator, StringSplitOptions.RemoveEmptyEntries))
            {
                var candidate = Path.Combine(folder, "openssl");
                if (File.Exists(candidate))
                    return candidate;
            }

            if (File.Exists("/usr/bin/openssl"))
                return "/usr/bin/openssl";
            Assert.Fail("The openssl command-line tool was not found on PATH or at /usr/bin/openssl. It is part of Debian's base system; install it with `apt-get install openssl`.");
            return null!;
        }

        private void OnOutput(string? line, bool stdout)
        {
            if (line is null)
            {
                if (stdout)
                    _lines.Writer.TryComplete();
                return;
            }

            _transcript.Enqueue(stdout ? line : "stderr: " + line);
            if (stdout)
                _lines.Writer.TryWrite(line);
        }
    }
}
