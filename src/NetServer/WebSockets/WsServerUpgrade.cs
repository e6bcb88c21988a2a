using System.Collections.Generic;
using NetServer.Http;

namespace NetServer.WebSockets;

/// <summary>
/// The server side of the opening handshake (RFC 6455 4.2), for any HTTP session (<see cref="WsSession"/>
/// over TCP, <c>WssSession</c> over TLS): checks an upgrade request, negotiates the
/// subprotocol and permessage-deflate, lets the application add fields or refuse, answers 101 and
/// hands the connection to the WebSocket protocol. Requests without "Upgrade: websocket" stay HTTP.
/// </summary>
internal sealed class WsServerUpgrade(StreamSession session, HttpServerProtocol http, WebSocketProtocol ws, IWebSocket hooks, WsOptions options)
    : IHttpUpgradeHandler
{
    /// <inheritdoc/>
    public bool TryUpgrade(HttpRequest request)
    {
        if (!WsHandshake.HasToken(request, "Upgrade"u8, "websocket"u8) || !request.MethodBytes.SequenceEqual("GET"u8))
            return false; // another protocol, or not a WebSocket request (RFC 6455 4.2.1 asks for GET): plain HTTP

        var store = request.Store;
        if (store.MinorVersion < 1)
            return Refuse(400, "A WebSocket upgrade needs HTTP/1.1.");
        if (WsHandshake.CountFields(request, "Sec-WebSocket-Version"u8) != 1
            || !store.TryGetHeader("Sec-WebSocket-Version"u8, out var version) || !version.SequenceEqual("13"u8))
        {
            http.SendError(session, 426, "This server speaks WebSocket version 13 (RFC 6455).", "Sec-WebSocket-Version: 13\r\n");
            return true;
        }

        if (WsHandshake.CountFields(request, "Sec-WebSocket-Key"u8) != 1 || !request.TryGetHeader("Sec-WebSocket-Key", out var key) || !WsHandshake.IsValidKey(key))
            return Refuse(400, "The Sec-WebSocket-Key field must be base64 of 16 bytes, once.");
        if (request.BodyLength > 0)
            return Refuse(400, "A WebSocket upgrade request has no body.");
        if (!IsOriginAllowed(request))
            return Refuse(403, "This origin may not open a WebSocket here.");

        var offered = WsHandshake.ReadList(request, "Sec-WebSocket-Protocol"u8);
        var subProtocol = Choose(offered, options.SubProtocols);
        WsDeflateParameters? deflate = null;
        var extensions = options.Deflate is not null && WsDeflater.IsSupported ? WsHandshake.JoinLines(request, "Sec-WebSocket-Extensions"u8) : null;
        string? extensionsAnswer = null;
        if (extensions is not null && WsDeflateNegotiation.TrySelect(extensions, options.Deflate!, out var agreed, out var answer))
        {
            deflate = agreed;
            extensionsAnswer = answer;
        }

        var response = http.Response;
        response.Clear().SetBegin(101)
            .SetHeader("Upgrade", "websocket")
            .SetHeader("Connection", "Upgrade")
            .SetHeader("Sec-WebSocket-Accept", WsHandshake.ComputeAccept(key));
        if (subProtocol is not null)
            response.SetHeader("Sec-WebSocket-Protocol", subProtocol);
        if (extensionsAnswer is not null)
            response.SetHeader("Sec-WebSocket-Extensions", extensionsAnswer);

        if (!hooks.OnWsConnecting(request, response))
        {
            if (response.Status == 101)
                return Refuse(403, "The WebSocket upgrade was refused.");
            if (response.Store.HeadLength == 0)
                response.SetBody();
            http.SendResponse(response, blocking: false); // the application's own refusal; the connection stays HTTP
            return true;
        }

        // NetCoreServer applications name the subprotocol in OnWsConnecting themselves.
        if (response.TryGetHeader("Sec-WebSocket-Protocol", out var chosen) && subProtocol is null)
        {
            if (!offered.Contains(chosen))
                return Refuse(500, $"The application chose the subprotocol \"{chosen}\", which the client did not offer.");
            subProtocol = chosen;
        }

        if (response.Store.HeadLength == 0)
            response.SetBody(); // a 101 ends its head without a Content-Length (RFC 9110 8.6)
        http.SendResponse(response, blocking: false);
        ws.Start(options, subProtocol, deflate);
        session.Protocol = ws; // the bytes after the request head go to the WebSocket protocol
        session.JoinMulticast();
        try
        {
            hooks.OnWsConnected(request);
        }
        finally
        {
            http.ReleaseMessages(); // the request and the 101 are done with: their pooled memory goes back
        }

        return true;
    }

    private bool Refuse(int status, string reason)
    {
        http.SendError(session, status, reason);
        return true;
    }

    private bool IsOriginAllowed(HttpRequest request)
    {
        if (options.AllowedOrigins.Count == 0)
            return true;
        if (!request.TryGetHeader("Origin", out var origin))
            return false;
        foreach (var allowed in options.AllowedOrigins)
        {
            if (string.Equals(allowed, origin, StringComparison.OrdinalIgnoreCase))
                return true;
        }

        return false;
    }

    /// <summary>The server's first subprotocol (its order of preference) that the client offered, or null.</summary>
    private static string? Choose(List<string> offered, IList<string> supported)
    {
        foreach (var candidate in supported)
        {
            if (offered.Contains(candidate))
                return candidate;
        }

        return null;
    }
}
