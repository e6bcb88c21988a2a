using NetServer.Messaging;
using NetServer.Streams;
using System;
using System.IO;
using System.Net;
using System.Net.Security;
using System.Net.Sockets;
using System.Threading.Tasks;

namespace NetServer.Tests.Infrastructure;

/// <summary>The TLS transport of the harness: a server and clients with in-process certificates from one test CA.</summary>
internal static class SecureTransport
{
    public static bool Enabled => true;

    public static IProbeServer CreateServer(IPEndPoint endpoint, ServerProbe probe, LeakCheckingBufferPool pool) =>
        new ProbeSslServer(TestCertificates.ServerContext(), endpoint, probe) { BufferPool = pool };

    public static StreamClient CreateClient(IPEndPoint endpoint, Probe probe) =>
        new ProbeSslClient(TestCertificates.ClientContext(), endpoint, probe);

    /// <summary>The TLS transport of a protocol server (MessageServer and the like) on <paramref name="endpoint"/>.</summary>
    public static Func<IProtocolHostOwner, IProtocolHost> MessageHost(EndPoint endpoint) =>
        owner => ProtocolHosts.CreateServer(TestCertificates.ServerContext(), endpoint, owner);

    /// <summary>A TLS message client for <paramref name="endpoint"/>, trusting the test CA.</summary>
    public static MessageClient CreateMessageClient(EndPoint endpoint) => new(TestCertificates.ClientContext(), endpoint);

    /// <summary>
    /// A plain socket whose bytes reach the TLS server through a relay in this process: the relay
    /// is a real TLS client (SslStream) to the server and passes plaintext both ways, an end of
    /// stream as close_notify plus FIN, and a reset as a reset. So the tests that drive a server
    /// with raw socket calls (half-close, reset, byte floods, a peer that stops reading) run over
    /// TLS unchanged. Returns once the handshake is done.
    /// </summary>
    public static async Task<Socket> ConnectRelayAsync(IPEndPoint server)
    {
        using var listener = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        listener.Bind(new IPEndPoint(IPAddress.Loopback, 0));
        listener.Listen(1);
        var testEnd = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        var connecting = testEnd.ConnectAsync(listener.LocalEndPoint!);
        var relayEnd = await listener.AcceptAsync().WaitAsync(Wait.Default);
        await connecting.WaitAsync(Wait.Default);

        // Small buffers on the relay's own sockets, so the relay adds little room between a server
        // and a test peer that stops reading (tests of backpressure count on the kernel's room).
        relayEnd.SendBufferSize = RelayBuffer;
        var upstream = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp) { ReceiveBufferSize = RelayBuffer };
        await upstream.ConnectAsync(server).WaitAsync(Wait.Default);

        // Like a raw connect, return once TCP is up; bytes the test writes meanwhile wait in the relay's socket.
        _ = RelayAsync(relayEnd, upstream);
        return testEnd;
    }

    private const int RelayBuffer = 16 * 1024;

    private static async Task RelayAsync(Socket relayEnd, Socket upstream)
    {
        var tls = new SslStream(new NetworkStream(upstream, ownsSocket: false));
        try
        {
            await tls.AuthenticateAsClientAsync(new SslClientAuthenticationOptions
            {
                TargetHost = "localhost",
                RemoteCertificateValidationCallback = (_, certificate, _, _) => certificate is not null,
            }).WaitAsync(Wait.Default);
        }
        catch (Exception e) when (e is IOException or System.Security.Authentication.AuthenticationException or TimeoutException or SocketException)
        {
            // The server closed during the handshake (a hook threw, it stopped): the test sees the connection end.
            await tls.DisposeAsync();
            upstream.Dispose();
            relayEnd.Dispose();
            return;
        }

        var toServer = PumpToServerAsync(relayEnd, upstream, tls);
        var toTest = PumpToTestAsync(relayEnd, upstream, tls);
        await Task.WhenAll(toServer, toTest);
        await tls.DisposeAsync();
        upstream.Dispose();
        relayEnd.Dispose();
    }

    private static async Task PumpToServerAsync(Socket relayEnd, Socket upstream, SslStream tls)
    {
        var buffer = new byte[RelayBuffer];
        try
        {
            while (true)
            {
                var n = await relayEnd.ReceiveAsync(buffer, SocketFlags.None);
                if (n == 0)
                {
                    try
                    {
                        await tls.ShutdownAsync();
                    }
                    catch (Exception e) when (e is System.Security.Cryptography.CryptographicException or InvalidOperationException)
                    {
                        // OpenSSL refuses close_notify while the client still counts as in its
                        // handshake ("shutdown while in init": the test closed right after connecting).
                        // The FIN below still tells the server; before this, the pump died here and
                        // the server never learned of the close.
                    }

                    upstream.Shutdown(SocketShutdown.Send);
                    return;
                }

                await tls.WriteAsync(buffer.AsMemory(0, n));
            }
        }
        catch (Exception e) when (e is SocketException or IOException or ObjectDisposedException)
        {
            Reset(upstream); // the test reset its socket (or the server went away): pass it on
            Reset(relayEnd);
        }
    }

    private static async Task PumpToTestAsync(Socket relayEnd, Socket upstream, SslStream tls)
    {
        var buffer = new byte[RelayBuffer];
        try
        {
            while (true)
            {
                var n = await tls.ReadAsync(buffer);
                if (n == 0)
                {
                    relayEnd.Shutdown(SocketShutdown.Send);
                    return;
                }

                await relayEnd.SendAsync(buffer.AsMemory(0, n), SocketFlags.None);
            }
        }
        catch (Exception e) when (e is SocketException or IOException or ObjectDisposedException)
        {
            Reset(relayEnd);
            Reset(upstream);
        }
    }

    private static void Reset(Socket socket)
    {
        try
        {
            socket.LingerState = new LingerOption(true, 0);
            socket.Close();
        }
        catch (ObjectDisposedException)
        {
            // Already closed by the other pump.
        }
    }
}

/// <summary>A TLS session that forwards every hook to its <see cref="Probe"/>, the handshake hooks included.</summary>
public sealed class ProbeSslSession : SslSession
{
    public ProbeSslSession(SslServer server, Probe probe)
        : base(server)
    {
        Probe = probe;
        AutoJoinMulticast = probe.AutoJoinMulticast;
    }

    public Probe Probe { get; }

    /// <summary>Makes the TLS layer of the connection instead of the library (a test that watches the layer); null: the library's.</summary>
    internal Func<SslContext, string?, SecureLayer>? Layer { get; set; }

    private protected override SecureLayer CreateSecureLayer() => Layer?.Invoke(Server.Context, null) ?? base.CreateSecureLayer();

    protected override void OnConnecting() => Probe.OnConnecting();

    protected override void OnConnected() => Probe.OnConnected(this);

    protected override void OnHandshaking() => Probe.OnHandshaking();

    protected override void OnHandshaked() => Probe.OnHandshaked(this);

    protected override void OnHandshakeFailed(Exception exception) => Probe.OnHandshakeFailed(this, exception);

    protected override void OnDisconnecting() => Probe.OnDisconnecting();

    protected override void OnDisconnected(DisconnectReason reason) => Probe.OnDisconnected(this, reason);

    protected override void OnReceived(byte[] buffer, long offset, long size) => Probe.OnReceived(this, buffer, offset, size);

    protected override void OnSent(long sent, long pending) => Probe.OnSent(this, sent, pending);

    protected override void OnEmpty() => Probe.OnEmpty(this);

    protected override void OnError(System.Net.Sockets.SocketError error) => Probe.OnError(this, error);
}

/// <summary>A TLS client that forwards every hook to its <see cref="Probe"/>, the handshake hooks included.</summary>
public sealed class ProbeSslClient(SslContext context, IPEndPoint endpoint, Probe probe) : SslClient(context, endpoint)
{
    public Probe Probe { get; } = probe;

    /// <summary>Makes the TLS layer of each connection instead of the library (a test that watches the layer); null: the library's.</summary>
    internal Func<SslContext, string?, SecureLayer>? Layer { get; set; }

    private protected override SecureLayer CreateSecureLayer() => Layer?.Invoke(Context, TargetHost) ?? base.CreateSecureLayer();

    protected override void OnConnecting() => Probe.OnConnecting();

    protected override void OnConnected() => Probe.OnConnected(this);

    protected override void OnHandshaking() => Probe.OnHandshaking();

    protected override void OnHandshaked() => Probe.OnHandshaked(this);

    protected override void OnHandshakeFailed(Exception exception) => Probe.OnHandshakeFailed(this, exception);

    protected override void OnDisconnecting() => Probe.OnDisconnecting();

    protected override void OnDisconnected(DisconnectReason reason) => Probe.OnDisconnected(this, reason);

    protected override void OnReceived(byte[] buffer, long offset, long size) => Probe.OnReceived(this, buffer, offset, size);

    protected override void OnSent(long sent, long pending) => Probe.OnSent(this, sent, pending);

    protected override void OnEmpty() => Probe.OnEmpty(this);

    protected override void OnError(System.Net.Sockets.SocketError error) => Probe.OnError(this, error);
}

/// <summary>A TLS server whose sessions are <see cref="ProbeSslSession"/>s.</summary>
public sealed class ProbeSslServer(SslContext context, IPEndPoint endpoint, ServerProbe probe) : SslServer(context, endpoint), IProbeServer
{
    public ServerProbe Probe { get; } = probe;

    /// <summary>Makes the TLS layer of each new session (see <see cref="ProbeSslSession.Layer"/>); null: the library's.</summary>
    internal Func<SslContext, string?, SecureLayer>? SessionLayer { get; set; }

    StreamSession? IProbeServer.FindSession(Guid id) => FindSession(id);

    protected override SslSession CreateSession()
    {
        var sessionProbe = Probe.NewSessionProbe();
        var session = new ProbeSslSession(this, sessionProbe) { Layer = SessionLayer };
        Probe.Sessions[session.Id] = sessionProbe;
        return session;
    }

    protected override void OnConnected(SslSession session)
    {
        Probe.Events.Enqueue("connected");
        Probe.Connected?.Invoke(session);
    }

    protected override void OnHandshaked(SslSession session) => Probe.Events.Enqueue("handshaked");

    protected override void OnHandshakeFailed(SslSession session, Exception exception) => Probe.Events.Enqueue("handshake-failed:" + exception.GetType().Name);

    protected override void OnDisconnected(SslSession session)
    {
        Probe.Events.Enqueue("disconnected");
        Probe.Disconnected?.Invoke(session);
    }

    protected override void OnStarted() => Probe.Events.Enqueue("started");

    protected override void OnStopped() => Probe.Events.Enqueue("stopped");

    protected override void OnError(System.Net.Sockets.SocketError error) => Probe.Events.Enqueue("error:" + error);
}
