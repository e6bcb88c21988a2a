using System;
using System.Diagnostics;
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
    private long _messages;

    /// <summary>Bytes received (not counted by msg clients, which count <see cref="Messages"/>).</summary>
    public long Received => Interlocked.Read(ref _received);

    /// <summary>msg: messages received, counted one by one.</summary>
    public long Messages => Interlocked.Read(ref _messages);

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

    /// <summary>
    /// msg: one message received. Called only from the client's receive loop (OnMessage never runs
    /// concurrently with itself), so a plain add published with a volatile write is enough: no
    /// interlocked operation per message, which the byte-counting clients do not pay either (they
    /// add once per received chunk). Bytes are not counted beside it: two counters read while the
    /// loop runs would not agree with each other.
    /// </summary>
    public void AddMessage() => Volatile.Write(ref _messages, _messages + 1);

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
/// The client side of every scenario, shared by the TCP, Unix-socket and TLS client classes. This
/// base only counts (multicast) or only connects (handshake); the subclasses send: echo, reply and
/// latency start once connected (TLS: once the handshake is over).
/// </summary>
internal class ClientBehavior
{
    public ClientCounters Counters { get; } = new();

    public virtual void Connected(StreamConnection client)
    {
    }

    public virtual void Received(StreamConnection client, byte[] buffer, long offset, long size) => Counters.AddReceived(size);

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

/// <summary>Echo: sends its in-flight bytes with one send, then returns every chunk it receives with one send.</summary>
internal sealed class EchoBehavior(byte[] initial) : ClientBehavior
{
    public override void Connected(StreamConnection client) => client.SendAsync(initial);

    public override void Received(StreamConnection client, byte[] buffer, long offset, long size)
    {
        Counters.AddReceived(size);
        client.SendAsync(buffer, offset, size);
    }
}

/// <summary>Reply: sends <paramref name="messages"/> messages with a send each, then answers every message it receives with a send of its own.</summary>
internal sealed class ReplyBehavior(byte[] message, int messages) : ClientBehavior
{
    private readonly MessageReplier _replier = new(message.Length);

    public override void Connected(StreamConnection client)
    {
        for (var i = 0; i < messages; i++)
            client.SendAsync(message.AsSpan());
    }

    public override void Received(StreamConnection client, byte[] buffer, long offset, long size)
    {
        Counters.AddReceived(size);
        _replier.Received(client, new ReadOnlySpan<byte>(buffer, (int)offset, (int)size));
    }
}

/// <summary>
/// Latency: one message in flight. Sends it, waits until as many bytes have come back (across
/// chunks), records the round trip, sends again. Any echo server answers it. The histogram has
/// one writer, this client's receive hook (which never runs concurrently with itself, and the
/// first send happens before the first receive can).
/// </summary>
internal sealed class LatencyBehavior(byte[] message) : ClientBehavior
{
    private long _sentAt;
    private long _pending;
    private volatile bool _recording;

    public LatencyHistogram RoundTrips { get; } = new();

    /// <summary>Round trips that end while this is true are recorded (the measured window).</summary>
    public bool Recording
    {
        get => _recording;
        set => _recording = value;
    }

    public override void Connected(StreamConnection client) => SendNext(client);

    public override void Received(StreamConnection client, byte[] buffer, long offset, long size)
    {
        Counters.AddReceived(size);
        _pending += size;
        if (_pending < message.Length)
            return;
        var now = Stopwatch.GetTimestamp();
        if (_recording)
            RoundTrips.RecordTicks(now - _sentAt);
        _pending -= message.Length;
        SendNext(client);
    }

    private void SendNext(StreamConnection client)
    {
        _sentAt = Stopwatch.GetTimestamp();
        client.SendAsync(message.AsSpan());
    }
}

/// <summary>
/// The reply scenario's side of one connection: every complete message of <paramref name="size"/>
/// bytes is answered with a send of its own, from OnReceived, as chat and game servers answer
/// their requests (echo sends a received chunk back with one send, however many messages it
/// holds). A message split across chunks is put together here first. OnReceived never runs
/// concurrently with itself, so a connection's replier needs no lock.
/// </summary>
internal sealed class MessageReplier(int size)
{
    private readonly byte[] _partial = new byte[size];
    private int _filled;

    public void Received(StreamConnection connection, ReadOnlySpan<byte> data)
    {
        if (_filled > 0)
        {
            var take = Math.Min(size - _filled, data.Length);
            data[..take].CopyTo(_partial.AsSpan(_filled));
            _filled += take;
            data = data[take..];
            if (_filled < size)
                return;
            connection.SendAsync(_partial.AsSpan());
            _filled = 0;
        }

        for (; data.Length >= size; data = data[size..])
            connection.SendAsync(data[..size]);
        data.CopyTo(_partial);
        _filled = data.Length;
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

/// <summary>
/// What a stream server's sessions do with what they receive: nothing (multicast, handshake), send
/// every chunk back with one send (echo, latency), or answer every message of
/// <see cref="ReplySize"/> bytes with a send of its own (reply).
/// </summary>
internal readonly record struct ServerMode(bool Echoes, int ReplySize)
{
    public static ServerMode Of(Options options) => options.Scenario switch
    {
        "echo" or "latency" => new(true, 0),
        "reply" => new(true, options.Size),
        _ => new(false, 0),
    };

    /// <summary>A session's own replier in the reply scenario; null when it echoes chunks.</summary>
    public MessageReplier? CreateReplier() => ReplySize > 0 ? new MessageReplier(ReplySize) : null;
}

/// <summary>What a benchmark server counts, whatever its transport.</summary>
internal sealed class ServerCounters
{
    private long _errors;
    private long _established;
    private long _dropped;
    private long _requests;

    public long Errors => Interlocked.Read(ref _errors);

    /// <summary>http: requests answered (an interlocked add each, as kestrel-reference --stats counts them).</summary>
    public long Requests => Interlocked.Read(ref _requests);

    public void AddRequest() => Interlocked.Increment(ref _requests);

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

internal sealed class EchoTcpSession(TcpServer server, ServerCounters counters, MessageReplier? replier) : TcpSession(server)
{
    protected override void OnReceived(byte[] buffer, long offset, long size)
    {
        if (replier is null)
            SendAsync(buffer, offset, size);
        else
            replier.Received(this, new ReadOnlySpan<byte>(buffer, (int)offset, (int)size));
    }

    protected override void OnError(SocketError error) => counters.AddError(error, DisconnectException);
}

internal sealed class BenchTcpServer(IPEndPoint endpoint, ServerMode mode, ServerCounters counters) : TcpServer(endpoint)
{
    protected override TcpSession CreateSession() => mode.Echoes ? new EchoTcpSession(this, counters, mode.CreateReplier()) : new TcpSession(this);

    protected override void OnConnected(TcpSession session) => counters.AddEstablished();

    protected override void OnError(SocketError error) => counters.AddError(error);
}

internal sealed class EchoUdsSession(UdsServer server, ServerCounters counters, MessageReplier? replier) : UdsSession(server)
{
    protected override void OnReceived(byte[] buffer, long offset, long size)
    {
        if (replier is null)
            SendAsync(buffer, offset, size);
        else
            replier.Received(this, new ReadOnlySpan<byte>(buffer, (int)offset, (int)size));
    }

    protected override void OnError(SocketError error) => counters.AddError(error, DisconnectException);
}

internal sealed class BenchUdsServer(string path, ServerMode mode, ServerCounters counters) : UdsServer(path)
{
    protected override UdsSession CreateSession() => mode.Echoes ? new EchoUdsSession(this, counters, mode.CreateReplier()) : new UdsSession(this);

    protected override void OnConnected(UdsSession session) => counters.AddEstablished();

    protected override void OnError(SocketError error) => counters.AddError(error);
}

internal sealed class EchoSslSession(SslServer server, ServerCounters counters, MessageReplier? replier) : SslSession(server)
{
    protected override void OnReceived(byte[] buffer, long offset, long size)
    {
        if (replier is null)
            SendAsync(buffer, offset, size);
        else
            replier.Received(this, new ReadOnlySpan<byte>(buffer, (int)offset, (int)size));
    }

    protected override void OnError(SocketError error) => counters.AddError(error, DisconnectException);
}

internal sealed class BenchSslServer(SslContext context, IPEndPoint endpoint, ServerMode mode, ServerCounters counters) : SslServer(context, endpoint)
{
    protected override SslSession CreateSession() => mode.Echoes ? new EchoSslSession(this, counters, mode.CreateReplier()) : new SslSession(this);

    protected override void OnHandshaked(SslSession session) => counters.AddEstablished();

    protected override void OnHandshakeFailed(SslSession session, Exception exception) => counters.AddError($"handshake failed: {ErrorText.Describe(exception)}");

    protected override void OnError(SocketError error) => counters.AddError(error);
}

/// <summary>A benchmark server of any transport behind one small surface.</summary>
internal abstract partial class ServerHandle : IDisposable
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

    /// <summary>--logging: the server's events go to this listener (set before Start).</summary>
    public abstract Diagnostics.NetServerEventListener? EventListener { set; }

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

        public override Diagnostics.NetServerEventListener? EventListener
        {
            set => server.EventListener = value;
        }

        public override bool Start() => server.Start();

        public override bool Stop() => server.Stop();

        public override ValueTask<bool> MulticastAsync(ReadOnlyMemory<byte> message, CancellationToken token) => server.MulticastAsync(message, token);

        public override void Dispose() => server.Dispose();
    }
}
