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

    /// <summary>Set when OnReceived was ever entered while another OnReceived of the same connection ran.</summary>
    public bool ReceivedOverlapped { get; private set; }

    private int _disconnectedCount;
    private long _receivedBytes;

    /// <summary>How many times OnDisconnected ran.</summary>
    public int DisconnectedCount => Volatile.Read(ref _disconnectedCount);

    /// <summary>Bytes delivered to OnReceived so far.</summary>
    public long ReceivedBytes => Interlocked.Read(ref _receivedBytes);

    internal void OnConnecting() => Events.Enqueue("connecting");

    internal void OnConnected(StreamConnection c)
    {
        Events.Enqueue("connected");
        Connected?.Invoke(c);
        ConnectedSignal.TrySetResult();
    }

    internal void OnDisconnecting() => Events.Enqueue("disconnecting");

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
public sealed class ProbeTcpSession(TcpServer server, Probe probe) : TcpSession(server)
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

/// <summary>A Unix-socket session that forwards every hook to its <see cref="Probe"/>.</summary>
public sealed class ProbeUdsSession(UdsServer server, Probe probe) : UdsSession(server)
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

    /// <summary>Waits until <paramref name="count"/> sessions have run OnConnected.</summary>
    public async Task WaitForSessionsAsync(int count, TimeSpan? timeout = null)
    {
        var limit = DateTime.UtcNow + (timeout ?? TimeSpan.FromSeconds(15));
        while (true)
        {
            var connected = 0;
            foreach (var probe in Sessions.Values)
            {
                if (probe.ConnectedSignal.Task.IsCompleted)
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

public sealed class ProbeTcpServer(IPEndPoint endpoint, ServerProbe probe) : TcpServer(endpoint)
{
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

public sealed class ProbeUdsServer(string path, ServerProbe probe) : UdsServer(path)
{
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
    private readonly ProbeTcpServer? _tcp;
    private readonly ProbeUdsServer? _uds;
    private readonly string? _directory;

    public ServerHarness(TransportKind kind)
    {
        Kind = kind;
        if (kind == TransportKind.Tcp)
        {
            _tcp = new ProbeTcpServer(new IPEndPoint(IPAddress.Loopback, 0), Probe) { BufferPool = Pool };
        }
        else
        {
            _directory = Path.Combine(Path.GetTempPath(), "netserver-" + Guid.NewGuid().ToString("N")[..12]);
            Directory.CreateDirectory(_directory);
            SocketPath = Path.Combine(_directory, "s.sock");
            _uds = new ProbeUdsServer(SocketPath, Probe) { BufferPool = Pool };
        }
    }

    public TransportKind Kind { get; }

    public ServerProbe Probe { get; } = new();

    internal LeakCheckingBufferPool Pool { get; } = new();

    /// <summary>The Unix socket path (UDS only).</summary>
    public string? SocketPath { get; }

    /// <summary>The server as its common API (Start, Stop, Multicast, statistics, sessions).</summary>
    public TcpServer? Tcp => _tcp;

    public UdsServer? Uds => _uds;

    public EndPoint Endpoint => _tcp is not null ? _tcp.Endpoint : _uds!.Endpoint;

    public bool IsStarted => _tcp?.IsStarted ?? _uds!.IsStarted;

    public long ConnectedSessions => _tcp?.ConnectedSessions ?? _uds!.ConnectedSessions;

    public long BytesPending => _tcp?.BytesPending ?? _uds!.BytesPending;

    public long BytesSent => _tcp?.BytesSent ?? _uds!.BytesSent;

    public long BytesReceived => _tcp?.BytesReceived ?? _uds!.BytesReceived;

    public bool Start() => _tcp?.Start() ?? _uds!.Start();

    public bool Stop() => _tcp?.Stop() ?? _uds!.Stop();

    public Task<bool> StopAsync() => _tcp?.StopAsync() ?? _uds!.StopAsync();

    public bool DisconnectAll() => _tcp?.DisconnectAll() ?? _uds!.DisconnectAll();

    public bool Multicast(byte[] data) => _tcp?.Multicast(data) ?? _uds!.Multicast(data);

    public ValueTask<bool> MulticastAsync(ReadOnlyMemory<byte> data, CancellationToken token = default) =>
        _tcp?.MulticastAsync(data, token) ?? _uds!.MulticastAsync(data, token);

    /// <summary>The server-side session objects currently connected.</summary>
    public StreamSession? FindSession(Guid id) => _tcp is not null ? _tcp.FindSession(id) : _uds!.FindSession(id);

    /// <summary>A connected raw socket (not NetServer's client) for driving the server byte by byte.</summary>
    public async Task<Socket> ConnectRawAsync()
    {
        var socket = Kind == TransportKind.Tcp
            ? new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp)
            : new Socket(AddressFamily.Unix, SocketType.Stream, ProtocolType.Unspecified);
        await socket.ConnectAsync(Endpoint).WaitAsync(TimeSpan.FromSeconds(10));
        return socket;
    }

    /// <summary>A NetServer client for this server (not yet connected), forwarding hooks to <paramref name="probe"/>.</summary>
    public StreamClient CreateClient(Probe probe)
    {
        StreamClient client = Kind == TransportKind.Tcp
            ? new ProbeTcpClient((IPEndPoint)Endpoint, probe)
            : new ProbeUdsClient(SocketPath!, probe);
        client.BufferPool = Pool;
        return client;
    }

    public async ValueTask DisposeAsync()
    {
        if (IsStarted)
            await StopAsync().WaitAsync(TimeSpan.FromSeconds(15));
        _tcp?.Dispose();
        _uds?.Dispose();
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
    public static TheoryData<TransportKind> All => new() { TransportKind.Tcp, TransportKind.Uds };
}

/// <summary>Bounded waits, so a broken build fails in seconds instead of hanging.</summary>
public static class Wait
{
    public static readonly TimeSpan Default = TimeSpan.FromSeconds(15);

    /// <summary>Polls <paramref name="condition"/> until it holds; fails the test with <paramref name="what"/> after the timeout.</summary>
    public static async Task UntilAsync(Func<bool> condition, string what, TimeSpan? timeout = null)
    {
        var limit = DateTime.UtcNow + (timeout ?? Default);
        while (!condition())
        {
            if (DateTime.UtcNow > limit)
                Assert.Fail($"Timed out waiting for: {what}");
            await Task.Delay(5);
        }
    }

    /// <summary>Reads exactly <paramref name="count"/> bytes from a raw socket (bounded).</summary>
    public static async Task<byte[]> ReadExactlyAsync(Socket socket, int count, TimeSpan? timeout = null)
    {
        var buffer = new byte[count];
        var read = 0;
        using var cts = new CancellationTokenSource(timeout ?? Default);
        while (read < count)
        {
            var n = await socket.ReceiveAsync(buffer.AsMemory(read), SocketFlags.None, cts.Token);
            if (n == 0)
                Assert.Fail($"The connection closed after {read} of {count} bytes.");
            read += n;
        }

        return buffer;
    }

    /// <summary>Reads until the peer closes (bounded); returns everything read.</summary>
    public static async Task<byte[]> ReadToEndAsync(Socket socket, TimeSpan? timeout = null)
    {
        using var cts = new CancellationTokenSource(timeout ?? Default);
        using var all = new MemoryStream();
        var buffer = new byte[65536];
        while (true)
        {
            var n = await socket.ReceiveAsync(buffer, SocketFlags.None, cts.Token);
            if (n == 0)
                return all.ToArray();
            all.Write(buffer, 0, n);
        }
    }
}
