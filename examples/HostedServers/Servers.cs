using System;
using System.Net;
using System.Net.WebSockets;

namespace NetServer.Examples.HostedServers;

/// <summary>TCP: sends back what it receives.</summary>
internal sealed class EchoSession(TcpServer server) : TcpSession(server)
{
    protected override void OnReceived(ReadOnlySpan<byte> buffer) => SendAsync(buffer);
}

/// <summary>The TCP echo server.</summary>
internal sealed class EchoServer(IPEndPoint endpoint) : TcpServer(endpoint)
{
    protected override TcpSession CreateSession() => new EchoSession(this);
}

/// <summary>HTTP: answers every GET with a greeting naming the path.</summary>
internal sealed class HelloSession(HttpServer server) : HttpSession(server)
{
    protected override void OnReceivedRequest(HttpRequest request) =>
        SendResponseAsync(request.Method == "GET"
            ? Response.MakeGetResponse($"Hello from NetServer.Hosting: {request.Url}")
            : Response.MakeErrorResponse(405, "GET only"));
}

/// <summary>The HTTP server.</summary>
internal sealed class HelloServer(IPEndPoint endpoint) : HttpServer(endpoint)
{
    protected override TcpSession CreateSession() => new HelloSession(this);
}

/// <summary>WebSocket: echoes every text message.</summary>
internal sealed class WsEchoSession(WsServer server) : WsSession(server)
{
    public override void OnWsReceived(WebSocketMessageType type, byte[] buffer, long offset, long size)
    {
        if (type == WebSocketMessageType.Text)
            SendTextAsync(buffer, offset, size);
    }
}

/// <summary>The WebSocket server.</summary>
internal sealed class WsEchoServer(IPEndPoint endpoint) : WsServer(endpoint)
{
    protected override TcpSession CreateSession() => new WsEchoSession(this);
}
