using System.Collections.Concurrent;
using System.Net.Security;
using System.Security.Authentication;
using System.Security.Cryptography.X509Certificates;
using System.Threading.Tasks;
using NetServer.Tests.Infrastructure;
using Xunit;

namespace NetServer.Tests.Ssl;

/// <summary>
/// What an <see cref="SslContext"/> makes of its settings: certificate chains through an
/// intermediate CA (sent by our server, validated by our client against the root alone), the
/// protocols its default stands for, and who decides about a missing client certificate.
/// (The same against OpenSSL is in <see cref="OpenSslInteropTests"/>.)
/// </summary>
public class SslContextTests
{
    [Net10Fact("netstandard2.1 has no SslStreamCertificateContext to send intermediates with")]
    public async Task A_server_sends_the_intermediates_in_Certificates_and_a_client_trusting_only_the_root_accepts_the_chain()
    {
        // The intermediate without its key, as a chain file gives it, and first: the leaf is the one with a key.
        using var intermediate = X509CertificateLoader.LoadCertificate(TestCertificates.Intermediate.RawData);
        var context = new SslContext(SslProtocols.None, new X509Certificate2Collection { intermediate, TestCertificates.ChainedServer });
        await using var bench = new SslEchoServer(context);

        var seen = new ConcurrentQueue<string>();
        var client = TestCertificates.ClientContext(); // trusts TestCertificates.Authority, the root
        var tls = await bench.AssertServesAsync(client);
        Assert.Equal(TestCertificates.ChainedServer.Thumbprint, tls.Client.RemoteCertificate!.GetCertHashString());

        // The intermediate came over the wire: a validation callback sees it in the handshake's chain.
        var pinned = TestCertificates.ChainedServer.Thumbprint;
        var inspecting = new SslContext(SslProtocols.None, (_, certificate, chain, _) =>
        {
            foreach (var element in chain!.ChainPolicy.ExtraStore)
                seen.Enqueue(element.Subject);
            return certificate?.GetCertHashString() == pinned;
        });
        await bench.AssertServesAsync(inspecting);
        Assert.Contains(TestCertificates.Intermediate.Subject, seen);
    }

    [Net10Fact("netstandard2.1 has no SslStreamCertificateContext to send intermediates with")]
    public async Task A_certificate_for_a_host_name_goes_out_with_its_intermediate_from_Certificates()
    {
        using var intermediate = X509CertificateLoader.LoadCertificate(TestCertificates.Intermediate.RawData);
        using var chainedHost = TestCertificates.Issue(TestCertificates.Intermediate, "a.test", server: true, hostNames: ["a.test"]);
        var context = TestCertificates.ServerContext(); // default certificate: issued by the root itself
        context.Certificates = [intermediate];
        context.AddServerCertificate("a.test", chainedHost);
        await using var bench = new SslEchoServer(context);

        var named = await bench.AssertServesAsync(TestCertificates.ClientContext(), "a.test");
        Assert.Equal(chainedHost.Thumbprint, named.Client.RemoteCertificate!.GetCertHashString());
        var unnamed = await bench.AssertServesAsync(TestCertificates.ClientContext());
        Assert.Equal(TestCertificates.Server.Thumbprint, unnamed.Client.RemoteCertificate!.GetCertHashString());
    }

    [Fact]
    public async Task Without_its_intermediate_a_chained_certificate_is_refused_by_a_client_trusting_only_the_root()
    {
        // The other side of the two tests above: the chain is what makes the leaf acceptable.
        await using var bench = new SslEchoServer(new SslContext(SslProtocols.None, TestCertificates.ChainedServer));

        var probe = new Probe { RecordHandshakes = true };
        using var client = bench.CreateClient(TestCertificates.ClientContext(), probe);
        await Assert.ThrowsAnyAsync<AuthenticationException>(() => client.ConnectAsync(System.Threading.CancellationToken.None).WaitAsync(Wait.Default));
        Assert.Equal(DisconnectReason.HandshakeFailed, await probe.DisconnectedSignal.Task.WaitAsync(Wait.Default));
    }

    [Net10Fact("netstandard2.1 has no SslStreamCertificateContext to send intermediates with")]
    public async Task A_client_sends_the_intermediates_in_Certificates_and_a_server_trusting_only_the_root_accepts_the_chain()
    {
        // Our server requires a client certificate and trusts TestCertificates.Authority, the root, alone.
        await using var bench = new SslEchoServer(TestCertificates.ServerContext(SslClientCertificateMode.Required));
        using var intermediate = X509CertificateLoader.LoadCertificate(TestCertificates.Intermediate.RawData);
        var client = TestCertificates.ClientContext();
        client.Certificates = [intermediate, TestCertificates.ChainedClient];

        var tls = await bench.AssertServesAsync(client);
        Assert.Equal(TestCertificates.ChainedClient.Thumbprint, tls.Session.RemoteCertificate!.GetCertHashString());

        // The same leaf as Certificate, with the intermediate in Certificates: the same chain.
        var split = TestCertificates.ClientContext(TestCertificates.ChainedClient);
        split.Certificates = [intermediate];
        tls = await bench.AssertServesAsync(split);
        Assert.Equal(TestCertificates.ChainedClient.Thumbprint, tls.Session.RemoteCertificate!.GetCertHashString());
    }

    [Fact]
    public async Task Without_its_intermediate_a_chained_client_certificate_is_refused_by_a_server_trusting_only_the_root()
    {
        await using var bench = new SslEchoServer(TestCertificates.ServerContext(SslClientCertificateMode.Required));
        var probe = new Probe { RecordHandshakes = true };
        using var client = bench.CreateClient(TestCertificates.ClientContext(TestCertificates.ChainedClient), probe);

        // TLS 1.3 sends the client's certificate after the client considers the handshake done: the
        // refusal may come as a failed handshake or as the server closing the connection at once.
        try
        {
            await client.ConnectAsync(System.Threading.CancellationToken.None).WaitAsync(Wait.Default);
        }
        catch (System.Exception e) when (e is AuthenticationException or System.IO.IOException)
        {
        }

        var (session, sessionProbe) = await bench.SessionAsync(0);
        Assert.Equal(DisconnectReason.HandshakeFailed, await sessionProbe.DisconnectedSignal.Task.WaitAsync(Wait.Default));
        Assert.IsAssignableFrom<AuthenticationException>(session.DisconnectException);
        await probe.DisconnectedSignal.Task.WaitAsync(Wait.Default);
    }

    [Fact]
    public void Protocols_None_stays_None_and_stands_for_TLS_1_2_and_1_3()
    {
        var context = new SslContext();
        Assert.Equal(SslProtocols.None, context.Protocols);
        Assert.Equal(SslProtocols.Tls12 | SslProtocols.Tls13, context.CreateClientOptions("localhost").EnabledSslProtocols);

        context.Certificate = TestCertificates.Server;
        Assert.Equal(SslProtocols.Tls12 | SslProtocols.Tls13, context.CreateServerOptions().EnabledSslProtocols);

        // A choice of the user's is passed on as it is.
        context.Protocols = SslProtocols.Tls13;
        Assert.Equal(SslProtocols.Tls13, context.CreateClientOptions("localhost").EnabledSslProtocols);
        Assert.Equal(SslProtocols.Tls13, context.CreateServerOptions().EnabledSslProtocols);
    }

    [Fact]
    public async Task A_validation_callback_decides_alone_about_a_missing_required_client_certificate()
    {
        // The documented contract: DangerousAcceptAnyCertificate does not waive Required, a callback does.
        var asked = new ConcurrentQueue<SslPolicyErrors>();
        var context = new SslContext(SslProtocols.None, TestCertificates.Server, (_, certificate, _, errors) =>
        {
            asked.Enqueue(errors);
            return certificate is null;
        })
        {
            ClientCertificateMode = SslClientCertificateMode.Required,
        };
        await using var bench = new SslEchoServer(context);

        var anonymous = await bench.AssertServesAsync(TestCertificates.ClientContext());
        Assert.Null(anonymous.Session.RemoteCertificate);
        Assert.Contains(asked, errors => (errors & SslPolicyErrors.RemoteCertificateNotAvailable) != 0);
    }

#if !NETSERVER_NETSTANDARD21 // cipher suite policies are net10.0 properties
    [Fact]
    [System.Runtime.Versioning.UnsupportedOSPlatform("windows")] // where a policy cannot be made
    public void By_default_both_sides_are_given_the_AEAD_suites_and_a_context_can_hand_the_choice_back_to_the_system()
    {
        // Every default suite is an AEAD one (GCM, ChaCha20-Poly1305, CCM); none is CBC or RSA key exchange.
        Assert.All(SslContext.DefaultCipherSuites, suite => Assert.Matches("_(GCM|CHACHA20_POLY1305|CCM)_SHA(256|384)$", suite.ToString()));
        Assert.All(SslContext.DefaultCipherSuites, suite => Assert.Matches("^TLS_(AES|CHACHA20|ECDHE_(ECDSA|RSA)_WITH)_", suite.ToString()));

        var context = TestCertificates.ServerContext();
        Assert.Null(context.CipherSuitesPolicy);
        Assert.False(context.UseSystemCipherSuites);
        var server = context.CreateServerOptions().CipherSuitesPolicy;
        var client = context.CreateClientOptions("localhost").CipherSuitesPolicy;
        Assert.NotNull(server); // Linux and macOS; Windows would have none
        Assert.Same(server, client);
        Assert.Equal(SslContext.DefaultCipherSuites, server!.AllowedCipherSuites);

        context.UseSystemCipherSuites = true;
        Assert.Null(context.CreateServerOptions().CipherSuitesPolicy);
        Assert.Null(context.CreateClientOptions("localhost").CipherSuitesPolicy);
    }
#endif
}
