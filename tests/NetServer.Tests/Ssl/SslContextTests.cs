using System.Collections.Concurrent;
using System.Net.Security;
using System.Security.Authentication;
using System.Threading.Tasks;
using NetServer.Tests.Infrastructure;
using Xunit;

namespace NetServer.Tests.Ssl;

/// <summary>
/// What an <see cref="SslContext"/> makes of its settings: who decides about a missing client certificate.
/// </summary>
public class SslContextTests
{
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
