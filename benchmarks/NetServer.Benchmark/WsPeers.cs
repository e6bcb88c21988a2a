using System;
using System.Collections.Generic;
using System.Net;
using System.Net.Sockets;
using System.Net.WebSockets;
using System.Threading;
using System.Threading.Tasks;

namespace NetServer.Benchmark;

/// <summary>
/// The ws and wss client side: echo sends <c>initial</c> messages (binary, or text with --text)
/// once upgraded, then sends every message it receives back with its type (one message each way
/// per echo); multicast (<c>initial</c> 0) only counts. Messages are counted one by one. The
/// upgrade request is <c>GET PATH</c> (--path, default /ws: kestrel-reference's endpoint, and any
/// path for ours), with the fields the client adds itself.
/// </summary>
internal sealed class WsBehavior(int initial, byte[] message, bool text, string path) : ClientBehavior
{
    public bool Echoes => initial > 0;

    public void Connecting(HttpRequest request) => request.SetBegin("GET", path);

    /// <summary>Once upgraded: the echo's first messages (none for multicast).</summary>
    public void SendInitial(IWsPeer peer)
    {
        for (var i = 0; i < initial; i++)
        {
            if (text)
                peer.SendTextAsync(message);
            else
                peer.SendBinaryAsync(message);
        }
    }

    /// <summary>A message arrived: counted, and sent back when echoing.</summary>
    public void Received(IWsPeer peer, WebSocketMessageType type, byte[] buffer, long offset, long size)
    {
        Counters.AddMessage();
        if (Echoes)
            WsEcho.Send(peer, type, buffer, offset, size);
    }

    public void Failed(string error)
    {
        Counters.AddError();
        ErrorText.Print($"client WebSocket error: {error}");
    }

    /// <summary>The server closed the WebSocket: a client only ends its connection itself, when the run is over.</summary>
    public void Closed(int status)
    {
        Counters.AddError();
        ErrorText.Print($"client: the server closed the WebSocket ({status})");
    }
}

/// <summary>A <see cref="WsClient"/> (WebSocket over TCP) that counts and echoes as its <see cref="WsBehavior"/> says.</summary>
internal sealed class BenchWsClient(IPEndPoint endpoint, WsBehavior behavior) : WsClient(endpoint), IWsPeer
{
    public override void OnWsConnecting(HttpRequest request) => behavior.Connecting(request);

    public override void OnWsConnected(HttpResponse response) => behavior.SendInitial(this);

    public override void OnWsReceived(WebSocketMessageType type, byte[] buffer, long offset, long size) => behavior.Received(this, type, buffer, offset, size);

    public override void OnWsClose(byte[] buffer, long offset, long size, int status = WsCloseStatus.Normal) => behavior.Closed(status);

    public override void OnWsError(string error) => behavior.Failed(error);

    protected override void OnError(SocketError error) => behavior.Error(this, error);
}

/// <summary>A <see cref="WssClient"/> (WebSocket over TLS) that counts and echoes as its <see cref="WsBehavior"/> says.</summary>
internal sealed class BenchWssClient(SslContext context, IPEndPoint endpoint, WsBehavior behavior) : WssClient(context, endpoint), IWsPeer
{
    public override void OnWsConnecting(HttpRequest request) => behavior.Connecting(request);

    public override void OnWsConnected(HttpResponse response) => behavior.SendInitial(this);

    public override void OnWsReceived(WebSocketMessageType type, byte[] buffer, long offset, long size) => behavior.Received(this, type, buffer, offset, size);

    public override void OnWsClose(byte[] buffer, long offset, long size, int status = WsCloseStatus.Normal) => behavior.Closed(status);

    public override void OnWsError(string error) => behavior.Failed(error);

    protected override void OnError(SocketError error) => behavior.Error(this, error);

    protected override void OnHandshakeFailed(Exception exception) => behavior.HandshakeFailed(exception);
}

/// <summary>What the ws and wss servers do for the benchmark: multicast one message to every upgraded session, and tell whether any of them is backlogged.</summary>
internal interface IBenchWsServer
{
    bool Multicast(bool text, ReadOnlySpan<byte> message);

    /// <summary>Whether any session has more than <paramref name="limit"/> bytes queued.</summary>
    bool IsBacklogged(long limit);
}

/// <summary>
/// A ws session: echo sends every message back with its type, from OnWsReceived, with
/// SendBinaryAsync (SendTextAsync for a text message), as an application would; multicast
/// sessions only take the server's multicasts.
/// </summary>
internal sealed class BenchWsSession(WsServer server, bool echo, ServerCounters counters) : WsSession(server), IWsPeer
{
    public override void OnWsConnected(HttpRequest request) => counters.AddEstablished();

    public override void OnWsReceived(WebSocketMessageType type, byte[] buffer, long offset, long size)
    {
        if (echo)
            WsEcho.Send(this, type, buffer, offset, size);
    }

    public override void OnWsError(string error) => counters.AddError($"session WebSocket error: {error}");

    protected override void OnError(SocketError error) => counters.AddError(error, DisconnectException);
}

internal sealed class BenchWsServer(IPEndPoint endpoint, bool echo, ServerCounters counters) : WsServer(endpoint), IBenchWsServer
{
    public bool Multicast(bool text, ReadOnlySpan<byte> message) => text ? MulticastText(message) : MulticastBinary(message);

    public bool IsBacklogged(long limit) => WsBacklog.Any(Sessions.Values, limit);

    protected override TcpSession CreateSession() => new BenchWsSession(this, echo, counters);

    protected override void OnError(SocketError error) => counters.AddError(error);
}

/// <summary>A wss session: as <see cref="BenchWsSession"/>, over TLS.</summary>
internal sealed class BenchWssSession(WssServer server, bool echo, ServerCounters counters) : WssSession(server), IWsPeer
{
    public override void OnWsConnected(HttpRequest request) => counters.AddEstablished();

    public override void OnWsReceived(WebSocketMessageType type, byte[] buffer, long offset, long size)
    {
        if (echo)
            WsEcho.Send(this, type, buffer, offset, size);
    }

    public override void OnWsError(string error) => counters.AddError($"session WebSocket error: {error}");

    protected override void OnError(SocketError error) => counters.AddError(error, DisconnectException);
}

internal sealed class BenchWssServer(SslContext context, IPEndPoint endpoint, bool echo, ServerCounters counters) : WssServer(context, endpoint), IBenchWsServer
{
    public bool Multicast(bool text, ReadOnlySpan<byte> message) => text ? MulticastText(message) : MulticastBinary(message);

    public bool IsBacklogged(long limit) => WsBacklog.Any(Sessions.Values, limit);

    protected override SslSession CreateSession() => new BenchWssSession(this, echo, counters);

    protected override void OnHandshakeFailed(SslSession session, Exception exception) => counters.AddError($"handshake failed: {ErrorText.Describe(exception)}");

    protected override void OnError(SocketError error) => counters.AddError(error);
}

/// <summary>Whether any session of a ws or wss server has more than a limit queued, for <see cref="MulticastPacer"/>.</summary>
internal static class WsBacklog
{
    public static bool Any<TSession>(IEnumerable<TSession> sessions, long limit)
        where TSession : StreamConnection
    {
        foreach (var session in sessions)
        {
            if (session.BytesPending > limit)
                return true;
        }

        return false;
    }
}

/// <summary>
/// The sends the benchmark's ws and wss clients and sessions share: WsClient, WssClient, WsSession
/// and WssSession all have these public methods, so each class names the interface and adds nothing.
/// </summary>
internal interface IWsPeer
{
    bool SendTextAsync(byte[] buffer);

    bool SendBinaryAsync(byte[] buffer);

    bool SendTextAsync(byte[] buffer, long offset, long size);

    bool SendBinaryAsync(byte[] buffer, long offset, long size);
}

/// <summary>The echo of one message, with its type, as an application would (SendTextAsync for text).</summary>
internal static class WsEcho
{
    public static void Send(IWsPeer peer, WebSocketMessageType type, byte[] buffer, long offset, long size)
    {
        if (type == WebSocketMessageType.Text)
            peer.SendTextAsync(buffer, offset, size);
        else
            peer.SendBinaryAsync(buffer, offset, size);
    }
}

/// <summary>The length of a WebSocket frame on the wire, for the server role's count (bytes / frame).</summary>
internal static class WsWire
{
    /// <summary>A frame of <paramref name="payload"/> bytes: 2 header bytes, 2 or 8 more for a longer length, 4 for a client's mask key.</summary>
    public static int FrameLength(int payload, bool masked) =>
        2 + (payload <= 125 ? 0 : payload <= ushort.MaxValue ? 2 : 8) + (masked ? 4 : 0) + payload;
}

internal abstract partial class ServerHandle
{
    public static ServerHandle Of<TSession>(StreamServer<TSession> server, IBenchWsServer ws, bool text, ServerCounters counters)
        where TSession : StreamSession => new WebSocket<TSession>(server, ws, text, counters);

    /// <summary>
    /// A ws or wss server. Its multicast (<c>MulticastBinary</c>, <c>MulticastText</c>: one frame
    /// built once and shared) does not wait for slow sessions, so this handle paces it as the msg
    /// handle does (<see cref="MulticastPacer"/>).
    /// </summary>
    private sealed class WebSocket<TSession>(StreamServer<TSession> server, IBenchWsServer ws, bool text, ServerCounters counters) : ServerHandle(counters)
        where TSession : StreamSession
    {
        private readonly MulticastPacer _pacer = new(ws.IsBacklogged);

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

        public override async ValueTask<bool> MulticastAsync(ReadOnlyMemory<byte> message, CancellationToken token)
        {
            await _pacer.WaitAsync(token);
            return ws.Multicast(text, message.Span);
        }

        public override void Dispose() => server.Dispose();
    }
}

internal abstract partial class ClientHandle
{
    public static ClientHandle Of(WsClient client, WsBehavior behavior) =>
        new WebSocket(client, () => client.IsWebSocket, token => client.ConnectAsync(token), behavior.Counters);

    public static ClientHandle Of(WssClient client, WsBehavior behavior) =>
        new WebSocket(client, () => client.IsWebSocket, token => client.ConnectAsync(token), behavior.Counters);

    /// <summary>A ws or wss client: connected once the server answered 101 (its own ConnectAsync, not the stream client's).</summary>
    private sealed class WebSocket(StreamClient client, Func<bool> upgraded, Func<CancellationToken, Task<bool>> connect, ClientCounters counters) : ClientHandle(counters)
    {
        public override string? Failure => upgraded() ? null
            : $"{client.DisconnectReason}{(client.DisconnectException is { } e ? ": " + ErrorText.Describe(e) : "")}";

        public override Task ConnectAsync(CancellationToken token) => connect(token);

        public override ValueTask DisposeAsync() => client.DisposeAsync();
    }
}
