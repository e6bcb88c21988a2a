using System;
using System.Net;
using System.Net.Security;
using System.Security.Authentication;
using System.Threading.Tasks;
using NetServer.Tests.Infrastructure;
using Xunit;

namespace NetServer.Tests.Ssl;

/// <summary>
/// Cipher suites against openssl: by default only AEAD suites (AES-GCM, ChaCha20-Poly1305; ECDHE
/// for TLS 1.2), on both sides, although Debian's OpenSSL would also agree on CBC suites over
/// TLS 1.2; <c>SslContext.CipherSuitesPolicy</c> and <c>UseSystemCipherSuites</c> (net10.0 build)
/// widen the choice. The in-process certificates are ECDSA ones, so the CBC offers name ECDSA suites
/// next to the RSA ones of the TLS chat example's certificate.
/// </summary>
public sealed partial class OpenSslInteropTests
{
    // Only CBC suites, over TLS 1.2 only: RSA key exchange, and ECDHE with RSA and ECDSA certificates.
    private const string CbcOnly = "AES128-SHA:ECDHE-RSA-AES128-SHA256:ECDHE-ECDSA-AES128-SHA:ECDHE-ECDSA-AES128-SHA256";

    [Net10Fact("netstandard2.1 has no CipherSuitesPolicy: the system's suites apply")]
    public async Task Openssl_s_client_offering_only_CBC_suites_is_refused_by_default_and_the_server_goes_on_serving()
    {
        await using var bench = new SslEchoServer(TestCertificates.ServerContext());
        await using (var cbc = OpenSsl.Start(_directory, "s_client", "-connect", $"127.0.0.1:{bench.Endpoint.Port}", "-tls1_2", "-cipher", CbcOnly))
        {
            var (session, sessionProbe) = await bench.SessionAsync(0);
            Assert.IsAssignableFrom<AuthenticationException>(await sessionProbe.HandshakeFailedSignal.Task.WaitAsync(s_timeout));
            Assert.Equal(DisconnectReason.HandshakeFailed, await sessionProbe.DisconnectedSignal.Task.WaitAsync(s_timeout));
            await cbc.WaitForExitAsync();
            Assert.Contains("Cipher is (NONE)", cbc.Transcript, StringComparison.Ordinal);
            Assert.Null(((SslSession)session).Tls);
        }

        // TLS 1.2 clients that offer one AEAD suite each get it, and their lines echoed.
        var index = 1;
        foreach (var (name, suite) in new[]
        {
            ("ECDHE-ECDSA-AES128-GCM-SHA256", TlsCipherSuite.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256),
            ("ECDHE-ECDSA-AES256-GCM-SHA384", TlsCipherSuite.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384),
            ("ECDHE-ECDSA-CHACHA20-POLY1305", TlsCipherSuite.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256),
        })
        {
            await using var aead = OpenSsl.Start(_directory, "s_client", "-connect", $"127.0.0.1:{bench.Endpoint.Port}", "-tls1_2", "-cipher", name);
            await aead.WaitForLineAsync(line => line == $"New, TLSv1.2, Cipher is {name}", $"the {name} handshake");
            var (session, sessionProbe) = await bench.SessionAsync(index++);
            await sessionProbe.HandshakedSignal.Task.WaitAsync(s_timeout);
            await aead.WriteLineAsync("over " + name);
            await aead.WaitForLineAsync(line => line.Contains("over " + name, StringComparison.Ordinal), "the echo of the line");
#if !NETSERVER_NETSTANDARD21 // the negotiated suite is a net10.0 property (and the test is skipped there)
            Assert.Equal(suite, ((SslSession)session).Tls!.CipherSuite);
#endif
        }

        // TLS 1.3, and our own client (both sides on the defaults).
        var tls = await bench.AssertServesAsync(TestCertificates.ClientContext());
        Assert.Equal(SslProtocols.Tls13, tls.Session.Protocol);
#if !NETSERVER_NETSTANDARD21
        Assert.Contains(tls.Session.CipherSuite, SslContext.DefaultCipherSuites);
#endif
    }

#if !NETSERVER_NETSTANDARD21 // SslContext.CipherSuitesPolicy and UseSystemCipherSuites are net10.0 properties
    [Fact]
    [System.Runtime.Versioning.UnsupportedOSPlatform("windows")] // where a policy cannot be made
    public async Task A_server_whose_context_widens_the_suites_serves_a_CBC_only_client()
    {
        var widened = TestCertificates.ServerContext();
        widened.CipherSuitesPolicy = new CipherSuitesPolicy([.. SslContext.DefaultCipherSuites, TlsCipherSuite.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256]);
        var system = TestCertificates.ServerContext();
        system.UseSystemCipherSuites = true;

        foreach (var (context, expected) in new[] { (widened, "ECDHE-ECDSA-AES128-SHA256"), (system, "ECDHE-ECDSA-AES128-SHA256") })
        {
            await using var bench = new SslEchoServer(context);
            await using var cbc = OpenSsl.Start(_directory, "s_client", "-connect", $"127.0.0.1:{bench.Endpoint.Port}", "-tls1_2", "-cipher", CbcOnly);
            await cbc.WaitForLineAsync(line => line == $"New, TLSv1.2, Cipher is {expected}", "the CBC handshake");
            var (session, sessionProbe) = await bench.SessionAsync(0);
            await sessionProbe.HandshakedSignal.Task.WaitAsync(s_timeout);
            Assert.Equal(TlsCipherSuite.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256, ((SslSession)session).Tls!.CipherSuite);
            await cbc.WriteLineAsync("over CBC");
            await cbc.WaitForLineAsync(line => line.Contains("over CBC", StringComparison.Ordinal), "the echo of the line");
        }
    }

    [Fact]
    public async Task Our_client_refuses_an_openssl_s_server_that_offers_only_CBC_suites_unless_its_context_allows_them()
    {
        await using var openssl = await OpenSsl.StartServerAsync(
            _directory, "-cert", ServerCertificatePath, "-key", ServerKeyPath, "-no_tls1_3", "-cipher", "ECDHE-ECDSA-AES128-SHA256");

        var refused = new Probe { RecordHandshakes = true };
        using (var client = new ProbeSslClient(TestCertificates.ClientContext(), new IPEndPoint(IPAddress.Loopback, openssl.Port), refused))
        {
            await Assert.ThrowsAsync<AuthenticationException>(() => client.ConnectAsync(System.Threading.CancellationToken.None).WaitAsync(s_timeout));
            Assert.Equal(DisconnectReason.HandshakeFailed, await refused.DisconnectedSignal.Task.WaitAsync(s_timeout));
            Assert.DoesNotContain("handshaked", refused.Events);
        }

        var context = TestCertificates.ClientContext();
        context.UseSystemCipherSuites = true;
        var probe = new Probe();
        using var allowed = new ProbeSslClient(context, new IPEndPoint(IPAddress.Loopback, openssl.Port), probe);
        Assert.True(await allowed.ConnectAsync(System.Threading.CancellationToken.None).WaitAsync(s_timeout), "Our client could not connect to s_server:" + Environment.NewLine + openssl.Transcript);
        Assert.Equal(TlsCipherSuite.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256, allowed.Tls!.CipherSuite);
        Assert.True(allowed.Disconnect());
    }
#endif

    [Net10Fact("it runs the SslChatServer example program, built for net10.0")]
    public async Task The_TLS_chat_example_refuses_a_CBC_only_client_and_serves_an_AEAD_one()
    {
        // The example's certificate (certs/) is an RSA one.
        await using var server = ProgramProcess.Start("SslChatServer", "0", IPAddress.Loopback.ToString());
        var listening = await server.WaitForLineAsync("Listening on ");
        var port = IPEndPoint.Parse(listening["Listening on ".Length..]).Port;

        await using (var cbc = OpenSsl.Start(_directory, "s_client", "-connect", $"127.0.0.1:{port}", "-tls1_2", "-cipher", "AES128-SHA:ECDHE-RSA-AES128-SHA256"))
        {
            await server.WaitForLineAsync("Handshake failed for session ");
            await cbc.WaitForExitAsync();
            Assert.Contains("Cipher is (NONE)", cbc.Transcript, StringComparison.Ordinal);
        }

        await using var aead = OpenSsl.Start(_directory, "s_client", "-connect", $"127.0.0.1:{port}", "-tls1_2", "-cipher", "ECDHE-RSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-SHA256");
        await aead.WaitForLineAsync(line => line == "New, TLSv1.2, Cipher is ECDHE-RSA-AES128-GCM-SHA256", "the AEAD handshake");
        Assert.Contains(": Tls12, TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", await server.WaitForLineAsync("Secured session "), StringComparison.Ordinal);
    }
}
