using System;
using System.IO;
using System.Net;
using System.Net.Sockets;
using System.Threading;
using System.Threading.Tasks;

namespace NetServer.Tests.Infrastructure;

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
