using System.Collections.Concurrent;
using System.Net.Security;
using System.Security.Authentication;
using System.Threading.Tasks;
using NetServer.Tests.Infrastructure;
using Xunit;

namespace NetServer.Tests.Ssl;

/// <summary>
/// What an <see cref="SslContext"/> makes of its settings: the protocols its default stands for,
/// and who decides about a missing client certificate.
/// </summary>
public class SslContextTests
{
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
}
