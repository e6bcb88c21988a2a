using System.Net;
using System.Net.WebSockets;
using NetServer.Tests.Infrastructure;

namespace NetServer.Tests.WebSockets;

// In Ssl/ so the netstandard2.0 tests (no TLS types there) leave it out; they have a stub of WsSecureEcho.

/// <summary>The TLS side of the WebSocket conformance tests: a WssServer echoing like <see cref="WsEchoServer"/>, with the test certificates.</summary>
internal static class WsSecureEcho
{
    public static IWsEchoServer CreateServer(WsServerLog log, LeakCheckingBufferPool pool) => new WssEchoServer(log, pool);
}

/// <summary>A WssServer whose sessions echo every message.</summary>
internal sealed class WssEchoServer : WssServer, IWsEchoServer
{
    private readonly WsServerLog _log;

    public WssEchoServer(WsServerLog log, LeakCheckingBufferPool pool)
        : base(TestCertificates.ServerContext(), new IPEndPoint(IPAddress.Loopback, 0))
    {
        _log = log;
        BufferPool = pool;
    }

    protected override SslSession CreateSession() => new WssEchoSession(this, _log);
}

internal sealed class WssEchoSession(WssServer server, WsServerLog log) : WssSession(server)
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
