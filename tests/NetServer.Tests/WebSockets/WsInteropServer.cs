using System;
using System.Collections.Concurrent;
using System.Net;
using System.Net.WebSockets;
using System.Text;
using NetServer.Tests.Infrastructure;

namespace NetServer.Tests.WebSockets;

/// <summary>
/// Our server as the interop peers' clients see it: WsServer (TCP) or WssServer (TLS, the test
/// certificate) on 127.0.0.1 port 0, speaking "chat" and "superchat", permessage-deflate when asked.
/// Every session echoes each message with its type, except the text "close CODE REASON", which it
/// answers by closing with that code and reason. What the sessions saw is in the queues.
/// </summary>
internal sealed class WsInteropServer : IDisposable
{
    private readonly IServer _server;

    public WsInteropServer(bool secure, bool deflate)
    {
        var endpoint = new IPEndPoint(IPAddress.Loopback, 0);
        _server = secure ? new SecureServer(this, endpoint) : (IServer)new PlainServer(this, endpoint);
        _server.WsOptions.SubProtocols.Add("chat");
        _server.WsOptions.SubProtocols.Add("superchat");
        if (deflate)
            _server.WsOptions.Deflate = new WsDeflateOptions();
    }

    /// <summary>Each upgrade: whether permessage-deflate was agreed, and the subprotocol.</summary>
    public ConcurrentQueue<(bool Compressed, string? SubProtocol)> Upgrades { get; } = new();

    /// <summary>Each close frame a session received: status and reason.</summary>
    public ConcurrentQueue<(int Status, string Reason)> Closes { get; } = new();

    /// <summary>Each OnWsError of a session, and each echo our server could not queue.</summary>
    public ConcurrentQueue<string> Errors { get; } = new();

    public int Port => ((IPEndPoint)_server.Endpoint).Port;

    /// <summary>The URL a peer connects to: ws:// or wss:// on 127.0.0.1 (the test certificate names that address).</summary>
    public string Url => $"{(_server is WssServer ? "wss" : "ws")}://127.0.0.1:{Port}/";

    public long BytesSent => _server.BytesSent;

    public long BytesReceived => _server.BytesReceived;

    public bool Start() => _server.Start();

    public void Dispose() => _server.Dispose();

    /// <summary>A session's answer to a message: "close CODE REASON" closes, anything else is echoed.</summary>
    private void Answer(IInteropSession session, WebSocketMessageType type, byte[] buffer, long offset, long size)
    {
        var text = type == WebSocketMessageType.Text && size < 200 ? Encoding.UTF8.GetString(buffer, (int)offset, (int)size) : string.Empty;
        if (text.StartsWith("close ", StringComparison.Ordinal))
        {
            var parts = text.Split(' ', 3);
            session.Close(int.Parse(parts[1], System.Globalization.CultureInfo.InvariantCulture), parts[2]);
            return;
        }

        var queued = type == WebSocketMessageType.Text ? session.SendTextAsync(buffer, offset, size) : session.SendBinaryAsync(buffer, offset, size);
        if (!queued)
            Errors.Enqueue($"The echo of a {size}-byte {type} message was not queued.");
    }

    /// <summary>What WsServer and WssServer have in common here.</summary>
    private interface IServer : IDisposable
    {
        WsOptions WsOptions { get; }

        EndPoint Endpoint { get; }

        long BytesSent { get; }

        long BytesReceived { get; }

        bool Start();
    }

    private interface IInteropSession
    {
        bool Close(int status, string text);

        bool SendTextAsync(byte[] buffer, long offset, long size);

        bool SendBinaryAsync(byte[] buffer, long offset, long size);
    }

    private sealed class PlainServer(WsInteropServer owner, IPEndPoint endpoint) : WsServer(endpoint), IServer
    {
        protected override TcpSession CreateSession() => new PlainSession(owner, this);
    }

    private sealed class SecureServer(WsInteropServer owner, IPEndPoint endpoint) : WssServer(TestCertificates.ServerContext(), endpoint), IServer
    {
        protected override SslSession CreateSession() => new SecureSession(owner, this);
    }

    private sealed class PlainSession(WsInteropServer owner, WsServer server) : WsSession(server), IInteropSession
    {
        public override void OnWsConnected(HttpRequest request) => owner.Upgrades.Enqueue((IsWsCompressed, WsSubProtocol));

        public override void OnWsReceived(WebSocketMessageType type, byte[] buffer, long offset, long size) => owner.Answer(this, type, buffer, offset, size);

        public override void OnWsClose(byte[] buffer, long offset, long size, int status = WsCloseStatus.Normal) =>
            owner.Closes.Enqueue((status, Encoding.UTF8.GetString(buffer, (int)offset, (int)size)));

        public override void OnWsError(string error) => owner.Errors.Enqueue(error);
    }

    private sealed class SecureSession(WsInteropServer owner, WssServer server) : WssSession(server), IInteropSession
    {
        public override void OnWsConnected(HttpRequest request) => owner.Upgrades.Enqueue((IsWsCompressed, WsSubProtocol));

        public override void OnWsReceived(WebSocketMessageType type, byte[] buffer, long offset, long size) => owner.Answer(this, type, buffer, offset, size);

        public override void OnWsClose(byte[] buffer, long offset, long size, int status = WsCloseStatus.Normal) =>
            owner.Closes.Enqueue((status, Encoding.UTF8.GetString(buffer, (int)offset, (int)size)));

        public override void OnWsError(string error) => owner.Errors.Enqueue(error);
    }
}
