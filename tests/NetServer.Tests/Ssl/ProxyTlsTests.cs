using System.Net;
using System.Net.Security;
using System.Net.Sockets;
using System.Text;
using System.Threading.Tasks;
using NetServer.Tests.Infrastructure;
using NetServer.Tests.Proxy;
using Xunit;

namespace NetServer.Tests.Ssl;

/// <summary>
/// The PROXY header in front of TLS: the header comes in clear, the handshake after it, and the
/// session sees the real client. (Here rather than in Proxy/: the netstandard2.0 test build, which
/// has no TLS types, leaves out Ssl/.)
/// </summary>
public sealed class ProxyTlsTests
{
    private static readonly IPEndPoint s_client = new(IPAddress.Parse("203.0.113.7"), 4242);
    private static readonly IPEndPoint s_front = new(IPAddress.Parse("198.51.100.1"), 443);

    [Fact]
    public async Task Tls_starts_after_the_header()
    {
        using var server = new ProxySslServer(new IPEndPoint(IPAddress.Loopback, 0)) { OptionProxyProtocol = ProxyProtocolMode.Required };
        server.OptionProxyTrustedNetworks.Add("127.0.0.1");
        Assert.True(server.Start());
        using var socket = await ProxyHeaders.ConnectAsync(server.Endpoint);
        await socket.SendAsync(ProxyHeaders.V2(s_client, s_front), SocketFlags.None).WaitAsync(Wait.Default);

        await using var tls = new SslStream(new NetworkStream(socket, ownsSocket: false));
        await tls.AuthenticateAsClientAsync(new SslClientAuthenticationOptions
        {
            TargetHost = "localhost",
            RemoteCertificateValidationCallback = (_, certificate, _, _) => certificate is not null,
        }).WaitAsync(Wait.Default);
        await tls.WriteAsync(Encoding.ASCII.GetBytes("secret")).AsTask().WaitAsync(Wait.Default);
        var reply = new byte[6];
        await tls.ReadExactlyAsync(reply).AsTask().WaitAsync(Wait.Default);
        Assert.Equal("secret", Encoding.ASCII.GetString(reply));
        Assert.Equal(s_client, (await (await server.Seen.TakeAsync()).First).Remote);
    }
}

internal sealed class ProxySslSession(SslServer server, ProxySeen seen) : SslSession(server)
{
    protected override void OnConnecting() => seen.Connecting(this);

    protected override void OnConnected() => seen.Connected = true;

    protected override void OnReceived(byte[] buffer, long offset, long size) => SendAsync(buffer, offset, size);

    protected override void OnDisconnected(DisconnectReason reason) => seen.Disconnected(this, reason);
}

internal sealed class ProxySslServer(IPEndPoint endpoint) : SslServer(TestCertificates.ServerContext(), endpoint)
{
    public readonly SessionLog Seen = new();

    protected override SslSession CreateSession() => new ProxySslSession(this, Seen.Next());
}
