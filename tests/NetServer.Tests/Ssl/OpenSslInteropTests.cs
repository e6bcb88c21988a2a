using System;
using System.Collections.Generic;
using System.IO;
using System.Net;
using System.Security.Authentication;
using System.Security.Cryptography.X509Certificates;
using System.Text;
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
}
