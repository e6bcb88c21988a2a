using System;
using System.Net;
using System.Net.Sockets;
using System.Threading;
using System.Threading.Tasks;

namespace NetServer.Benchmark;

/// <summary>How the benchmark words a failure on stderr.</summary>
internal static class ErrorText
{
    /// <summary>Error lines written before the rest are only counted (a datagram socket can fail once per datagram).</summary>
    private const int PrintedLimit = 20;
    private static int s_printed;

    /// <summary>Writes <paramref name="line"/> to stderr, unless <see cref="PrintedLimit"/> lines were written already.</summary>
    public static void Print(string line)
    {
        var printed = Interlocked.Increment(ref s_printed);
        if (printed <= PrintedLimit)
            Console.Error.WriteLine(line);
        else if (printed == PrintedLimit + 1)
            Console.Error.WriteLine($"(further errors are counted, not shown)");
    }

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
    private long _datagramsSent;
    private long _datagramsReceived;
    private long _refills;
    private long _datagramsExpected;

    /// <summary>Bytes received.</summary>
    public long Received => Interlocked.Read(ref _received);

    public long Errors => Interlocked.Read(ref _errors);

    /// <summary>Handshake scenario: completed connect-and-handshake cycles.</summary>
    public long Handshakes => Interlocked.Read(ref _handshakes);

    /// <summary>Handshake scenario: their summed duration, in <see cref="System.Diagnostics.Stopwatch"/> ticks.</summary>
    public long HandshakeTicks => Interlocked.Read(ref _handshakeTicks);

    /// <summary>udp: datagrams sent (refills included).</summary>
    public long DatagramsSent => Interlocked.Read(ref _datagramsSent);

    /// <summary>udp: datagrams received.</summary>
    public long DatagramsReceived => Interlocked.Read(ref _datagramsReceived);

    /// <summary>udp echo: datagrams added by the once-a-second refill.</summary>
    public long Refills => Interlocked.Read(ref _refills);

    /// <summary>udp multicast: the datagrams numbered from the first to the last one received (what a loss-free client would have got).</summary>
    public long DatagramsExpected => Interlocked.Read(ref _datagramsExpected);

    public void AddReceived(long bytes) => Interlocked.Add(ref _received, bytes);

    public void AddDatagramSent() => Interlocked.Increment(ref _datagramsSent);

    public void AddDatagramReceived() => Interlocked.Increment(ref _datagramsReceived);

    public void AddRefill() => Interlocked.Increment(ref _refills);

    public void SetDatagramsExpected(long count) => Interlocked.Exchange(ref _datagramsExpected, count);

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
        ErrorText.Print($"client error: {ErrorText.Describe(error, client.DisconnectException)}");
    }

    public void HandshakeFailed(Exception exception)
    {
        Counters.AddError();
        ErrorText.Print($"client handshake failed: {ErrorText.Describe(exception)}");
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
    private long _dropped;

    public long Errors => Interlocked.Read(ref _errors);

    /// <summary>udp: datagrams the server's send queue refused (it was full); UDP may drop, so these are not errors.</summary>
    public long Dropped => Interlocked.Read(ref _dropped);

    public void AddDropped() => Interlocked.Increment(ref _dropped);

    /// <summary>Sessions that came up: completed handshakes for TLS, accepted connections otherwise.</summary>
    public long Established => Interlocked.Read(ref _established);

    public void AddEstablished() => Interlocked.Increment(ref _established);

    public void AddError(SocketError error, Exception? detail = null) => AddError(ErrorText.Describe(error, detail));

    public void AddError(string error)
    {
        Interlocked.Increment(ref _errors);
        ErrorText.Print($"server error: {error}");
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

    /// <summary>Where this process's clients go: the server's endpoint, or for udp multicast the group.</summary>
    public virtual EndPoint ClientTarget => Endpoint;

    public abstract long BytesReceived { get; }

    public abstract long BytesSent { get; }

    public abstract long ConnectedSessions { get; }

    /// <summary>Whether a multicast reaches anyone: a stream server needs a connected session; a datagram goes to the group anyway.</summary>
    public virtual bool HasAudience => ConnectedSessions > 0;

    /// <summary>udp: the server's datagram totals since it started; null for stream servers.</summary>
    public virtual DatagramFigures? Datagrams => null;

    public static ServerHandle Of<TSession>(StreamServer<TSession> server, ServerCounters counters)
        where TSession : StreamSession => new Typed<TSession>(server, counters);

    /// <summary>A UDP server; with a <paramref name="group"/> it starts as a multicast server sending there.</summary>
    public static ServerHandle Of(UdpServer server, ServerCounters counters, IPEndPoint? group) => new Datagram(server, counters, group);

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

    private sealed class Datagram(UdpServer server, ServerCounters counters, IPEndPoint? group) : ServerHandle(counters)
    {
        public override EndPoint Endpoint => server.Endpoint;

        public override EndPoint ClientTarget => group ?? server.Endpoint;

        public override long BytesReceived => server.BytesReceived;

        public override long BytesSent => server.BytesSent;

        public override long ConnectedSessions => 0;

        public override bool HasAudience => true;

        public override DatagramFigures Datagrams => new()
        {
            ServerReceived = server.DatagramsReceived,
            ServerSent = server.DatagramsSent,
            ServerDropped = Counters.Dropped,
        };

        public override bool Start() => group is null ? server.Start() : server.Start(group);

        public override bool Stop() => server.Stop();

        public override ValueTask<bool> MulticastAsync(ReadOnlyMemory<byte> message, CancellationToken token) => server.MulticastAsync(message, token);

        public override void Dispose() => server.Dispose();
    }
}

/// <summary>
/// A benchmark client of any transport behind one small surface, for the echo and multicast
/// scenarios: connect, count, and for udp echo the once-a-second refill and the final count of
/// the datagrams still in flight.
/// </summary>
internal abstract class ClientHandle : IAsyncDisposable
{
    private ClientHandle(ClientCounters counters) => Counters = counters;

    public ClientCounters Counters { get; }

    /// <summary>Why the client is not connected after <see cref="ConnectAsync"/>; null when it is.</summary>
    public abstract string? Failure { get; }

    /// <summary>Datagrams sent and not (yet) received back; 0 for stream clients.</summary>
    public virtual long InFlight => 0;

    public static ClientHandle Of(StreamClient client, ClientBehavior behavior) => new Stream(client, behavior.Counters);

    public static ClientHandle Of(UdpClient client, DatagramBehavior behavior, IPAddress? group) => new Datagram(client, behavior, group);

    /// <summary>Connects; a refused or failed connection throws, or leaves <see cref="Failure"/> set.</summary>
    public abstract Task ConnectAsync(CancellationToken token);

    /// <summary>Called once a second while the run lasts.</summary>
    public virtual void Tick()
    {
    }

    /// <summary>The run is over: send nothing more, so what is still in flight can be counted home.</summary>
    public virtual void StopSending()
    {
    }

    public abstract ValueTask DisposeAsync();

    private sealed class Stream(StreamClient client, ClientCounters counters) : ClientHandle(counters)
    {
        public override string? Failure => client.IsConnected ? null
            : $"{client.DisconnectReason}{(client.DisconnectException is { } e ? ": " + ErrorText.Describe(e) : "")}";

        public override Task ConnectAsync(CancellationToken token) => client.ConnectAsync(token);

        public override ValueTask DisposeAsync() => client.DisposeAsync();
    }

    private sealed class Datagram(UdpClient client, DatagramBehavior behavior, IPAddress? group) : ClientHandle(behavior.Counters)
    {
        public override string? Failure => client.IsConnected ? null : "the socket could not be opened";

        public override long InFlight => Math.Max(0, Counters.DatagramsSent - Counters.DatagramsReceived);

        public override Task ConnectAsync(CancellationToken token)
        {
            // Opening a datagram socket does not wait for anyone; a failure is reported through OnError.
            if (client.Connect() && group is not null)
                client.JoinMulticastGroup(group);
            return Task.CompletedTask;
        }

        public override void Tick() => behavior.Tick(client);

        public override void StopSending() => behavior.StopSending();

        public override async ValueTask DisposeAsync() => await client.DisposeAsync();
    }
}
