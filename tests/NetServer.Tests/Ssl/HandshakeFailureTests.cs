using System;
using System.Collections.Generic;
using System.IO;
using System.Linq;
using System.Net.Sockets;
using System.Security.Authentication;
using System.Security.Cryptography.X509Certificates;
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
public partial class HandshakeFailureTests
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
