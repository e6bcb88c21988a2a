using System;
using System.Net;
using System.Net.Sockets;
using System.Threading;
using System.Threading.Tasks;

namespace NetServer.Benchmark;

/// <summary>What every benchmark client counts; one per client, summed when reporting.</summary>
internal sealed class ClientCounters
{
    private long _received;
    private long _errors;

    public long Received => Interlocked.Read(ref _received);

    public long Errors => Interlocked.Read(ref _errors);

    public void AddReceived(long bytes) => Interlocked.Add(ref _received, bytes);

    public void AddError() => Interlocked.Increment(ref _errors);
}

/// <summary>
/// The client side of both scenarios, shared by the TCP and Unix-socket client classes: echo sends
/// its in-flight bytes once connected, then returns everything it receives; multicast only counts.
/// </summary>
internal sealed class ClientBehavior(bool echo, byte[] initial)
{
    public ClientCounters Counters { get; } = new();

    public void Connected(StreamConnection client)
    {
        if (echo)
            client.SendAsync(initial);
    }

    public void Received(StreamConnection client, byte[] buffer, long offset, long size)
    {
        Counters.AddReceived(size);
        if (echo)
            client.SendAsync(buffer, offset, size);
    }

    public void Error(SocketError error)
    {
        Counters.AddError();
        Console.Error.WriteLine($"client error: {error}");
    }
}

internal sealed class BenchTcpClient(IPEndPoint endpoint, ClientBehavior behavior) : TcpClient(endpoint)
{
    public ClientBehavior Behavior { get; } = behavior;

    protected override void OnConnected() => Behavior.Connected(this);

    protected override void OnReceived(byte[] buffer, long offset, long size) => Behavior.Received(this, buffer, offset, size);

    protected override void OnError(SocketError error) => Behavior.Error(error);
}

internal sealed class BenchUdsClient(string path, ClientBehavior behavior) : UdsClient(path)
{
    public ClientBehavior Behavior { get; } = behavior;

    protected override void OnConnected() => Behavior.Connected(this);

    protected override void OnReceived(byte[] buffer, long offset, long size) => Behavior.Received(this, buffer, offset, size);

    protected override void OnError(SocketError error) => Behavior.Error(error);
}

/// <summary>Counts session errors of a benchmark server.</summary>
internal sealed class ServerCounters
{
    private long _errors;

    public long Errors => Interlocked.Read(ref _errors);

    public void AddError(SocketError error)
    {
        Interlocked.Increment(ref _errors);
        Console.Error.WriteLine($"server error: {error}");
    }
}

internal sealed class EchoTcpSession(TcpServer server, ServerCounters counters) : TcpSession(server)
{
    protected override void OnReceived(byte[] buffer, long offset, long size) => SendAsync(buffer, offset, size);

    protected override void OnError(SocketError error) => counters.AddError(error);
}

internal sealed class BenchTcpServer(IPEndPoint endpoint, bool echo) : TcpServer(endpoint)
{
    public ServerCounters Counters { get; } = new();

    protected override TcpSession CreateSession() => echo ? new EchoTcpSession(this, Counters) : new TcpSession(this);

    protected override void OnError(SocketError error) => Counters.AddError(error);
}

internal sealed class EchoUdsSession(UdsServer server, ServerCounters counters) : UdsSession(server)
{
    protected override void OnReceived(byte[] buffer, long offset, long size) => SendAsync(buffer, offset, size);

    protected override void OnError(SocketError error) => counters.AddError(error);
}

internal sealed class BenchUdsServer(string path, bool echo) : UdsServer(path)
{
    public ServerCounters Counters { get; } = new();

    protected override UdsSession CreateSession() => echo ? new EchoUdsSession(this, Counters) : new UdsSession(this);

    protected override void OnError(SocketError error) => Counters.AddError(error);
}

/// <summary>A benchmark server of either transport behind one small surface.</summary>
internal sealed class ServerHandle : IDisposable
{
    private readonly BenchTcpServer? _tcp;
    private readonly BenchUdsServer? _uds;

    public ServerHandle(Options options)
    {
        var echo = options.Scenario == "echo";
        if (options.Protocol == "tcp")
            _tcp = new BenchTcpServer(new IPEndPoint(IPAddress.Parse(options.Address), options.EffectivePort), echo) { OptionNoDelay = true };
        else
            _uds = new BenchUdsServer(options.EffectivePath, echo);
    }

    public EndPoint Endpoint => _tcp?.Endpoint ?? _uds!.Endpoint;

    public long BytesReceived => _tcp?.BytesReceived ?? _uds!.BytesReceived;

    public long BytesSent => _tcp?.BytesSent ?? _uds!.BytesSent;

    public long ConnectedSessions => _tcp?.ConnectedSessions ?? _uds!.ConnectedSessions;

    public long Errors => _tcp?.Counters.Errors ?? _uds!.Counters.Errors;

    public bool Start() => _tcp?.Start() ?? _uds!.Start();

    public bool Stop() => _tcp?.Stop() ?? _uds!.Stop();

    public ValueTask<bool> MulticastAsync(ReadOnlyMemory<byte> message, CancellationToken token) =>
        _tcp?.MulticastAsync(message, token) ?? _uds!.MulticastAsync(message, token);

    public void Dispose()
    {
        _tcp?.Dispose();
        _uds?.Dispose();
    }
}
