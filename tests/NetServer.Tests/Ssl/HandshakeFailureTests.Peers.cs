using System;
using System.Collections.Concurrent;
using System.Diagnostics;
using System.Globalization;
using System.Net.Security;
using System.Net.Sockets;
using System.Security.Authentication;
using System.Text;
using System.Threading;
using System.Threading.Tasks;
using NetServer.Tests.Infrastructure;
using Xunit;

namespace NetServer.Tests.Ssl;

/// <summary>Peers that do not speak TLS, and validation overrides.</summary>
public partial class HandshakeFailureTests
{
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
}
