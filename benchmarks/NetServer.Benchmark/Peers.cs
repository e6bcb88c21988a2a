using System;
using System.Net;
using System.Net.Sockets;
using System.Threading;
using System.Threading.Tasks;

namespace NetServer.Benchmark;

/// <summary>How the benchmark words a failure on stderr.</summary>
internal static class ErrorText
{
    /// <summary>The error code and, for a stream (TLS) failure, the exception the engine kept, which says more than the code.</summary>
    public static string Describe(SocketError error, Exception? detail) =>
        detail is null ? $"{error}" : $"{error} ({detail.GetType().Name}: {Describe(detail)})";

    /// <summary>The message with its inner ones: TLS failures say "see inner exception" and the inner one says why.</summary>
    public static string Describe(Exception exception)
    {
        var text = exception.Message;
        for (var inner = exception.InnerException; inner is not null; inner = inner.InnerException)
            text += $" -> {inner.Message}";
        return text;
    }
}

/// <summary>What every benchmark client counts; one per client, summed when reporting.</summary>
internal sealed class ClientCounters
{
    private long _received;
    private long _errors;
    private long _handshakes;
    private long _handshakeTicks;

    public long Received => Interlocked.Read(ref _received);

    public long Errors => Interlocked.Read(ref _errors);

    /// <summary>Handshake scenario: completed connect-and-handshake cycles.</summary>
    public long Handshakes => Interlocked.Read(ref _handshakes);

    /// <summary>Handshake scenario: their summed duration, in <see cref="System.Diagnostics.Stopwatch"/> ticks.</summary>
    public long HandshakeTicks => Interlocked.Read(ref _handshakeTicks);

    public void AddReceived(long bytes) => Interlocked.Add(ref _received, bytes);

    public void AddError() => Interlocked.Increment(ref _errors);

    public void AddHandshake(long ticks)
    {
        Interlocked.Add(ref _handshakeTicks, ticks);
        Interlocked.Increment(ref _handshakes);
    }
}

/// <summary>
/// The client side of every scenario, shared by the TCP, Unix-socket and TLS client classes: echo
/// sends its in-flight bytes once connected (TLS sends them once the handshake is over), then
/// returns everything it receives; multicast only counts; handshake only connects.
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

    public void Error(StreamConnection client, SocketError error)
    {
        Counters.AddError();
        Console.Error.WriteLine($"client error: {ErrorText.Describe(error, client.DisconnectException)}");
    }

    public void HandshakeFailed(Exception exception)
    {
        Counters.AddError();
        Console.Error.WriteLine($"client handshake failed: {ErrorText.Describe(exception)}");
    }
}

internal sealed class BenchTcpClient(IPEndPoint endpoint, ClientBehavior behavior) : TcpClient(endpoint)
{
    protected override void OnConnected() => behavior.Connected(this);

    protected override void OnReceived(byte[] buffer, long offset, long size) => behavior.Received(this, buffer, offset, size);

    protected override void OnError(SocketError error) => behavior.Error(this, error);
}

internal sealed class BenchUdsClient(string path, ClientBehavior behavior) : UdsClient(path)
{
    protected override void OnConnected() => behavior.Connected(this);

    protected override void OnReceived(byte[] buffer, long offset, long size) => behavior.Received(this, buffer, offset, size);

    protected override void OnError(SocketError error) => behavior.Error(this, error);
}

internal sealed class BenchSslClient(SslContext context, IPEndPoint endpoint, ClientBehavior behavior) : SslClient(context, endpoint)
{
    protected override void OnConnected() => behavior.Connected(this);

    protected override void OnReceived(byte[] buffer, long offset, long size) => behavior.Received(this, buffer, offset, size);

    protected override void OnError(SocketError error) => behavior.Error(this, error);

    protected override void OnHandshakeFailed(Exception exception) => behavior.HandshakeFailed(exception);
}

/// <summary>What a benchmark server counts, whatever its transport.</summary>
internal sealed class ServerCounters
{
    private long _errors;
    private long _established;

    public long Errors => Interlocked.Read(ref _errors);

    /// <summary>Sessions that came up: completed handshakes for TLS, accepted connections otherwise.</summary>
    public long Established => Interlocked.Read(ref _established);

    public void AddEstablished() => Interlocked.Increment(ref _established);

    public void AddError(SocketError error, Exception? detail = null) => AddError(ErrorText.Describe(error, detail));

    public void AddError(string error)
    {
        Interlocked.Increment(ref _errors);
        Console.Error.WriteLine($"server error: {error}");
    }
}

internal sealed class EchoTcpSession(TcpServer server, ServerCounters counters) : TcpSession(server)
{
    protected override void OnReceived(byte[] buffer, long offset, long size) => SendAsync(buffer, offset, size);

    protected override void OnError(SocketError error) => counters.AddError(error, DisconnectException);
}

internal sealed class BenchTcpServer(IPEndPoint endpoint, bool echo, ServerCounters counters) : TcpServer(endpoint)
{
    protected override TcpSession CreateSession() => echo ? new EchoTcpSession(this, counters) : new TcpSession(this);

    protected override void OnConnected(TcpSession session) => counters.AddEstablished();

    protected override void OnError(SocketError error) => counters.AddError(error);
}

internal sealed class EchoUdsSession(UdsServer server, ServerCounters counters) : UdsSession(server)
{
    protected override void OnReceived(byte[] buffer, long offset, long size) => SendAsync(buffer, offset, size);

    protected override void OnError(SocketError error) => counters.AddError(error, DisconnectException);
}

internal sealed class BenchUdsServer(string path, bool echo, ServerCounters counters) : UdsServer(path)
{
    protected override UdsSession CreateSession() => echo ? new EchoUdsSession(this, counters) : new UdsSession(this);

    protected override void OnConnected(UdsSession session) => counters.AddEstablished();

    protected override void OnError(SocketError error) => counters.AddError(error);
}

internal sealed class EchoSslSession(SslServer server, ServerCounters counters) : SslSession(server)
{
    protected override void OnReceived(byte[] buffer, long offset, long size) => SendAsync(buffer, offset, size);

    protected override void OnError(SocketError error) => counters.AddError(error, DisconnectException);
}

internal sealed class BenchSslServer(SslContext context, IPEndPoint endpoint, bool echo, ServerCounters counters) : SslServer(context, endpoint)
{
    protected override SslSession CreateSession() => echo ? new EchoSslSession(this, counters) : new SslSession(this);

    protected override void OnHandshaked(SslSession session) => counters.AddEstablished();

    protected override void OnHandshakeFailed(SslSession session, Exception exception) => counters.AddError($"handshake failed: {ErrorText.Describe(exception)}");

    protected override void OnError(SocketError error) => counters.AddError(error);
}

/// <summary>A benchmark server of any transport behind one small surface.</summary>
internal abstract class ServerHandle : IDisposable
{
    private ServerHandle(ServerCounters counters) => Counters = counters;

    public ServerCounters Counters { get; }

    public long Errors => Counters.Errors;

    public abstract EndPoint Endpoint { get; }

    public abstract long BytesReceived { get; }

    public abstract long BytesSent { get; }

    public abstract long ConnectedSessions { get; }

    public static ServerHandle Of<TSession>(StreamServer<TSession> server, ServerCounters counters)
        where TSession : StreamSession => new Typed<TSession>(server, counters);

    public abstract bool Start();

    public abstract bool Stop();

    public abstract ValueTask<bool> MulticastAsync(ReadOnlyMemory<byte> message, CancellationToken token);

    public abstract void Dispose();

    private sealed class Typed<TSession>(StreamServer<TSession> server, ServerCounters counters) : ServerHandle(counters)
        where TSession : StreamSession
    {
        public override EndPoint Endpoint => server.Endpoint;

        public override long BytesReceived => server.BytesReceived;

        public override long BytesSent => server.BytesSent;

        public override long ConnectedSessions => server.ConnectedSessions;

        public override bool Start() => server.Start();

        public override bool Stop() => server.Stop();

        public override ValueTask<bool> MulticastAsync(ReadOnlyMemory<byte> message, CancellationToken token) => server.MulticastAsync(message, token);

        public override void Dispose() => server.Dispose();
    }
}
