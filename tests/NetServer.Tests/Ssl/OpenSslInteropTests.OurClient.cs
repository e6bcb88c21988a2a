using System;
using System.IO;
using System.Net;
using System.Security.Authentication;
using System.Threading;
using System.Threading.Tasks;
using NetServer.Tests.Infrastructure;
using Xunit;

namespace NetServer.Tests.Ssl;

/// <summary>Our client against openssl s_server.</summary>
public sealed partial class OpenSslInteropTests
{
    // --- our client against openssl s_server ---

    [Fact]
    public async Task Our_client_exchanges_lines_with_openssl_s_server()
    {
        await using var openssl = await OpenSsl.StartServerAsync(_directory, "-cert", ServerCertificatePath, "-key", ServerKeyPath);

        var probe = new Probe { RecordHandshakes = true };
        var received = new ReceivedText(probe);
        var pool = new LeakCheckingBufferPool();
        using (var client = new ProbeSslClient(TestCertificates.ClientContext(), new IPEndPoint(IPAddress.Loopback, openssl.Port), probe) { BufferPool = pool })
        {
            Assert.True(await client.ConnectAsync(CancellationToken.None).WaitAsync(s_timeout), "Our client could not connect to s_server:" + Environment.NewLine + openssl.Transcript);
            Assert.True(client.IsHandshaked);
            Assert.Equal(TestCertificates.Server.Thumbprint, client.Tls!.RemoteCertificate!.GetCertHashString());

            Assert.True(client.SendAsync("from our client\n"));
            await openssl.WaitForLineAsync(line => line.Contains("from our client", StringComparison.Ordinal), "s_server to print our line");

            // Not a line s_server reads as a command (Q, q, P, S, or r/R/k/K/c alone).
            await openssl.WriteLineAsync("from s_server");
            await received.WaitForAsync("from s_server\n");

            Assert.True(client.Disconnect());
            Assert.Equal(DisconnectReason.LocalDisconnect, await probe.DisconnectedSignal.Task.WaitAsync(s_timeout));
            Assert.DoesNotContain(probe.Events, e => e.StartsWith("error:", StringComparison.Ordinal));
        }

        await pool.AssertAllReturnedAsync();
    }

    [Fact]
    public async Task Openssl_s_server_reads_close_notify_when_our_asynchronously_connected_client_disconnects()
    {
        await using var openssl = await OpenSsl.StartServerAsync(_directory, "-cert", ServerCertificatePath, "-key", ServerKeyPath, "-msg");

        var probe = new Probe { RecordHandshakes = true };
        var received = new ReceivedText(probe);
        using var client = new ProbeSslClient(TestCertificates.ClientContext(), new IPEndPoint(IPAddress.Loopback, openssl.Port), probe);
        Assert.True(await client.ConnectAsync(CancellationToken.None).WaitAsync(s_timeout), "Our client could not connect to s_server:" + Environment.NewLine + openssl.Transcript);

        // A line each way, so the client's receive loop is waiting in its read when it closes.
        Assert.True(client.SendAsync("from our client\n"));
        await openssl.WaitForLineAsync(line => line.Contains("from our client", StringComparison.Ordinal), "s_server to print our line");
        await openssl.WriteLineAsync("from s_server");
        await received.WaitForAsync("from s_server\n");

        Assert.True(await HarnessExtensions.RunBlocking(client.Disconnect).WaitAsync(s_timeout));
        Assert.Equal(DisconnectReason.LocalDisconnect, await probe.DisconnectedSignal.Task.WaitAsync(s_timeout));
        Assert.Null(client.DisconnectException);

        // s_server ends the connection with DONE after a close_notify, with ERROR after a bare end of stream.
        var end = await openssl.WaitForLineAsync(line => line is "DONE" or "ERROR", "s_server to end the connection");
        AssertReadCloseNotify(openssl.Transcript);
        Assert.Equal("DONE", end);
    }

    [Fact]
    public async Task Our_client_with_a_certificate_is_accepted_by_openssl_s_server_that_requires_one()
    {
        await using var openssl = await OpenSsl.StartServerAsync(_directory, "-cert", ServerCertificatePath, "-key", ServerKeyPath, "-Verify", "1", "-CAfile", CaPath);

        var probe = new Probe { RecordHandshakes = true };
        var received = new ReceivedText(probe);
        using var client = new ProbeSslClient(TestCertificates.ClientContext(TestCertificates.Client), new IPEndPoint(IPAddress.Loopback, openssl.Port), probe);
        Assert.True(await client.ConnectAsync(CancellationToken.None).WaitAsync(s_timeout), "Our client could not connect to s_server:" + Environment.NewLine + openssl.Transcript);

        // s_server verified our certificate (its subject is printed as the peer's)...
        Assert.True(client.SendAsync("authenticated client\n"));
        await openssl.WaitForLineAsync(line => line.Contains("authenticated client", StringComparison.Ordinal), "s_server to print our line");
        Assert.Contains("NetServer Tests Client", openssl.Transcript, StringComparison.Ordinal);

        // ...and the connection carries data both ways.
        await openssl.WriteLineAsync("welcome, authenticated client");
        await received.WaitForAsync("welcome, authenticated client\n");
        Assert.True(client.IsHandshaked);
        Assert.True(client.Disconnect());
    }

    [Fact]
    public async Task Our_client_without_a_certificate_is_refused_by_openssl_s_server_that_requires_one()
    {
        await using var openssl = await OpenSsl.StartServerAsync(_directory, "-cert", ServerCertificatePath, "-key", ServerKeyPath, "-Verify", "1", "-CAfile", CaPath);

        var probe = new Probe { RecordHandshakes = true };
        var received = new ReceivedText(probe);
        using var client = new ProbeSslClient(TestCertificates.ClientContext(), new IPEndPoint(IPAddress.Loopback, openssl.Port), probe);
        try
        {
            await client.ConnectAsync(CancellationToken.None).WaitAsync(s_timeout);
        }
        catch (Exception e) when (e is AuthenticationException or IOException)
        {
            // Over TLS 1.2 the refusal ends our handshake; over TLS 1.3 our side of the handshake
            // is done before s_server has looked for our certificate, and its alert ends the connection.
        }

        var reason = await probe.DisconnectedSignal.Task.WaitAsync(s_timeout);
        Assert.False(client.IsConnected);
        if (probe.HandshakeFailedSignal.Task.IsCompleted)
            Assert.Equal(DisconnectReason.HandshakeFailed, reason);
        else
            Assert.NotEqual(DisconnectReason.LocalDisconnect, reason);
        Assert.Equal(string.Empty, received.Text);
        await Wait.UntilAsync(() => openssl.Transcript.Contains("peer did not return a certificate", StringComparison.OrdinalIgnoreCase), "s_server to report the missing certificate", s_timeout);
    }

    [Fact]
    public async Task Our_client_trusting_the_root_alone_accepts_openssl_s_server_that_sends_leaf_and_intermediate()
    {
        await using var openssl = await OpenSsl.StartServerAsync(_directory, "-cert", ChainedServerCertificatePath, "-key", ChainedServerKeyPath, "-cert_chain", IntermediatePath);

        var probe = new Probe { RecordHandshakes = true };
        var received = new ReceivedText(probe);
        using var client = new ProbeSslClient(TestCertificates.ClientContext(), new IPEndPoint(IPAddress.Loopback, openssl.Port), probe);
        Assert.True(await client.ConnectAsync(CancellationToken.None).WaitAsync(s_timeout), "Our client refused s_server's chain:" + Environment.NewLine + client.DisconnectException + Environment.NewLine + openssl.Transcript);
        Assert.Equal(TestCertificates.ChainedServer.Thumbprint, client.Tls!.RemoteCertificate!.GetCertHashString());

        await openssl.WriteLineAsync("chain accepted");
        await received.WaitForAsync("chain accepted\n");
        Assert.True(client.Disconnect());
    }
}
