using System;
using System.Net;
using System.Net.Sockets;
using System.Threading;
using System.Threading.Tasks;

namespace NetServer.Benchmark;

/// <summary>
/// The msg client side, for the message API both ways: echo sends <c>initial</c> messages once
/// connected, then sends every message it receives back as a message of its own (one message each
/// way per echo); multicast (<c>initial</c> 0) only counts. Messages are counted one by one.
/// </summary>
internal sealed class MessageBehavior(int initial, byte[] message)
{
    public ClientCounters Counters { get; } = new();

    public void Connected(MessageProtocol client)
    {
        for (var i = 0; i < initial; i++)
            client.SendAsync(message.AsSpan());
    }

    public void Received(MessageProtocol client, ReadOnlySpan<byte> received)
    {
        Counters.AddMessage();
        if (initial > 0)
            client.SendAsync(received);
    }

    /// <summary>A client only ends its connection itself, when the run is over: any other end is a failure.</summary>
    public void Disconnected(DisconnectReason reason, Exception? detail)
    {
        if (reason is DisconnectReason.LocalDisconnect or DisconnectReason.Disposed)
            return;
        Counters.AddError();
        ErrorText.Print($"client disconnected: {MessagePeers.Describe(reason, detail)}");
    }
}

/// <summary>A <see cref="MessageClient"/> (TCP, TLS or Unix socket, by constructor) that hands its messages to a <see cref="MessageBehavior"/>.</summary>
internal sealed class BenchMessageClient : MessageClient
{
    private readonly MessageBehavior _behavior;

    public BenchMessageClient(IPEndPoint endpoint, MessageBehavior behavior)
        : base(endpoint) => _behavior = Configure(behavior);

    public BenchMessageClient(SslContext context, IPEndPoint endpoint, MessageBehavior behavior)
        : base(context, endpoint) => _behavior = Configure(behavior);

    public BenchMessageClient(UnixDomainSocketEndPoint endpoint, MessageBehavior behavior)
        : base(endpoint) => _behavior = Configure(behavior);

    protected override void OnConnected()
    {
        base.OnConnected();
        _behavior.Connected(this);
    }

    protected override void OnMessage(ReadOnlySpan<byte> message) => _behavior.Received(this, message);

    protected override void OnDisconnected(DisconnectReason reason)
    {
        base.OnDisconnected(reason);
        _behavior.Disconnected(reason, Connection?.DisconnectException);
    }

    private MessageBehavior Configure(MessageBehavior behavior)
    {
        MessagePeers.SetNoDelay(this);
        return behavior;
    }
}

/// <summary>A <see cref="MessageServer"/> whose sessions send every message back (echo) or only take multicasts.</summary>
internal sealed class BenchMessageServer : MessageServer
{
    private readonly bool _echo;
    private readonly ServerCounters _counters;

    public BenchMessageServer(EndPoint endpoint, bool echo, ServerCounters counters)
        : base(endpoint) => (_echo, _counters) = (echo, counters);

    public BenchMessageServer(SslContext context, IPEndPoint endpoint, bool echo, ServerCounters counters)
        : base(context, endpoint) => (_echo, _counters) = (echo, counters);

    protected override MessageSession CreateSession() => new BenchMessageSession(this, _echo, _counters);

    protected override void OnError(SocketError error) => _counters.AddError(error);
}

internal sealed class BenchMessageSession(MessageServer server, bool echo, ServerCounters counters) : MessageSession(server)
{
    protected override void OnConnected()
    {
        MessagePeers.SetNoDelay(this);
        counters.AddEstablished();
    }

    protected override void OnMessage(ReadOnlySpan<byte> message)
    {
        if (echo)
            SendAsync(message);
    }

    protected override void OnDisconnected(DisconnectReason reason)
    {
        base.OnDisconnected(reason);
        MessagePeers.SessionEnded(counters, reason, Connection?.DisconnectException);
    }
}

/// <summary>What the msg and proto peers share: Nagle off, and which ends of a session are failures.</summary>
internal static class MessagePeers
{
    public static string Describe(DisconnectReason reason, Exception? detail) =>
        detail is null ? $"{reason}" : $"{reason} ({detail.GetType().Name}: {ErrorText.Describe(detail)})";

    /// <summary>Nagle off, as on the tcp and ssl clients (the transport client takes it for the next connect).</summary>
    public static void SetNoDelay(MessageClient client)
    {
        if (client.Transport is TcpClientBase tcp)
            tcp.OptionNoDelay = true;
    }

    /// <summary>
    /// Nagle off on an accepted session: MessageServer has no OptionNoDelay (its TCP server
    /// underneath is not exposed), so set it on the socket, as the tcp and ssl servers do with OptionNoDelay.
    /// </summary>
    public static void SetNoDelay(MessageSession session)
    {
        if (session.Connection?.Socket is { ProtocolType: ProtocolType.Tcp } socket)
            socket.NoDelay = true;
    }

    /// <summary>
    /// Counts a session's end as an error unless it is how a run ends: clients close (or reset,
    /// with echoes unread) when their run is over, and Stop ends the rest.
    /// </summary>
    public static void SessionEnded(ServerCounters counters, DisconnectReason reason, Exception? detail)
    {
        if (reason is not (DisconnectReason.PeerClosed or DisconnectReason.ConnectionReset or DisconnectReason.LocalDisconnect
            or DisconnectReason.ServerStopped or DisconnectReason.Disposed))
            counters.AddError($"session disconnected: {Describe(reason, detail)}");
    }
}

internal abstract partial class ServerHandle
{
    public static ServerHandle Of(MessageServer server, ServerCounters counters) => new Message(server, counters);

    /// <summary>
    /// A message server. Its <c>Multicast</c> does not wait for slow sessions (one whose send queue
    /// is over its limit is disconnected), so this handle paces it (<see cref="MulticastPacer"/>):
    /// the backpressure the stream servers' <c>MulticastAsync</c> gives.
    /// </summary>
    private sealed class Message : ServerHandle
    {
        private readonly MessageServer _server;
        private readonly MulticastPacer _pacer;

        public Message(MessageServer server, ServerCounters counters)
            : base(counters)
        {
            _server = server;
            _pacer = new MulticastPacer(IsBacklogged);
        }

        public override EndPoint Endpoint => _server.Endpoint;

        public override long BytesReceived => _server.BytesReceived;

        public override long BytesSent => _server.BytesSent;

        public override long ConnectedSessions => _server.ConnectedSessions;

        public override Diagnostics.NetServerEventListener? EventListener
        {
            set => _server.EventListener = value;
        }

        public override bool Start() => _server.Start();

        public override bool Stop() => _server.Stop();

        public override async ValueTask<bool> MulticastAsync(ReadOnlyMemory<byte> message, CancellationToken token)
        {
            await _pacer.WaitAsync(token);
            return _server.Multicast(message.Span);
        }

        public override void Dispose() => _server.Dispose();

        private bool IsBacklogged(long limit)
        {
            foreach (var session in _server.Sessions)
            {
                if (session.BytesPending > limit)
                    return true;
            }

            return false;
        }
    }
}

/// <summary>
/// Backpressure for a multicast that does not wait for slow sessions (msg's <c>Multicast</c>, ws's
/// <c>MulticastBinary</c>: a session over its send limit is disconnected): every
/// <see cref="Check"/> messages it waits while any session has more than <see cref="Backlog"/>
/// bytes queued.
/// </summary>
internal sealed class MulticastPacer(Func<long, bool> isBacklogged)
{
    // A quarter of the default 4 MiB send limit; 1024 messages between looks add at most 1024 x (SIZE + header) bytes.
    private const long Backlog = StreamConnection.DefaultSendBufferLimit / 4;
    private const int Check = 1024;

    private int _sinceCheck;

    /// <summary>Waits, every <see cref="Check"/> calls, while a session has more than <see cref="Backlog"/> bytes queued.</summary>
    public async ValueTask WaitAsync(CancellationToken token)
    {
        if (++_sinceCheck < Check)
            return;
        _sinceCheck = 0;
        while (isBacklogged(Backlog))
            await Task.Delay(1, token);
    }
}

internal abstract partial class ClientHandle
{
    public static ClientHandle Of(MessageClient client, MessageBehavior behavior) => new Message(client, behavior.Counters);

    private sealed class Message(MessageClient client, ClientCounters counters) : ClientHandle(counters)
    {
        public override string? Failure => client.IsConnected ? null : $"{client.DisconnectReason}";

        public override Task ConnectAsync(CancellationToken token) => client.ConnectAsync(token);

        public override async ValueTask DisposeAsync()
        {
            await client.DisconnectAsync();
            client.Dispose();
        }
    }
}
