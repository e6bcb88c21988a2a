using System;
using System.Collections.Concurrent;
using System.IO;
using System.Net;
using System.Net.Sockets;
using System.Threading;
using System.Threading.Tasks;
using Xunit;

namespace NetServer.Tests.Infrastructure;

/// <summary>The stream transports every engine guarantee is checked on.</summary>
public enum TransportKind
{
    Tcp,
    Uds,
    Ssl,
}

/// <summary>What the harness needs of a server under test, whatever its session type.</summary>
public interface IProbeServer : IDisposable, IAsyncDisposable
{
    ServerProbe Probe { get; }

    EndPoint Endpoint { get; }

    bool IsStarted { get; }

    long ConnectedSessions { get; }

    long BytesPending { get; }

    long BytesSent { get; }

    long BytesReceived { get; }

    bool Start();

    bool Stop();

    bool Restart();

    Task<bool> StopAsync();

    bool DisconnectAll();

    bool Multicast(byte[] buffer);

    ValueTask<bool> MulticastAsync(ReadOnlyMemory<byte> buffer, CancellationToken cancellationToken = default);

    StreamSession? FindSession(Guid id);

    int OptionMaxSessions { get; set; }

    long RejectedSessions { get; }

    IoService? Service { get; set; }

    bool OptionHooksOnLoop { get; set; }
}

/// <summary>
/// Receives every hook of one session or client. Tests set the delegates they need and read
/// <see cref="Events"/> (hook names in the order they ran) to check ordering.
/// </summary>
public sealed class Probe
{
    private int _inReceived;

    public ConcurrentQueue<string> Events { get; } = new();

    public Action<StreamConnection>? Connected { get; set; }

    public Action<StreamConnection, byte[], long, long>? Received { get; set; }

    public Action<StreamConnection, long, long>? Sent { get; set; }

    public Action<StreamConnection>? Empty { get; set; }

    public Action<StreamConnection, SocketError>? Error { get; set; }

    public Action<StreamConnection, DisconnectReason>? Disconnected { get; set; }

    /// <summary>Completes when OnConnected has run.</summary>
    public TaskCompletionSource ConnectedSignal { get; } = new(TaskCreationOptions.RunContinuationsAsynchronously);

    /// <summary>Completes with the reason when OnDisconnected has run.</summary>
    public TaskCompletionSource<DisconnectReason> DisconnectedSignal { get; } = new(TaskCreationOptions.RunContinuationsAsynchronously);

    /// <summary>Whether a session of this probe joins its server's multicast when it is ready (default true).</summary>
    public bool AutoJoinMulticast { get; set; } = true;

    /// <summary>Set when OnReceived was ever entered while another OnReceived of the same connection ran.</summary>
    public bool ReceivedOverlapped { get; private set; }

    private int _disconnectedCount;
    private long _receivedBytes;

    /// <summary>How many times OnDisconnected ran.</summary>
    public int DisconnectedCount => Volatile.Read(ref _disconnectedCount);

    /// <summary>Bytes delivered to OnReceived so far (counted before the Received callback runs).</summary>
    public long ReceivedBytes => Interlocked.Read(ref _receivedBytes);

    internal void OnConnecting() => Events.Enqueue("connecting");

    internal void OnConnected(StreamConnection c)
    {
        Events.Enqueue("connected");
        Connected?.Invoke(c);
        ConnectedSignal.TrySetResult();
    }

    internal void OnDisconnecting() => Events.Enqueue("disconnecting");

    /// <summary>Completes when a TLS handshake succeeded (OnHandshaked ran).</summary>
    public TaskCompletionSource HandshakedSignal { get; } = new(TaskCreationOptions.RunContinuationsAsynchronously);

    /// <summary>Completes with the exception when a TLS handshake failed (OnHandshakeFailed ran).</summary>
    public TaskCompletionSource<Exception> HandshakeFailedSignal { get; } = new(TaskCreationOptions.RunContinuationsAsynchronously);

    /// <summary>Called when OnHandshaked runs, after the event is recorded.</summary>
    public Action<StreamConnection>? Handshaked { get; set; }

    /// <summary>
    /// Record the TLS hooks in <see cref="Events"/> too. Off by default, so the transport-neutral
    /// ordering tests see the same sequence over every transport; the TLS tests turn it on.
    /// </summary>
    public bool RecordHandshakes { get; set; }

    internal void OnHandshaking()
    {
        if (RecordHandshakes)
            Events.Enqueue("handshaking");
    }

    internal void OnHandshaked(StreamConnection c)
    {
        if (RecordHandshakes)
            Events.Enqueue("handshaked");
        Handshaked?.Invoke(c);
        HandshakedSignal.TrySetResult();
    }

    internal void OnHandshakeFailed(StreamConnection c, Exception exception)
    {
        if (RecordHandshakes)
            Events.Enqueue("handshake-failed");
        HandshakeFailedSignal.TrySetResult(exception);
    }

    internal void OnDisconnected(StreamConnection c, DisconnectReason reason)
    {
        Events.Enqueue("disconnected");
        Interlocked.Increment(ref _disconnectedCount);
        Disconnected?.Invoke(c, reason);
        DisconnectedSignal.TrySetResult(reason);
    }

    internal void OnReceived(StreamConnection c, byte[] buffer, long offset, long size)
    {
        if (Interlocked.Exchange(ref _inReceived, 1) != 0)
            ReceivedOverlapped = true;
        try
        {
            Events.Enqueue("received");
            // Counted before the callback: a callback that answers (an echo) lets the peer see the
            // answer, and a test that then looks at this count must see these bytes. A test that
            // needs what the callback did waits for that, not for this count.
            Interlocked.Add(ref _receivedBytes, size);
            Received?.Invoke(c, buffer, offset, size);
        }
        finally
        {
            Volatile.Write(ref _inReceived, 0);
        }
    }

    internal void OnSent(StreamConnection c, long sent, long pending) => Sent?.Invoke(c, sent, pending);

    internal void OnEmpty(StreamConnection c) => Empty?.Invoke(c);

    internal void OnError(StreamConnection c, SocketError error)
    {
        Events.Enqueue("error:" + error);
        Error?.Invoke(c, error);
    }
}

/// <summary>A TCP session that forwards every hook to its <see cref="Probe"/>.</summary>
public sealed class ProbeTcpSession : TcpSession
{
    public ProbeTcpSession(TcpServer server, Probe probe)
        : base(server)
    {
        Probe = probe;
        AutoJoinMulticast = probe.AutoJoinMulticast;
    }

    public Probe Probe { get; }

    protected override void OnConnecting() => Probe.OnConnecting();

    protected override void OnConnected() => Probe.OnConnected(this);

    protected override void OnDisconnecting() => Probe.OnDisconnecting();

    protected override void OnDisconnected(DisconnectReason reason) => Probe.OnDisconnected(this, reason);

    protected override void OnReceived(byte[] buffer, long offset, long size) => Probe.OnReceived(this, buffer, offset, size);

    protected override void OnSent(long sent, long pending) => Probe.OnSent(this, sent, pending);

    protected override void OnEmpty() => Probe.OnEmpty(this);

    protected override void OnError(SocketError error) => Probe.OnError(this, error);
}

/// <summary>A Unix-socket session that forwards every hook to its <see cref="Probe"/>.</summary>
public sealed class ProbeUdsSession : UdsSession
{
    public ProbeUdsSession(UdsServer server, Probe probe)
        : base(server)
    {
        Probe = probe;
        AutoJoinMulticast = probe.AutoJoinMulticast;
    }

    public Probe Probe { get; }

    protected override void OnConnecting() => Probe.OnConnecting();

    protected override void OnConnected() => Probe.OnConnected(this);

    protected override void OnDisconnecting() => Probe.OnDisconnecting();

    protected override void OnDisconnected(DisconnectReason reason) => Probe.OnDisconnected(this, reason);

    protected override void OnReceived(byte[] buffer, long offset, long size) => Probe.OnReceived(this, buffer, offset, size);

    protected override void OnSent(long sent, long pending) => Probe.OnSent(this, sent, pending);

    protected override void OnEmpty() => Probe.OnEmpty(this);

    protected override void OnError(SocketError error) => Probe.OnError(this, error);
}

/// <summary>A TCP client that forwards every hook to its <see cref="Probe"/>.</summary>
public sealed class ProbeTcpClient(IPEndPoint endpoint, Probe probe) : TcpClient(endpoint)
{
    public Probe Probe { get; } = probe;

    protected override void OnConnecting() => Probe.OnConnecting();

    protected override void OnConnected() => Probe.OnConnected(this);

    protected override void OnDisconnecting() => Probe.OnDisconnecting();

    protected override void OnDisconnected(DisconnectReason reason) => Probe.OnDisconnected(this, reason);

    protected override void OnReceived(byte[] buffer, long offset, long size) => Probe.OnReceived(this, buffer, offset, size);

    protected override void OnSent(long sent, long pending) => Probe.OnSent(this, sent, pending);

    protected override void OnEmpty() => Probe.OnEmpty(this);

    protected override void OnError(SocketError error) => Probe.OnError(this, error);
}

/// <summary>A Unix-socket client that forwards every hook to its <see cref="Probe"/>.</summary>
public sealed class ProbeUdsClient(string path, Probe probe) : UdsClient(path)
{
    public Probe Probe { get; } = probe;

    protected override void OnConnecting() => Probe.OnConnecting();

    protected override void OnConnected() => Probe.OnConnected(this);

    protected override void OnDisconnecting() => Probe.OnDisconnecting();

    protected override void OnDisconnected(DisconnectReason reason) => Probe.OnDisconnected(this, reason);

    protected override void OnReceived(byte[] buffer, long offset, long size) => Probe.OnReceived(this, buffer, offset, size);

    protected override void OnSent(long sent, long pending) => Probe.OnSent(this, sent, pending);

    protected override void OnEmpty() => Probe.OnEmpty(this);

    protected override void OnError(SocketError error) => Probe.OnError(this, error);
}

/// <summary>Server-level hook records.</summary>
public sealed class ServerProbe
{
    public ConcurrentQueue<string> Events { get; } = new();

    /// <summary>Every session's probe, by session id (kept after the session disconnects).</summary>
    public ConcurrentDictionary<Guid, Probe> Sessions { get; } = new();

    /// <summary>Called for each new session's probe before the session connects: set its delegates here.</summary>
    public Action<Probe>? ConfigureSession { get; set; }

    public Action<StreamSession>? Connected { get; set; }

    public Action<StreamSession>? Disconnected { get; set; }

    internal Probe NewSessionProbe()
    {
        var probe = new Probe();
        ConfigureSession?.Invoke(probe);
        return probe;
    }

    /// <summary>The sessions are TLS sessions: ready (for multicasts) once OnHandshaked has run, not just OnConnected.</summary>
    public bool Secure { get; set; }

    /// <summary>Waits until <paramref name="count"/> sessions have run OnConnected (over TLS: OnHandshaked).</summary>
    public async Task WaitForSessionsAsync(int count, TimeSpan? timeout = null)
    {
        var limit = DateTime.UtcNow + (timeout ?? TimeSpan.FromSeconds(15));
        while (true)
        {
            var connected = 0;
            foreach (var probe in Sessions.Values)
            {
                if ((Secure ? probe.HandshakedSignal : probe.ConnectedSignal).Task.IsCompleted)
                    connected++;
            }

            if (connected >= count)
                return;
            if (DateTime.UtcNow > limit)
                Assert.Fail($"Only {connected} of {count} sessions connected in time.");
            await Task.Delay(5);
        }
    }
}

public sealed class ProbeTcpServer(IPEndPoint endpoint, ServerProbe probe) : TcpServer(endpoint), IProbeServer
{
    StreamSession? IProbeServer.FindSession(Guid id) => FindSession(id);

    public ServerProbe Probe { get; } = probe;

    protected override TcpSession CreateSession()
    {
        var sessionProbe = Probe.NewSessionProbe();
        var session = new ProbeTcpSession(this, sessionProbe);
        Probe.Sessions[session.Id] = sessionProbe;
        return session;
    }

    protected override void OnConnected(TcpSession session)
    {
        Probe.Events.Enqueue("connected");
        Probe.Connected?.Invoke(session);
    }

    protected override void OnDisconnected(TcpSession session)
    {
        Probe.Events.Enqueue("disconnected");
        Probe.Disconnected?.Invoke(session);
    }

    protected override void OnStarted() => Probe.Events.Enqueue("started");

    protected override void OnStopped() => Probe.Events.Enqueue("stopped");

    protected override void OnError(SocketError error) => Probe.Events.Enqueue("error:" + error);
}

public sealed class ProbeUdsServer(string path, ServerProbe probe) : UdsServer(path), IProbeServer
{
    StreamSession? IProbeServer.FindSession(Guid id) => FindSession(id);

    public ServerProbe Probe { get; } = probe;

    protected override UdsSession CreateSession()
    {
        var sessionProbe = Probe.NewSessionProbe();
        var session = new ProbeUdsSession(this, sessionProbe);
        Probe.Sessions[session.Id] = sessionProbe;
        return session;
    }

    protected override void OnConnected(UdsSession session)
    {
        Probe.Events.Enqueue("connected");
        Probe.Connected?.Invoke(session);
    }

    protected override void OnDisconnected(UdsSession session)
    {
        Probe.Events.Enqueue("disconnected");
        Probe.Disconnected?.Invoke(session);
    }

    protected override void OnStarted() => Probe.Events.Enqueue("started");

    protected override void OnStopped() => Probe.Events.Enqueue("stopped");

    protected override void OnError(SocketError error) => Probe.Events.Enqueue("error:" + error);
}

/// <summary>
/// One server under test on a given transport (TCP on 127.0.0.1 port 0, or a Unix socket in a
/// unique temp path), with a leak-checking buffer pool, plus ways to connect real clients to it.
/// Disposing it stops the server and checks that every pooled buffer came back.
/// </summary>
public sealed class ServerHarness : IAsyncDisposable
{
    private readonly IProbeServer _server;
    private readonly string? _directory;

    public ServerHarness(TransportKind kind)
    {
        Kind = kind;
        switch (kind)
        {
            case TransportKind.Tcp:
                _server = new ProbeTcpServer(new IPEndPoint(IPAddress.Loopback, 0), Probe) { BufferPool = Pool };
                break;
            case TransportKind.Uds:
                _directory = Path.Combine(Path.GetTempPath(), "netserver-" + Guid.NewGuid().ToString("N")[..12]);
                Directory.CreateDirectory(_directory);
                SocketPath = Path.Combine(_directory, "s.sock");
                _server = new ProbeUdsServer(SocketPath, Probe) { BufferPool = Pool };
                break;
            default:
                Probe.Secure = true;
                _server = SecureTransport.CreateServer(new IPEndPoint(IPAddress.Loopback, 0), Probe, Pool);
                break;
        }
    }

    public TransportKind Kind { get; }

    public ServerProbe Probe { get; } = new();

    internal LeakCheckingBufferPool Pool { get; } = new();

    /// <summary>The Unix socket path (UDS only).</summary>
    public string? SocketPath { get; }

    /// <summary>The server as its TCP type (TCP only).</summary>
    public TcpServer? Tcp => _server as TcpServer;

    public UdsServer? Uds => _server as UdsServer;

    /// <summary>The server as its common API (Start, Stop, Multicast, statistics, sessions).</summary>
    public IProbeServer Server => _server;

    public EndPoint Endpoint => _server.Endpoint;

    public bool IsStarted => _server.IsStarted;

    public long ConnectedSessions => _server.ConnectedSessions;

    public long BytesPending => _server.BytesPending;

    public long BytesSent => _server.BytesSent;

    public long BytesReceived => _server.BytesReceived;

    public bool Start() => _server.Start();

    public bool Stop() => _server.Stop();

    public Task<bool> StopAsync() => _server.StopAsync();

    public bool DisconnectAll() => _server.DisconnectAll();

    public bool Multicast(byte[] data) => _server.Multicast(data);

    public ValueTask<bool> MulticastAsync(ReadOnlyMemory<byte> data, CancellationToken token = default) => _server.MulticastAsync(data, token);

    /// <summary>The server-side session objects currently connected.</summary>
    public StreamSession? FindSession(Guid id) => _server.FindSession(id);

    /// <summary>A connected raw socket (not NetServer's client) for driving the server byte by byte.</summary>
    public async Task<Socket> ConnectRawAsync()
    {
        if (Kind == TransportKind.Ssl)
            return await SecureTransport.ConnectRelayAsync((IPEndPoint)Endpoint);

        var socket = Kind != TransportKind.Uds
            ? new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp)
            : new Socket(AddressFamily.Unix, SocketType.Stream, ProtocolType.Unspecified);
        await socket.ConnectAsync(Endpoint).WaitAsync(TimeSpan.FromSeconds(10));
        return socket;
    }

    /// <summary>A NetServer client for this server (not yet connected), forwarding hooks to <paramref name="probe"/>.</summary>
    public StreamClient CreateClient(Probe probe)
    {
        StreamClient client = Kind switch
        {
            TransportKind.Tcp => new ProbeTcpClient((IPEndPoint)Endpoint, probe),
            TransportKind.Uds => new ProbeUdsClient(SocketPath!, probe),
            _ => SecureTransport.CreateClient((IPEndPoint)Endpoint, probe),
        };
        client.BufferPool = Pool;
        return client;
    }

    public async ValueTask DisposeAsync()
    {
        if (IsStarted)
            await StopAsync().WaitAsync(TimeSpan.FromSeconds(15));
        _server.Dispose();
        await Pool.AssertAllReturnedAsync();
        if (_directory is not null)
        {
            try
            {
                Directory.Delete(_directory, recursive: true);
            }
            catch (IOException)
            {
                // A test that failed may leave a socket file open; the temp folder is harmless.
            }
        }
    }
}

/// <summary>Theory data: every stream transport.</summary>
public static class Transports
{
    /// <summary>TCP, Unix sockets and (where the build has it) TLS.</summary>
    public static TheoryData<TransportKind> All => SecureTransport.Enabled
        ? new() { TransportKind.Tcp, TransportKind.Uds, TransportKind.Ssl }
        : new() { TransportKind.Tcp, TransportKind.Uds };

    /// <summary>The plain socket transports, for tests that drive the server with raw socket bytes.</summary>
    public static TheoryData<TransportKind> Plain => new() { TransportKind.Tcp, TransportKind.Uds };
}
