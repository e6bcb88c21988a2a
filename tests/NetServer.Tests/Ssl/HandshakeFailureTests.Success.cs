using System;
using System.Collections.Concurrent;
using System.IO;
using System.Linq;
using System.Net;
using System.Net.Security;
using System.Security.Authentication;
using System.Text;
using System.Threading;
using System.Threading.Tasks;
using NetServer.Tests.Infrastructure;
using Xunit;

namespace NetServer.Tests.Ssl;

/// <summary>Handshakes that succeed: hook order, protocols, ALPN, SNI; and a server without a certificate.</summary>
public partial class HandshakeFailureTests
{
    // --- A successful handshake ---

    [Fact]
    public async Task Hooks_run_connect_handshake_data_disconnect_in_order_and_sends_from_OnConnected_go_out_after_the_handshake()
    {
        var states = new ConcurrentQueue<string>();
        await using var bench = new SslEchoServer(TestCertificates.ServerContext(), probe =>
        {
            probe.Connected = c =>
            {
                var session = (SslSession)c;
                states.Enqueue($"session-connected handshaked={session.IsHandshaked} tls={session.Tls is not null} queued={session.SendAsync("welcome|")}");
            };
            probe.Handshaked = c =>
            {
                var session = (SslSession)c;
                states.Enqueue($"session-handshaked handshaked={session.IsHandshaked} tls={session.Tls is not null}");
            };
        });

        var probe = new Probe { RecordHandshakes = true };
        var received = new MemoryStream();
        probe.Received = (_, buffer, offset, size) =>
        {
            lock (received)
                received.Write(buffer, (int)offset, (int)size);
        };
        using var client = bench.CreateClient(TestCertificates.ClientContext(), probe);
        probe.Connected = _ => states.Enqueue($"client-connected handshaked={client.IsHandshaked} tls={client.Tls is not null} queued={client.SendAsync("hello")}");
        probe.Handshaked = _ => states.Enqueue($"client-handshaked handshaked={client.IsHandshaked} tls={client.Tls is not null}");

        Assert.True(await client.ConnectAsync(CancellationToken.None).WaitAsync(Wait.Default));
        Assert.True(client.IsHandshaked);
        Assert.False(client.IsHandshaking);

        // Both sends were queued before the handshake and arrive whole and in order after it.
        var expected = Encoding.ASCII.GetBytes("welcome|hello");
        await Wait.UntilAsync(() => probe.ReceivedBytes >= expected.Length, "the welcome and the echo");
        lock (received)
            Assert.Equal(expected, received.ToArray());

        var (session, sessionProbe) = await bench.SessionAsync(0);
        Assert.True(((SslSession)session).IsHandshaked);
        Assert.True(client.Disconnect());
        Assert.Equal(DisconnectReason.LocalDisconnect, await probe.DisconnectedSignal.Task.WaitAsync(Wait.Default));
        Assert.Equal(DisconnectReason.PeerClosed, await sessionProbe.DisconnectedSignal.Task.WaitAsync(Wait.Default));
        Assert.False(client.IsHandshaked);

        string[] order = ["connecting", "connected", "handshaking", "handshaked", "received", "disconnecting", "disconnected"];
        Assert.Equal(order, Collapse(await SettledEventsAsync(probe, "disconnected")));
        Assert.Equal(order, Collapse(await SettledEventsAsync(sessionProbe, "disconnected")));
        await Wait.UntilAsync(() => bench.Probe.Events.Contains("disconnected"), "the server's OnDisconnected");
        Assert.Equal(["started", "connected", "handshaked", "disconnected"], bench.Probe.Events.ToArray());

        var all = states.ToArray();
        Assert.Contains("session-connected handshaked=False tls=False queued=True", all);
        Assert.Contains("session-handshaked handshaked=True tls=True", all);
        Assert.Contains("client-connected handshaked=False tls=False queued=True", all);
        Assert.Contains("client-handshaked handshaked=True tls=True", all);
        Assert.Equal(4, all.Length);
    }

    [Theory]
    [InlineData(SslProtocols.Tls12)]
    [InlineData(SslProtocols.Tls13)]
    public async Task A_context_limited_to_one_protocol_negotiates_that_protocol(SslProtocols protocol)
    {
        var serverContext = TestCertificates.ServerContext();
        serverContext.Protocols = protocol;
        await using var bench = new SslEchoServer(serverContext);

        // A client that lets the system choose, and one limited the same way.
        var limited = TestCertificates.ClientContext();
        limited.Protocols = protocol;
        foreach (var clientContext in new[] { TestCertificates.ClientContext(), limited })
        {
            var tls = await bench.AssertServesAsync(clientContext);
            Assert.Equal(protocol, tls.Session.Protocol);
            Assert.Equal(protocol, tls.Client.Protocol);
#if !NETSERVER_NETSTANDARD21 // the cipher suite is a net10.0 property
            Assert.Equal(tls.Session.CipherSuite, tls.Client.CipherSuite);
#endif
        }
    }

    [Fact]
    public async Task Alpn_picks_the_servers_first_protocol_that_the_client_offers()
    {
        var serverContext = TestCertificates.ServerContext();
        serverContext.ApplicationProtocols.Add(SslApplicationProtocol.Http2);
        serverContext.ApplicationProtocols.Add(SslApplicationProtocol.Http11);
        await using var bench = new SslEchoServer(serverContext);

        var clientContext = TestCertificates.ClientContext();
        clientContext.ApplicationProtocols.Add(SslApplicationProtocol.Http11);
        var tls = await bench.AssertServesAsync(clientContext);
        Assert.Equal(SslApplicationProtocol.Http11, tls.Session.ApplicationProtocol);
        Assert.Equal(SslApplicationProtocol.Http11, tls.Client.ApplicationProtocol);

        // A client without ALPN gets none.
        var none = await bench.AssertServesAsync(TestCertificates.ClientContext());
        Assert.Equal(default, none.Session.ApplicationProtocol);
    }

    [Fact]
    public async Task Sni_serves_the_certificate_registered_for_the_host_name_exact_or_wildcard()
    {
        using var certA = TestCertificates.Issue(TestCertificates.Authority, "a.test", server: true, hostNames: ["a.test"]);
        using var certB = TestCertificates.Issue(TestCertificates.Authority, "wildcard b.test", server: true, hostNames: ["*.b.test"]);
        var context = TestCertificates.ServerContext();
        context.AddServerCertificate("a.test", certA);
        context.AddServerCertificate("*.b.test", certB);
        await using var bench = new SslEchoServer(context);

        foreach (var (host, expected) in new[] { ("a.test", certA), ("x.b.test", certB), ("localhost", TestCertificates.Server) })
        {
            var tls = await bench.AssertServesAsync(TestCertificates.ClientContext(), host);
            Assert.Equal(expected.Thumbprint, tls.Client.RemoteCertificate!.GetCertHashString());
#if !NETSERVER_NETSTANDARD21 // a server learns the name the client asked for from SslStream.TargetHostName (net5.0+)
            Assert.Equal(host, tls.Session.HostName);
#endif
            Assert.Equal(host, tls.Client.HostName);
        }

        // A client that sends no name (an IP address is not sent as SNI) gets the default certificate.
        var unnamed = await bench.AssertServesAsync(TestCertificates.ClientContext());
        Assert.Equal(TestCertificates.Server.Thumbprint, unnamed.Client.RemoteCertificate!.GetCertHashString());
        Assert.Null(unnamed.Session.HostName);
    }

    [Fact]
    public async Task Sni_consults_the_selection_callback_first_and_falls_back_to_the_host_map()
    {
        using var certA = TestCertificates.Issue(TestCertificates.Authority, "a.test", server: true, hostNames: ["a.test"]);
        using var chosen = TestCertificates.Issue(TestCertificates.Authority, "a.test chosen", server: true, hostNames: ["a.test"]);
        using var certB = TestCertificates.Issue(TestCertificates.Authority, "wildcard b.test", server: true, hostNames: ["*.b.test"]);
        var asked = new ConcurrentQueue<string>();
        var context = TestCertificates.ServerContext();
        context.AddServerCertificate("a.test", certA);
        context.AddServerCertificate("*.b.test", certB);
        context.ServerCertificateSelectionCallback = (_, hostName) =>
        {
            asked.Enqueue(hostName ?? "(none)");
            return hostName == "a.test" ? chosen : null!; // null falls back (the delegate type predates nullable annotations)
        };
        await using var bench = new SslEchoServer(context);

        var a = await bench.AssertServesAsync(TestCertificates.ClientContext(), "a.test");
        Assert.Equal(chosen.Thumbprint, a.Client.RemoteCertificate!.GetCertHashString());
        var b = await bench.AssertServesAsync(TestCertificates.ClientContext(), "x.b.test");
        Assert.Equal(certB.Thumbprint, b.Client.RemoteCertificate!.GetCertHashString());
        Assert.Contains("a.test", asked);
        Assert.Contains("x.b.test", asked);
    }

    [Fact]
    public void Starting_an_SslServer_without_a_certificate_throws_a_clear_InvalidOperationException()
    {
        using var server = new SslServer(new SslContext(), IPAddress.Loopback, 0);
        var error = Assert.Throws<InvalidOperationException>(() => server.Start());
        Assert.Contains("certificate", error.Message, StringComparison.OrdinalIgnoreCase);
        Assert.Contains("SslContext", error.Message, StringComparison.Ordinal);
        Assert.False(server.IsStarted);

        // The same server starts once it has one.
        server.Context.Certificate = TestCertificates.Server;
        Assert.True(server.Start());
        Assert.True(server.Stop());
    }
}
