using System.Net.WebSockets;

namespace NetServer;

/// <summary>
/// The WebSocket hooks of <see cref="WsSession"/>, <c>WssSession</c>, <see cref="WsClient"/> and
/// <c>WssClient</c>: NetCoreServer's, plus <see cref="OnWsReceived(WebSocketMessageType, byte[], long, long)"/>
/// that also gives the message type. Each implementer has them as <c>public virtual</c> methods to
/// override. The receive hooks (<c>OnWsReceived</c>, <c>OnWsPing</c>, <c>OnWsPong</c>, <c>OnWsClose</c>)
/// run in order, never concurrently with each other; <c>OnWsError</c> for a keep-alive or close
/// timeout comes from the shared clock's pool thread.
/// </summary>
public interface IWebSocket
{
    /// <summary>
    /// Server: a valid upgrade request arrived; <paramref name="response"/> holds the 101 answer
    /// being built (status line and the WebSocket fields): add fields with <c>SetHeader</c>, or
    /// return false to refuse the upgrade (with the answer made in <paramref name="response"/>
    /// if its status was changed, 403 otherwise).
    /// </summary>
    bool OnWsConnecting(HttpRequest request, HttpResponse response);

    /// <summary>
    /// Client: fill <paramref name="request"/> with the upgrade request (or leave it empty for the
    /// default: GET /). Any of the required fields left out (Host, Upgrade, Connection,
    /// Sec-WebSocket-Key, Sec-WebSocket-Version, and the configured subprotocols and extensions) is added.
    /// </summary>
    void OnWsConnecting(HttpRequest request);

    /// <summary>Client: the server accepted the upgrade with <paramref name="response"/>; messages may be sent.</summary>
    void OnWsConnected(HttpResponse response);

    /// <summary>Server: the upgrade of <paramref name="request"/> was answered with 101; messages may be sent. The request is valid during the call only.</summary>
    void OnWsConnected(HttpRequest request);

    /// <summary>The upgraded connection is about to close.</summary>
    void OnWsDisconnecting();

    /// <summary>The upgraded connection closed (called once, before the connection's OnDisconnected).</summary>
    void OnWsDisconnected();

    /// <summary>
    /// A whole message (text or binary) arrived: <paramref name="size"/> bytes of
    /// <paramref name="buffer"/> from <paramref name="offset"/>, valid during the call only. Text is
    /// valid UTF-8 (checked before the call).
    /// </summary>
    void OnWsReceived(byte[] buffer, long offset, long size);

    /// <summary>
    /// A whole message arrived, with its type. The default calls
    /// <see cref="OnWsReceived(byte[], long, long)"/>, so overriding either hook works.
    /// </summary>
    void OnWsReceived(WebSocketMessageType type, byte[] buffer, long offset, long size);

    /// <summary>
    /// The peer's close frame arrived with <paramref name="status"/> (1005 when it carried none) and
    /// a UTF-8 reason in the given bytes. The close is answered for you (with the same status) unless
    /// you call <c>Close</c> here with another.
    /// </summary>
    void OnWsClose(byte[] buffer, long offset, long size, int status = 1000);

    /// <summary>A ping arrived with the given payload; the default answers with a pong carrying it.</summary>
    void OnWsPing(byte[] buffer, long offset, long size);

    /// <summary>A pong arrived with the given payload.</summary>
    void OnWsPong(byte[] buffer, long offset, long size);

    /// <summary>
    /// The peer broke the protocol (or a handshake failed): <paramref name="error"/> says how. A
    /// close frame with the matching status (1002, 1007, 1009...) is sent and the connection closes.
    /// </summary>
    void OnWsError(string error);

    /// <summary>A socket error on the upgraded connection.</summary>
    void OnWsError(SocketError error);
}
