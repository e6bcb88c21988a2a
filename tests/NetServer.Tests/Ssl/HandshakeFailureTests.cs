using System;
using System.Collections.Concurrent;
using System.Collections.Generic;
using System.Diagnostics;
using System.Globalization;
using System.IO;
using System.Linq;
using System.Net;
using System.Net.Security;
using System.Net.Sockets;
using System.Security.Authentication;
using System.Security.Cryptography.X509Certificates;
using System.Text;
using System.Threading;
using System.Threading.Tasks;
using NetServer.Tests.Infrastructure;
using Xunit;

namespace NetServer.Tests.Ssl;

/// <summary>
/// A failed TLS handshake gives a clear error on the right hook (OnHandshakeFailed, then
/// OnDisconnected with <see cref="DisconnectReason.HandshakeFailed"/>) on the side that refused,
/// ends the other side too, and leaves the server serving: after each failure a good client
/// connects, handshakes and echoes on the same server. Also the successful handshake's contract:
/// hook order, queued sends, protocol choice, ALPN, SNI and validation overrides.
/// </summary>
public class HandshakeFailureTests
{
    /// <summary>Faults of a server certificate that a client must refuse.</summary>
    public enum BadServerCertificate
    {
        UntrustedAuthority,
        Expired,
        OtherHost,
    }

    /// <summary>Faults of a client's certificate (or its absence) that a server must refuse.</summary>
    public enum BadClientCertificate
    {
        Missing,
        UntrustedAuthority,
    }

    // --- The client refuses the server ---

    [Theory]
    [InlineData(BadServerCertificate.UntrustedAuthority, null)]
    [InlineData(BadServerCertificate.Expired, null)]
    [InlineData(BadServerCertificate.OtherHost, null)] // TargetHost defaults to the address, 127.0.0.1
    [InlineData(BadServerCertificate.OtherHost, "localhost")]
    public async Task A_client_refuses_a_bad_server_certificate_and_the_server_keeps_serving(BadServerCertificate fault, string? targetHost)
    {
        await using var bench = new SslEchoServer(new SslContext(SslProtocols.None, ServerCertificate(fault)));

        var probe = new Probe { RecordHandshakes = true };
        using (var client = bench.CreateClient(TestCertificates.ClientContext(), probe))
        {
            if (targetHost is not null)
                client.TargetHost = targetHost;

            var failure = await ConnectRefusedAsync(client);
            Assert.Same(await probe.HandshakeFailedSignal.Task.WaitAsync(Wait.Default), failure);
            Assert.Equal(DisconnectReason.HandshakeFailed, await probe.DisconnectedSignal.Task.WaitAsync(Wait.Default));
            Assert.Equal(DisconnectReason.HandshakeFailed, client.DisconnectReason);
            Assert.Same(failure, client.DisconnectException);
            Assert.False(client.IsConnected);
            Assert.False(client.IsHandshaked);
            Assert.Null(client.Tls);

            var events = await SettledEventsAsync(probe, "disconnected");
            Assert.Equal(["connecting", "connected", "handshaking", "handshake-failed", "disconnecting", "disconnected"], events);
        }

        var (session, sessionProbe) = await bench.SessionAsync(0);
        await AssertSessionSawTheRefusalAsync(session, sessionProbe);

        var (goodContext, goodHost) = ClientAccepting(fault);
        await bench.AssertServesAsync(goodContext, goodHost);
    }

    [Fact]
    public async Task A_client_and_a_server_with_no_protocol_in_common_both_report_a_handshake_failure()
    {
        var serverContext = TestCertificates.ServerContext();
        serverContext.Protocols = SslProtocols.Tls12;
        await using var bench = new SslEchoServer(serverContext);

        var clientContext = TestCertificates.ClientContext();
        clientContext.Protocols = SslProtocols.Tls13;
        var probe = new Probe { RecordHandshakes = true };
        using (var client = bench.CreateClient(clientContext, probe))
        {
            await ConnectRefusedAsync(client);
            Assert.Equal(DisconnectReason.HandshakeFailed, await probe.DisconnectedSignal.Task.WaitAsync(Wait.Default));
            Assert.IsAssignableFrom<AuthenticationException>(client.DisconnectException);
        }

        var (session, sessionProbe) = await bench.SessionAsync(0);
        await AssertSessionHandshakeFailedAsync(session, sessionProbe);
        await bench.AssertServesAsync(TestCertificates.ClientContext());
    }

    [Fact]
    public async Task ConnectAsync_with_a_token_throws_the_handshake_failure_however_early_the_handshake_fails()
    {
        await using var bench = new SslEchoServer(new SslContext(SslProtocols.None, TestCertificates.UntrustedServer));

        // A handshake the system refuses to start (SSL 3.0) fails inside Established(), before ConnectAsync looks.
#pragma warning disable CA5397 // a deprecated protocol on purpose: the system refuses it at once
        var refusedProtocol = TestCertificates.ClientContext();
        refusedProtocol.Protocols = (SslProtocols)0x30;
#pragma warning restore CA5397
        var probe = new Probe { RecordHandshakes = true };
        using (var client = bench.CreateClient(refusedProtocol, probe))
        {
            var thrown = await Assert.ThrowsAnyAsync<AuthenticationException>(() => client.ConnectAsync(CancellationToken.None).WaitAsync(Wait.Default));
            Assert.Same(await probe.HandshakeFailedSignal.Task.WaitAsync(Wait.Default), thrown);
        }

        // The everyday case, a refused certificate, races the same check: every attempt must throw.
        for (var attempt = 0; attempt < 100; attempt++)
        {
            var each = new Probe { RecordHandshakes = true };
            using var client = bench.CreateClient(TestCertificates.ClientContext(), each);
            var thrown = await Assert.ThrowsAnyAsync<AuthenticationException>(() => client.ConnectAsync(CancellationToken.None).WaitAsync(Wait.Default));
            Assert.Same(await each.HandshakeFailedSignal.Task.WaitAsync(Wait.Default), thrown);
            await each.DisconnectedSignal.Task.WaitAsync(Wait.Default);
        }
    }

    // --- The server refuses the client ---

    [Theory]
    [InlineData(SslClientCertificateMode.Required, BadClientCertificate.Missing, false)]
    [InlineData(SslClientCertificateMode.Required, BadClientCertificate.UntrustedAuthority, false)]
    [InlineData(SslClientCertificateMode.Optional, BadClientCertificate.UntrustedAuthority, false)]
    [InlineData(SslClientCertificateMode.Required, BadClientCertificate.Missing, true)] // accepting any certificate still needs one
    public async Task A_server_refuses_a_missing_or_untrusted_client_certificate_and_keeps_serving(SslClientCertificateMode mode, BadClientCertificate fault, bool acceptAny)
    {
        var context = TestCertificates.ServerContext(mode);
        context.DangerousAcceptAnyCertificate = acceptAny;
        await using var bench = new SslEchoServer(context);

        var probe = new Probe { RecordHandshakes = true };
        var certificate = fault == BadClientCertificate.UntrustedAuthority ? TestCertificates.UntrustedClient : null;
        using (var client = bench.CreateClient(TestCertificates.ClientContext(certificate), probe))
        {
            try
            {
                await client.ConnectAsync(CancellationToken.None).WaitAsync(Wait.Default);
            }
            catch (Exception e) when (e is AuthenticationException or IOException)
            {
                // Over TLS 1.2 the client hears the refusal during its handshake; over TLS 1.3 its
                // handshake is over before the server has judged its certificate, and it hears it
                // as the connection's end right after.
            }

            var (session, sessionProbe) = await bench.SessionAsync(0);
            var failure = await AssertSessionHandshakeFailedAsync(session, sessionProbe);
            Assert.IsAssignableFrom<AuthenticationException>(failure);

            // The client ends too, and never had a session to talk to.
            await probe.DisconnectedSignal.Task.WaitAsync(Wait.Default);
            Assert.False(client.IsConnected);
            Assert.Equal(0, sessionProbe.ReceivedBytes);
            Assert.DoesNotContain("handshaked", sessionProbe.Events);
        }

        await bench.AssertServesAsync(TestCertificates.ClientContext(TestCertificates.Client));
    }

    [Fact]
    public async Task Optional_client_certificates_accept_a_client_without_one_and_authenticate_one_that_has_one()
    {
        await using var bench = new SslEchoServer(TestCertificates.ServerContext(SslClientCertificateMode.Optional));

        var anonymous = await bench.AssertServesAsync(TestCertificates.ClientContext());
        Assert.Null(anonymous.Session.RemoteCertificate);
        Assert.Equal(TestCertificates.Server.Thumbprint, anonymous.Client.RemoteCertificate!.GetCertHashString());

        // Mutual authentication: each side validated and holds the other's certificate.
        var authenticated = await bench.AssertServesAsync(TestCertificates.ClientContext(TestCertificates.Client));
        Assert.NotNull(authenticated.Session.RemoteCertificate);
        Assert.Equal(TestCertificates.Client.Thumbprint, authenticated.Session.RemoteCertificate!.GetCertHashString());
        Assert.Equal(TestCertificates.Server.Thumbprint, authenticated.Client.RemoteCertificate!.GetCertHashString());
    }

    [Fact]
    public async Task Required_client_certificates_authenticate_a_client_that_has_a_trusted_one()
    {
        await using var bench = new SslEchoServer(TestCertificates.ServerContext(SslClientCertificateMode.Required));

        var mutual = await bench.AssertServesAsync(TestCertificates.ClientContext(TestCertificates.Client));
        Assert.Equal(TestCertificates.Client.Thumbprint, mutual.Session.RemoteCertificate!.GetCertHashString());
        Assert.Equal(TestCertificates.Server.Thumbprint, mutual.Client.RemoteCertificate!.GetCertHashString());
    }

    // --- Peers that do not speak TLS ---

    [Fact]
    public async Task A_plain_text_client_fails_the_handshake_at_once_and_sees_the_connection_close()
    {
        await using var bench = new SslEchoServer(TestCertificates.ServerContext());

        using (var raw = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp))
        {
            await raw.ConnectAsync(bench.Endpoint).WaitAsync(Wait.Default);
            var sentAt = Stopwatch.StartNew();
            await raw.SendAsync(Encoding.ASCII.GetBytes("GET / HTTP/1.1\r\n\r\n"), SocketFlags.None).WaitAsync(Wait.Default);

            var (session, sessionProbe) = await bench.SessionAsync(0);
            var failure = await AssertSessionHandshakeFailedAsync(session, sessionProbe);
            Assert.True(failure is not TimeoutException && sentAt.Elapsed < TimeSpan.FromSeconds(5), $"Bytes that are not TLS were not refused at once ({sentAt.Elapsed}): {failure}");

            // The server closes the connection: nothing but, at most, a TLS alert record comes back.
            var rest = await ReadUntilClosedAsync(raw);
            Assert.True(rest.Length == 0 || rest[0] == 0x15, "The server answered plain text with something other than an alert: " + Convert.ToHexString(rest));
        }

        await bench.AssertServesAsync(TestCertificates.ClientContext());
    }

    [Fact]
    public async Task A_silent_client_times_out_the_handshake_with_a_TimeoutException_while_others_are_served()
    {
        Assert.Equal(TimeSpan.FromSeconds(10), new SslContext().HandshakeTimeout);

        // The limit applies to the good clients' handshakes too: short enough for a quick test,
        // long enough that a loaded machine (2 cores, the suite in parallel) finishes theirs in time.
        var context = TestCertificates.ServerContext();
        context.HandshakeTimeout = TimeSpan.FromSeconds(3);
        await using var bench = new SslEchoServer(context);

        using var silent = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        await silent.ConnectAsync(bench.Endpoint).WaitAsync(Wait.Default);
        var connectedAt = Stopwatch.StartNew();
        var (session, sessionProbe) = await bench.SessionAsync(0);

        // A pending handshake does not hold up the others.
        await bench.AssertServesAsync(TestCertificates.ClientContext());

        var failure = await AssertSessionHandshakeFailedAsync(session, sessionProbe);
        var elapsed = connectedAt.Elapsed;
        Assert.IsType<TimeoutException>(failure);
        Assert.Contains("3 s", failure.Message, StringComparison.Ordinal); // says which limit passed
        Assert.True(elapsed >= TimeSpan.FromSeconds(2.5) && elapsed < TimeSpan.FromSeconds(10), $"The 3 s handshake timeout fired after {elapsed}.");
        Assert.Empty(await ReadUntilClosedAsync(silent));

        await bench.AssertServesAsync(TestCertificates.ClientContext());
    }

    [Fact]
    public async Task A_client_whose_server_never_answers_times_out_the_handshake_with_a_TimeoutException()
    {
        using var silent = new SilentListener();
        var context = TestCertificates.ClientContext();
        context.HandshakeTimeout = TimeSpan.FromMilliseconds(500);
        var probe = new Probe { RecordHandshakes = true };
        using var client = new ProbeSslClient(context, silent.Endpoint, probe);

        var watch = Stopwatch.StartNew();
        // Bounded by the test's own wait too, whose TimeoutException the Assert.Same below tells apart.
        var thrown = await Assert.ThrowsAsync<TimeoutException>(() => client.ConnectAsync(CancellationToken.None).WaitAsync(Wait.Default));
        var elapsed = watch.Elapsed;
        var failure = await probe.HandshakeFailedSignal.Task.WaitAsync(Wait.Default);
        Assert.Same(failure, thrown);
        Assert.Contains(0.5.ToString("0.###", CultureInfo.CurrentCulture) + " s", failure.Message, StringComparison.Ordinal);
        Assert.True(elapsed >= TimeSpan.FromMilliseconds(400) && elapsed < TimeSpan.FromSeconds(5), $"The 500 ms handshake timeout fired after {elapsed}.");

        Assert.Equal(DisconnectReason.HandshakeFailed, await probe.DisconnectedSignal.Task.WaitAsync(Wait.Default));
        Assert.Equal(DisconnectReason.HandshakeFailed, client.DisconnectReason);
        Assert.Same(failure, client.DisconnectException);
        Assert.False(client.IsConnected);
        Assert.Equal(["connecting", "connected", "handshaking", "handshake-failed", "disconnecting", "disconnected"], await SettledEventsAsync(probe, "disconnected"));
        Assert.Equal(1, silent.Accepted);
    }

    // --- Validation overrides ---

    [Theory]
    [InlineData(BadServerCertificate.UntrustedAuthority)]
    [InlineData(BadServerCertificate.Expired)]
    [InlineData(BadServerCertificate.OtherHost)]
    public async Task DangerousAcceptAnyCertificate_accepts_an_untrusted_expired_or_mismatched_certificate(BadServerCertificate fault)
    {
        var certificate = ServerCertificate(fault);
        await using var bench = new SslEchoServer(new SslContext(SslProtocols.None, certificate));

        // No trusted authority at all: only the flag lets this client in.
        var tls = await bench.AssertServesAsync(new SslContext { DangerousAcceptAnyCertificate = true });
        Assert.Equal(certificate.Thumbprint, tls.Client.RemoteCertificate!.GetCertHashString());
    }

    [Fact]
    public async Task A_validation_callback_decides_alone_refusing_a_valid_certificate_and_accepting_an_untrusted_one()
    {
        await using (var valid = new SslEchoServer(TestCertificates.ServerContext()))
        {
            var seen = new ConcurrentQueue<string>();
            var refusing = new SslContext(SslProtocols.None, (_, certificate, _, _) =>
            {
                seen.Enqueue(certificate?.GetCertHashString() ?? "none");
                return false;
            });
            refusing.TrustedCertificateAuthorities.Add(TestCertificates.Authority); // the default validation would accept
            var probe = new Probe { RecordHandshakes = true };
            using (var client = valid.CreateClient(refusing, probe))
            {
                await ConnectRefusedAsync(client);
                Assert.Equal(DisconnectReason.HandshakeFailed, await probe.DisconnectedSignal.Task.WaitAsync(Wait.Default));
                Assert.IsAssignableFrom<AuthenticationException>(await probe.HandshakeFailedSignal.Task.WaitAsync(Wait.Default));
            }

            Assert.Contains(TestCertificates.Server.Thumbprint, seen);
            await valid.AssertServesAsync(TestCertificates.ClientContext());
        }

        await using (var untrusted = new SslEchoServer(new SslContext(SslProtocols.None, TestCertificates.UntrustedServer)))
        {
            // A pin: this certificate and no other, whatever the chain says.
            var errorsSeen = SslPolicyErrors.None;
            var pinned = TestCertificates.UntrustedServer.Thumbprint;
            var accepting = new SslContext(SslProtocols.None, (_, certificate, _, errors) =>
            {
                errorsSeen |= errors;
                return certificate?.GetCertHashString() == pinned;
            });
            var tls = await untrusted.AssertServesAsync(accepting);
            Assert.True((errorsSeen & SslPolicyErrors.RemoteCertificateChainErrors) != 0, $"The callback was not told of the untrusted chain: {errorsSeen}.");
            Assert.Equal(TestCertificates.UntrustedServer.Thumbprint, tls.Client.RemoteCertificate!.GetCertHashString());
        }
    }

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

    // --- Helpers ---

    private static X509Certificate2 ServerCertificate(BadServerCertificate fault) => fault switch
    {
        BadServerCertificate.UntrustedAuthority => TestCertificates.UntrustedServer,
        BadServerCertificate.Expired => TestCertificates.ExpiredServer,
        _ => TestCertificates.OtherHostServer,
    };

    /// <summary>A client that accepts the faulty certificate by legitimate means, to show the same server still serves.</summary>
    private static (SslContext Context, string? TargetHost) ClientAccepting(BadServerCertificate fault)
    {
        switch (fault)
        {
            case BadServerCertificate.UntrustedAuthority:
                var trusting = new SslContext();
                trusting.TrustedCertificateAuthorities.Add(TestCertificates.OtherAuthority);
                return (trusting, null);
            case BadServerCertificate.Expired:
                var pinned = TestCertificates.ExpiredServer.Thumbprint;
                return (new SslContext(SslProtocols.None, (_, certificate, _, _) => certificate?.GetCertHashString() == pinned), null);
            default:
                return (TestCertificates.ClientContext(), "other.example");
        }
    }

    /// <summary>
    /// Connects a client whose handshake must fail; <c>ConnectAsync(CancellationToken)</c> must throw
    /// the handshake's AuthenticationException (never return), however early the handshake fails
    /// (see <see cref="ConnectAsync_with_a_token_throws_the_handshake_failure_however_early_the_handshake_fails"/>).
    /// Returns what it threw.
    /// </summary>
    private static async Task<AuthenticationException> ConnectRefusedAsync(SslClient client) =>
        await Assert.ThrowsAnyAsync<AuthenticationException>(() => client.ConnectAsync(CancellationToken.None).WaitAsync(Wait.Default));

    /// <summary>
    /// The server's side when its client refused the server's certificate. Where the client
    /// validates during the handshake (Windows; Linux from .NET 11, dotnet/runtime#115996) it sends
    /// an alert and the session's handshake fails. On .NET 10 on Linux the client validates after
    /// its side of the handshake is done and closes without an alert: the session's handshake
    /// succeeds and the connection ends at once, without a byte of data. Either way the session
    /// ends well before the handshake timeout and nothing reaches OnReceived.
    /// </summary>
    private static async Task AssertSessionSawTheRefusalAsync(StreamSession session, Probe probe)
    {
        var reason = await probe.DisconnectedSignal.Task.WaitAsync(TimeSpan.FromSeconds(5));
        if (probe.HandshakeFailedSignal.Task.IsCompleted)
        {
            await AssertSessionHandshakeFailedAsync(session, probe);
            return;
        }

        Assert.True(reason is DisconnectReason.PeerClosed or DisconnectReason.ConnectionReset, $"The session ended with {reason}: {session.DisconnectException}");
        var events = await SettledEventsAsync(probe, "disconnected");
        Assert.Equal(["connecting", "connected", "handshaking", "handshaked", "disconnecting", "disconnected"], events);
        Assert.Equal(0, probe.ReceivedBytes);
    }

    /// <summary>
    /// The session's side of a refused handshake: OnHandshakeFailed (also at the server), then
    /// OnDisconnected with HandshakeFailed, the exception kept; and neither OnHandshaked nor OnReceived.
    /// </summary>
    private static async Task<Exception> AssertSessionHandshakeFailedAsync(StreamSession session, Probe probe)
    {
        var failure = await probe.HandshakeFailedSignal.Task.WaitAsync(Wait.Default);
        Assert.Equal(DisconnectReason.HandshakeFailed, await probe.DisconnectedSignal.Task.WaitAsync(Wait.Default));
        Assert.Equal(DisconnectReason.HandshakeFailed, session.DisconnectReason);
        Assert.Same(failure, session.DisconnectException);
        Assert.False(string.IsNullOrWhiteSpace(failure.Message));

        var events = await SettledEventsAsync(probe, "disconnected");
        Assert.Equal(["connecting", "connected", "handshaking", "handshake-failed", "disconnecting", "disconnected"], events);
        Assert.Contains("handshake-failed:" + failure.GetType().Name, ((ProbeSslServer)((SslSession)session).Server).Probe.Events);
        return failure;
    }

    /// <summary>Reads a raw socket until the peer closes it (a reset counts as closed); returns what came before.</summary>
    private static async Task<byte[]> ReadUntilClosedAsync(Socket socket)
    {
        try
        {
            return await Wait.ReadToEndAsync(socket).WaitAsync(Wait.Default);
        }
        catch (SocketException e) when (e.SocketErrorCode == SocketError.ConnectionReset)
        {
            return [];
        }
    }

    /// <summary>Waits for the final event, then a little longer, so a hook that runs too late is caught too.</summary>
    private static async Task<string[]> SettledEventsAsync(Probe probe, string final)
    {
        await Wait.UntilAsync(() => probe.Events.Contains(final), final);
        await Task.Delay(100);
        return probe.Events.ToArray();
    }

    /// <summary>Runs of "received" as one: how the bytes were split into receives is not part of the order.</summary>
    private static string[] Collapse(string[] events)
    {
        var result = new List<string>();
        foreach (var e in events)
        {
            if (e != "received" || result.Count == 0 || result[^1] != "received")
                result.Add(e);
        }

        return result.ToArray();
    }
}

/// <summary>
/// An <see cref="SslServer"/> under test on 127.0.0.1 port 0 whose sessions echo what they receive
/// and record their hooks (the TLS ones included), with a leak-checking buffer pool. Disposing it
/// stops the server and checks that every pooled buffer came back. (The OpenSSL interop tests use it too.)
/// </summary>
internal sealed class SslEchoServer : IAsyncDisposable
{
    private readonly ConcurrentQueue<(SslSession Session, Probe Probe)> _sessions = new();
    private int _round;

    /// <param name="context">The server's TLS settings.</param>
    /// <param name="configure">Sets a new session's probe delegates after the echo (which it may replace).</param>
    public SslEchoServer(SslContext context, Action<Probe>? configure = null)
    {
        Probe.ConfigureSession = probe =>
        {
            probe.RecordHandshakes = true;
            probe.Received = (session, buffer, offset, size) => session.SendAsync(buffer, offset, size);
            configure?.Invoke(probe);
        };
        Probe.Connected = session => _sessions.Enqueue(((SslSession)session, Probe.Sessions[session.Id]));
        Server = new ProbeSslServer(context, new IPEndPoint(IPAddress.Loopback, 0), Probe) { BufferPool = Pool };
        Assert.True(Server.Start());
    }

    public ServerProbe Probe { get; } = new();

    public ProbeSslServer Server { get; }

    public IPEndPoint Endpoint => (IPEndPoint)Server.Endpoint;

    internal LeakCheckingBufferPool Pool { get; } = new();

    /// <summary>A client of this server (not yet connected) with the leak-checking pool.</summary>
    public ProbeSslClient CreateClient(SslContext context, Probe probe) => new(context, Endpoint, probe) { BufferPool = Pool };

    /// <summary>The <paramref name="index"/>th session to run OnConnected (bounded wait).</summary>
    public async Task<(StreamSession Session, Probe Probe)> SessionAsync(int index)
    {
        await Wait.UntilAsync(() => _sessions.Count > index, $"session #{index} to connect");
        return _sessions.ElementAt(index);
    }

    /// <summary>
    /// A good client connects with <paramref name="context"/>, handshakes, gets its bytes echoed
    /// and disconnects; returns what each side negotiated.
    /// </summary>
    public async Task<(TlsInfo Client, TlsInfo Session)> AssertServesAsync(SslContext context, string? targetHost = null)
    {
        var round = Interlocked.Increment(ref _round);
        var probe = new Probe();
        var received = new MemoryStream();
        probe.Received = (_, buffer, offset, size) =>
        {
            lock (received)
                received.Write(buffer, (int)offset, (int)size);
        };

        using var client = CreateClient(context, probe);
        if (targetHost is not null)
            client.TargetHost = targetHost;
        var known = _sessions.Count;
        Assert.True(await client.ConnectAsync(CancellationToken.None).WaitAsync(Wait.Default), "A good client could not connect.");
        Assert.True(client.IsHandshaked, "A good client's handshake did not succeed.");

        var data = Framing.Pattern(round * 10_000, 5000);
        Assert.True(client.SendAsync(data));
        // The probe counts the bytes before its Received callback copies them: wait for the copy.
        await Wait.UntilAsync(
            () =>
            {
                lock (received)
                    return received.Length >= data.Length;
            },
            "the good client's bytes to be echoed");
        lock (received)
            Assert.Equal(data, received.ToArray());

        // The session that served it: the newest one, still connected.
        await Wait.UntilAsync(() => _sessions.Count > known, "the good client's session");
        var session = _sessions.ElementAt(known).Session;
        var sessionTls = session.Tls ?? throw new InvalidOperationException("The session serving a handshaked client has no TlsInfo.");
        var clientTls = client.Tls!;

        Assert.True(client.Disconnect());
        Assert.Equal(DisconnectReason.LocalDisconnect, await probe.DisconnectedSignal.Task.WaitAsync(Wait.Default));
        Assert.Null(client.DisconnectException);
        return (clientTls, sessionTls);
    }

    public async ValueTask DisposeAsync()
    {
        if (Server.IsStarted)
            await Server.StopAsync().WaitAsync(Wait.Default);
        Server.Dispose();
        await Pool.AssertAllReturnedAsync();
    }
}
