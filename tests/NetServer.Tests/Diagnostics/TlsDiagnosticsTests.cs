using System;
using System.Linq;
using System.Net;
using System.Net.Sockets;
using System.Threading.Tasks;
using NetServer.Tests.Infrastructure;
using Xunit;

namespace NetServer.Tests.Diagnostics;

/// <summary>TLS handshake metrics and the TlsHandshakeFailed event (not in the netstandard2.0 test build: no TLS there).</summary>
public sealed class TlsDiagnosticsTests
{
    private static readonly TimeSpan Timeout = TimeSpan.FromSeconds(10);

    private static async Task<MetricRecorder.Recorded> HandshakeRecorded(MetricRecorder metrics, int port)
    {
        var deadline = DateTime.UtcNow + Timeout;
        while (DateTime.UtcNow < deadline)
        {
            // The server's side: the client's handshake shares the port tag (its server's), so take the one with this outcome.
            var recorded = metrics.For("netserver.tls_handshake.duration", port).ToList();
            if (recorded.Count > 0)
                return recorded[0];
            await Task.Delay(10);
        }

        throw new TimeoutException("No TLS handshake was recorded.");
    }

    [Fact]
    public async Task A_successful_handshake_records_its_duration_and_version()
    {
        using var metrics = new MetricRecorder();
        using var server = new SslServer(TestCertificates.ServerContext(), IPAddress.Loopback, 0);
        server.Start();
        using var client = new SslClient(TestCertificates.ClientContext(), IPAddress.Loopback, server.Port);
        Assert.True(client.Connect());
        var recorded = await HandshakeRecorded(metrics, server.Port);
        Assert.StartsWith("1.", (string)recorded.Tags["tls.protocol.version"]!, StringComparison.Ordinal);
        Assert.False(recorded.Tags.ContainsKey("error.type"));
        Assert.True(recorded.Value > 0);
    }

    [Fact]
    public async Task A_failed_handshake_is_reported_and_recorded_with_its_error()
    {
        using var metrics = new MetricRecorder();
        var listener = new RecordingListener();
        using var server = new SslServer(TestCertificates.ServerContext(), IPAddress.Loopback, 0) { EventListener = listener };
        server.Start();
        using var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        await socket.ConnectAsync(server.Endpoint).WaitAsync(Timeout);
        await socket.SendAsync(new byte[] { 0x16, 0x03, 0x01, 0x00, 0x05, 1, 2, 3, 4, 5 }, SocketFlags.None).WaitAsync(Timeout);
        Assert.StartsWith($"{socket.LocalEndPoint} ", await listener.Next("TlsHandshakeFailed"), StringComparison.Ordinal);
        Assert.Contains("HandshakeFailed", await listener.Next("ConnectionClosed"), StringComparison.Ordinal);
        var recorded = await HandshakeRecorded(metrics, server.Port);
        Assert.True(recorded.Tags.ContainsKey("error.type"));
    }
}
