using System;
using System.Buffers.Binary;
using System.Collections.Generic;
using System.IO;
using System.Net;
using System.Net.Security;
using System.Net.Sockets;
using System.Security.Cryptography.X509Certificates;
using System.Threading.Tasks;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using NetServer.Tests.Infrastructure;
using Xunit;

namespace NetServer.Hosting.Tests;

/// <summary>
/// Every server kind AddNetServer takes, run by a real host over real sockets, and the log events an
/// operator needs raised by real peers (a bad TLS client, a slow reader, a session that cannot take a
/// multicast) reaching the host's ILogger with their event ids.
/// </summary>
public sealed class HostedServerKindsTests
{
    private static readonly TimeSpan Timeout = TimeSpan.FromSeconds(10);

    private static string ServerPfx => Path.Combine(ProgramProcess.RepositoryCertificates(), "server.pfx");

    private static IHost Build(Dictionary<string, string?> settings, CapturingLoggerProvider logs, Action<IServiceCollection> register)
    {
        var builder = Host.CreateApplicationBuilder(new HostApplicationBuilderSettings { DisableDefaults = true });
        builder.Configuration.AddInMemoryCollection(settings);
        builder.Logging.ClearProviders().SetMinimumLevel(LogLevel.Debug).AddProvider(logs);
        register(builder.Services);
        return builder.Build();
    }

    private static async Task<Socket> Connect(EndPoint endpoint)
    {
        var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        await socket.ConnectAsync(endpoint).WaitAsync(Timeout);
        return socket;
    }

    private sealed class MessageEchoSession(MessageServer server) : MessageSession(server)
    {
        protected override void OnMessage(ReadOnlySpan<byte> message) => SendAsync(message);
    }

    private sealed class MessageEchoServer(IPEndPoint endpoint) : MessageServer(endpoint)
    {
        protected override MessageSession CreateSession() => new MessageEchoSession(this);
    }

    private sealed class UdpEchoServer(IPEndPoint endpoint) : UdpServer(endpoint)
    {
        protected override void OnStarted() => ReceiveAsync();

        protected override void OnReceived(EndPoint endpoint, ReadOnlySpan<byte> buffer)
        {
            SendAsync(endpoint, buffer);
        }

        protected override void OnSent(EndPoint endpoint, long sent) => ReceiveAsync();
    }

    private sealed class TcpEchoSession(TcpServer server) : TcpSession(server)
    {
        protected override void OnReceived(ReadOnlySpan<byte> buffer) => SendAsync(buffer);
    }

    private sealed class TcpEchoServer(IPEndPoint endpoint) : TcpServer(endpoint)
    {
        protected override TcpSession CreateSession() => new TcpEchoSession(this);
    }

    [Fact]
    public async Task AMessageServer_IsHosted_WithItsLimitsAndLogging()
    {
        var logs = new CapturingLoggerProvider();
        using var host = Build(new() { ["NetServer:msg:Port"] = "0", ["NetServer:msg:MaxSessions"] = "5" }, logs,
            services => services.AddNetServer("msg", (_, options) => new MessageEchoServer(options.CreateIPEndPoint()) { OptionMaxMessageSize = 64 }));
        await host.StartAsync().WaitAsync(Timeout);
        var server = host.Services.GetRequiredService<MessageEchoServer>();
        Assert.True(server.IsStarted);
        Assert.Equal(5, server.OptionMaxSessions);
        Assert.Contains(server.Endpoint.ToString()!, (await logs.WaitFor(NetServerLogEvents.Listening, Timeout)).Message, StringComparison.Ordinal);

        using (var socket = await Connect(server.Endpoint))
        {
            var frame = new byte[9];
            BinaryPrimitives.WriteInt32LittleEndian(frame, 5);
            "hello"u8.CopyTo(frame.AsSpan(4));
            await socket.SendAsync(frame, SocketFlags.None).WaitAsync(Timeout);
            var echoed = new byte[9];
            Assert.Equal(9, await SocketReads.FillAsync(socket, echoed, Timeout));
            Assert.Equal(frame, echoed);

            // A message over the server's 64-byte limit: the session is closed and the host logs who broke the framing.
            BinaryPrimitives.WriteInt32LittleEndian(frame, 1000);
            await socket.SendAsync(frame.AsMemory(0, 4), SocketFlags.None).AsTask().WaitAsync(Timeout);
            var error = await logs.WaitFor(NetServerLogEvents.ProtocolError, Timeout);
            Assert.Contains($"from {socket.LocalEndPoint} broke the", error.Message, StringComparison.Ordinal);
        }

        await host.StopAsync().WaitAsync(Timeout);
        Assert.False(server.IsStarted);
        await logs.WaitFor(NetServerLogEvents.Stopped, Timeout);
    }

    [Fact]
    public async Task AUdpServer_IsHosted_AndRefusesSessionLimits()
    {
        var logs = new CapturingLoggerProvider();
        using (var host = Build(new() { ["NetServer:udp:Port"] = "0" }, logs,
            services => services.AddNetServer("udp", (_, options) => new UdpEchoServer(options.CreateIPEndPoint()))))
        {
            await host.StartAsync().WaitAsync(Timeout);
            var server = host.Services.GetRequiredService<UdpEchoServer>();
            Assert.True(server.IsStarted);
            await logs.WaitFor(NetServerLogEvents.Listening, Timeout);
            using var socket = new Socket(AddressFamily.InterNetwork, SocketType.Dgram, ProtocolType.Udp);
            await socket.SendToAsync("ping"u8.ToArray(), SocketFlags.None, server.Endpoint).WaitAsync(Timeout);
            var reply = new byte[16];
            var received = await socket.ReceiveAsync(reply, SocketFlags.None).WaitAsync(Timeout);
            Assert.Equal("ping"u8.ToArray(), reply.AsSpan(0, received).ToArray());
            await host.StopAsync().WaitAsync(Timeout);
            Assert.False(server.IsStarted);
        }

        using var limited = Build(new() { ["NetServer:udp:Port"] = "0", ["NetServer:udp:MaxSessions"] = "3" }, new CapturingLoggerProvider(),
            services => services.AddNetServer("udp", (_, options) => new UdpEchoServer(options.CreateIPEndPoint())));
        var refused = await Assert.ThrowsAsync<InvalidOperationException>(() => limited.StartAsync().WaitAsync(Timeout));
        Assert.Contains("NetServer:udp:MaxSessions and :AcceptorBacklog do not apply", refused.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void AServerOfAnUnknownKind_OrASecondServerOfOneName_IsRefusedAtRegistration()
    {
        var services = new ServiceCollection();
        var error = Assert.Throws<ArgumentException>(() => services.AddNetServer("odd", (_, _) => new object()));
        Assert.Contains("System.Object is not a server the host can run", error.Message, StringComparison.Ordinal);

        services.AddNetServer("one", (_, options) => new TcpEchoServer(options.CreateIPEndPoint()));
        var twice = Assert.Throws<ArgumentException>(() => services.AddNetServer("one", (_, options) => new MessageEchoServer(options.CreateIPEndPoint())));
        Assert.Contains("A NetServer named 'one' is registered already", twice.Message, StringComparison.Ordinal);
    }

    [Fact]
    public async Task ATlsServer_IsHosted_AndABadHandshakeIsLoggedWithThePeer()
    {
        var logs = new CapturingLoggerProvider();
        using var host = Build(new() { ["NetServer:tls:Port"] = "0", ["NetServer:tls:CertificatePath"] = ServerPfx, ["NetServer:tls:CertificatePassword"] = "netserver" }, logs,
            services => services.AddNetServer("tls", (_, options) => new SslServer(options.CreateSslContext(), options.CreateIPEndPoint())));
        await host.StartAsync().WaitAsync(Timeout);
        var server = host.Services.GetRequiredService<SslServer>();

        // A real TLS client completes its handshake against the configured certificate.
        using (var good = await Connect(server.Endpoint))
        await using (var tls = new SslStream(new NetworkStream(good)))
        {
            var ca = X509Certificate2.CreateFromPem(File.ReadAllText(Path.Combine(ProgramProcess.RepositoryCertificates(), "ca.pem")));
            var policy = new X509ChainPolicy { TrustMode = X509ChainTrustMode.CustomRootTrust, RevocationMode = X509RevocationMode.NoCheck };
            policy.CustomTrustStore.Add(ca);
            await tls.AuthenticateAsClientAsync(new SslClientAuthenticationOptions { TargetHost = "localhost", CertificateChainPolicy = policy }).WaitAsync(Timeout);
            Assert.True(tls.IsAuthenticated);
        }

        using var bad = await Connect(server.Endpoint);
        await bad.SendAsync(new byte[] { 0x16, 0x03, 0x01, 0x00, 0x05, 1, 2, 3, 4, 5 }, SocketFlags.None).WaitAsync(Timeout);
        var failed = await logs.WaitFor(NetServerLogEvents.TlsHandshakeFailed, Timeout);
        Assert.Equal(LogLevel.Warning, failed.Level);
        Assert.Equal("NetServer.tls", failed.Category);
        Assert.Contains($"from {bad.LocalEndPoint}: TLS handshake failed", failed.Message, StringComparison.Ordinal);
        await host.StopAsync().WaitAsync(Timeout);
    }

    [Fact]
    public async Task ASlowReader_AndAMissedMulticast_AreLogged()
    {
        var logs = new CapturingLoggerProvider();
        using var host = Build(new() { ["NetServer:echo:Port"] = "0" }, logs,
            services => services.AddNetServer("echo", (_, options) => new TcpEchoServer(options.CreateIPEndPoint())));
        await host.StartAsync().WaitAsync(Timeout);
        var server = host.Services.GetRequiredService<TcpEchoServer>();

        // A peer that writes and never reads: the echoes queue up past the high-water mark and the session stops reading it.
        using var slow = await Connect(server.Endpoint);
        using var stopWriting = new System.Threading.CancellationTokenSource();
        var writing = Task.Run(async () =>
        {
            var chunk = new byte[64 * 1024];
            try
            {
                while (!stopWriting.IsCancellationRequested)
                    await slow.SendAsync(chunk, SocketFlags.None, stopWriting.Token);
            }
            catch (Exception e) when (e is OperationCanceledException or SocketException or ObjectDisposedException)
            {
                // stopped by the test or by the server's close
            }
        });
        var paused = await logs.WaitFor(NetServerLogEvents.SendPaused, Timeout);
        Assert.Contains($"from {slow.LocalEndPoint} reads slowly", paused.Message, StringComparison.Ordinal);

        // A multicast the stalled session cannot queue disconnects it, and says so.
        var big = new byte[1024 * 1024];
        var deadline = DateTime.UtcNow + Timeout;
        while (server.ConnectedSessions > 0 && DateTime.UtcNow < deadline)
        {
            server.Multicast(big);
            await Task.Delay(10);
        }

        var dropped = await logs.WaitFor(NetServerLogEvents.MulticastDisconnect, Timeout);
        Assert.Equal(LogLevel.Warning, dropped.Level);
        Assert.Contains($"from {slow.LocalEndPoint}: a multicast did not fit its send limit", dropped.Message, StringComparison.Ordinal);
        stopWriting.Cancel();
        await writing.WaitAsync(Timeout);
        await host.StopAsync().WaitAsync(Timeout);
    }
}
