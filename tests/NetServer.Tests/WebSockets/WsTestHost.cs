using System;
using System.Collections.Concurrent;
using System.Net;
using System.Net.Sockets;
using System.Net.WebSockets;
using System.Threading;
using System.Threading.Tasks;
using NetServer.Tests.Infrastructure;
using Xunit;

namespace NetServer.Tests.WebSockets;

/// <summary>What the sessions of an echo server saw, for the tests to assert on.</summary>
internal sealed class WsServerLog
{
    private int _upgraded;
    private int _ended;
    private long _pendingAtControl = -1;

    /// <summary>Every OnWsError(string) of every session, in order.</summary>
    public ConcurrentQueue<string> Errors { get; } = new();

    /// <summary>The status of every close frame a session received (OnWsClose).</summary>
    public ConcurrentQueue<int> Closes { get; } = new();

    /// <summary>Sessions upgraded so far.</summary>
    public int Upgraded => Volatile.Read(ref _upgraded);

    /// <summary>Upgraded sessions that ended (OnWsDisconnected).</summary>
    public int Ended => Volatile.Read(ref _ended);

    /// <summary>The sessions' OptionSendBufferLimit, set at the upgrade (null: the default).</summary>
    public int? SendBufferLimit { get; set; }

    /// <summary>OnWsConnecting: null accepts every upgrade.</summary>
    public Func<HttpRequest, HttpResponse, bool>? Connecting { get; set; }

    internal bool OnConnecting(HttpRequest request, HttpResponse response) => Connecting?.Invoke(request, response) ?? true;

    internal void OnConnected() => Interlocked.Increment(ref _upgraded);

    internal void OnDisconnected() => Interlocked.Increment(ref _ended);

    /// <summary>Bytes waiting in the session's send queue when it last saw a close, a fault or a ping (-1: none seen yet).</summary>
    public long PendingAtControl => Volatile.Read(ref _pendingAtControl);

    internal void OnClose(int status, long pending)
    {
        Volatile.Write(ref _pendingAtControl, pending);
        Closes.Enqueue(status);
    }

    internal void OnError(string error, long pending)
    {
        Volatile.Write(ref _pendingAtControl, pending);
        Errors.Enqueue(error);
    }

    internal void OnPing(long pending) => Volatile.Write(ref _pendingAtControl, pending);

    /// <summary>The echo: text back as text, binary as binary; a refused send is logged as an error.</summary>
    internal void Echo(Func<byte[], long, long, bool> sendText, Func<byte[], long, long, bool> sendBinary, WebSocketMessageType type, byte[] buffer, long offset, long size)
    {
        var sent = type == WebSocketMessageType.Text ? sendText(buffer, offset, size) : sendBinary(buffer, offset, size);
        if (!sent)
            Errors.Enqueue($"The echo of a {size}-byte {type} message was refused.");
    }

    /// <summary>The answer to a plain HTTP request (not an upgrade) on a WebSocket server.</summary>
    internal static void AnswerPlainRequest(HttpResponse response, HttpRequest request) =>
        response.MakeGetResponse("plain http: " + request.Url);
}

/// <summary>Theory data: the transports a WsServer runs on.</summary>
internal static class WsTransports
{
    /// <summary>TCP, and TLS where the build has it (Unix sockets: no WebSocket server listens there).</summary>
    public static TransportKind[] Kinds => SecureTransport.Enabled ? [TransportKind.Tcp, TransportKind.Ssl] : [TransportKind.Tcp];

    public static TheoryData<TransportKind> All
    {
        get
        {
            var data = new TheoryData<TransportKind>();
            foreach (var kind in Kinds)
                data.Add(kind);
            return data;
        }
    }
}

/// <summary>The parts of an echo server (WsServer or WssServer) the tests use.</summary>
internal interface IWsEchoServer : IDisposable
{
    WsOptions WsOptions { get; }

    EndPoint Endpoint { get; }

    long ConnectedSessions { get; }

    bool Start();

    bool Stop();

    bool CloseAll(int status);
}

/// <summary>A WsServer whose sessions echo every message (TCP).</summary>
internal sealed class WsEchoServer : WsServer, IWsEchoServer
{
    private readonly WsServerLog _log;

    public WsEchoServer(WsServerLog log, LeakCheckingBufferPool pool)
        : base(new IPEndPoint(IPAddress.Loopback, 0))
    {
        _log = log;
        BufferPool = pool;
    }

    protected override TcpSession CreateSession() => new WsEchoSession(this, _log);
}

internal sealed class WsEchoSession(WsServer server, WsServerLog log) : WsSession(server)
{
    public override bool OnWsConnecting(HttpRequest request, HttpResponse response) => log.OnConnecting(request, response);

    public override void OnWsConnected(HttpRequest request)
    {
        if (log.SendBufferLimit is { } limit)
            OptionSendBufferLimit = limit;
        log.OnConnected();
    }

    public override void OnWsDisconnected() => log.OnDisconnected();

    public override void OnWsReceived(WebSocketMessageType type, byte[] buffer, long offset, long size) =>
        log.Echo(SendTextAsync, SendBinaryAsync, type, buffer, offset, size);

    public override void OnWsClose(byte[] buffer, long offset, long size, int status = WsCloseStatus.Normal) => log.OnClose(status, BytesPending);

    public override void OnWsError(string error) => log.OnError(error, BytesPending);

    public override void OnWsPing(byte[] buffer, long offset, long size)
    {
        log.OnPing(BytesPending);
        base.OnWsPing(buffer, offset, size); // the default answer: a pong with the same payload
    }

    protected override void OnReceivedRequest(HttpRequest request)
    {
        WsServerLog.AnswerPlainRequest(Response, request);
        SendResponseAsync();
    }
}

/// <summary>
/// One echo server under test on a transport (TCP on 127.0.0.1 port 0, or TLS with the test
/// certificates), with a leak-checking buffer pool, and raw clients for it. Disposing it stops the
/// server and checks that every pooled buffer came back.
/// </summary>
internal sealed class WsTestHost : IAsyncDisposable
{
    private readonly LeakCheckingBufferPool _pool = new();

    private WsTestHost(TransportKind kind, Action<WsOptions>? configure)
    {
        Kind = kind;
        Server = kind switch
        {
            TransportKind.Tcp => new WsEchoServer(Log, _pool),
            TransportKind.Ssl => WsSecureEcho.CreateServer(Log, _pool),
            _ => throw new ArgumentOutOfRangeException(nameof(kind), "A WsServer listens on TCP (or TLS): Unix sockets have no WebSocket server."),
        };
        configure?.Invoke(Server.WsOptions);
    }

    public TransportKind Kind { get; }

    public WsServerLog Log { get; } = new();

    public IWsEchoServer Server { get; }

    public int Port => ((IPEndPoint)Server.Endpoint).Port;

    /// <summary>A started echo server; <paramref name="configure"/> sets its WebSocket options first.</summary>
    public static WsTestHost Start(TransportKind kind = TransportKind.Tcp, Action<WsOptions>? configure = null)
    {
        var host = new WsTestHost(kind, configure);
        Assert.True(host.Server.Start());
        return host;
    }

    /// <summary>A raw socket to the server (over TLS, through the harness's relay, which passes plaintext).</summary>
    public async Task<Socket> ConnectRawAsync()
    {
        if (Kind == TransportKind.Ssl)
            return await SecureTransport.ConnectRelayAsync((IPEndPoint)Server.Endpoint);
        var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
        await socket.ConnectAsync(Server.Endpoint).WaitAsync(Wait.Default);
        return socket;
    }

    /// <summary>A raw client that did the upgrade (101 checked), with <paramref name="fields"/> (CRLF-terminated lines) added to its request.</summary>
    public async Task<WsRawClient> OpenAsync(string fields = "")
    {
        var client = new WsRawClient(await ConnectRawAsync());
        var head = await client.UpgradeAsync(fields);
        Assert.StartsWith("HTTP/1.1 101 ", head, StringComparison.Ordinal);
        return client;
    }

    /// <summary>
    /// After a fault on one connection, the server goes on: <paramref name="bystander"/> (opened
    /// before the fault) still echoes, and a new connection upgrades, echoes and closes cleanly.
    /// </summary>
    public async Task AssertStillServesAsync(WsRawClient bystander)
    {
        await bystander.SendAsync(WsWire.TextFrame("still there?"));
        await bystander.ExpectMessageAsync(WsWire.Text, "still there?"u8.ToArray());

        using var fresh = await OpenAsync();
        var payload = WsWire.Payload(300, text: false);
        await fresh.SendAsync(WsWire.Frame(WsWire.Binary, payload));
        await fresh.ExpectMessageAsync(WsWire.Binary, payload);
        await fresh.SendAsync(WsWire.CloseFrame(1000));
        await fresh.ExpectCloseAsync(1000);
    }

    /// <summary>
    /// A fault on one connection: <paramref name="bytes"/> sent (in <paramref name="chunk"/>-byte
    /// pieces), the echoes of <paramref name="before"/> come back first, then the close frame with
    /// <paramref name="code"/> and the end of the connection; OnWsError was told, and the server
    /// still serves a connection opened before the fault and a new one.
    /// </summary>
    public async Task AssertFaultAsync(byte[] bytes, int code, int chunk = 0, string fields = "", params (int Opcode, byte[] Payload)[] before)
    {
        using var bystander = await OpenAsync();
        using var client = await OpenAsync(fields);
        var errors = Log.Errors.Count;
        await client.SendAsync(bytes, chunk);
        foreach (var (opcode, payload) in before)
            await client.ExpectMessageAsync(opcode, payload);
        await client.ExpectCloseAsync(code);
        Assert.True(Log.Errors.Count > errors, "OnWsError was not called for the fault.");
        await AssertStillServesAsync(bystander);
    }

    public async ValueTask DisposeAsync()
    {
        await Task.Run(Server.Stop).WaitAsync(Wait.Default);

        // However a WebSocket connection ended, OnWsDisconnected ran for it, once.
        await Wait.UntilAsync(() => Log.Ended == Log.Upgraded, () => $"{Log.Upgraded} sessions upgraded, {Log.Ended} saw OnWsDisconnected");
        Server.Dispose();
        await _pool.AssertAllReturnedAsync();
    }
}
