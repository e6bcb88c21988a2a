namespace NetServer.Diagnostics;

/// <summary>
/// Receives the events an operator needs from a server or client: where it listens, connections
/// refused or closed (with the reason), protocol errors and TLS handshake failures with the peer's
/// address, sessions paused or disconnected because they read too slowly. Every method does
/// nothing by default; override the ones you want and assign the listener to the
/// <c>EventListener</c> property of a server or client (the NetServer.Hosting package has one that
/// writes to <c>ILogger</c>). This is how the core reports without depending on a logging package:
/// without a listener, an event costs the engine one null check.
/// </summary>
/// <remarks>
/// Methods are called on I/O threads, inside the engine, and may be called concurrently for
/// different sessions: keep them short and non-blocking. What a listener throws is caught and
/// dropped, so a faulty listener never breaks a connection.
/// </remarks>
public abstract class NetServerEventListener
{
    /// <summary>The server started listening on <paramref name="endpoint"/> (the bound endpoint: port 0 resolved).</summary>
    /// <param name="source">The server.</param>
    /// <param name="endpoint">The bound endpoint.</param>
    public virtual void Listening(object source, EndPoint endpoint)
    {
    }

    /// <summary>The server stopped listening on <paramref name="endpoint"/> and disconnected its sessions.</summary>
    /// <param name="source">The server.</param>
    /// <param name="endpoint">The endpoint it listened on.</param>
    public virtual void Stopped(object source, EndPoint endpoint)
    {
    }

    /// <summary>An accepted connection was closed at once because the server already had <paramref name="sessionLimit"/> sessions.</summary>
    /// <param name="source">The server.</param>
    /// <param name="remote">The refused peer's address, when known.</param>
    /// <param name="sessionLimit">The session limit in force.</param>
    public virtual void AcceptRefused(object source, EndPoint? remote, long sessionLimit)
    {
    }

    /// <summary>A connection ended (called once per connection, after it closed).</summary>
    /// <param name="source">The server the session belonged to, or the client.</param>
    /// <param name="id">The session's or client's id.</param>
    /// <param name="remote">The peer's address, when known.</param>
    /// <param name="reason">Why it ended.</param>
    /// <param name="error">The socket error that ended it, <see cref="SocketError.Success"/> when none did.</param>
    public virtual void ConnectionClosed(object source, Guid id, EndPoint? remote, DisconnectReason reason, SocketError error)
    {
    }

    /// <summary>A peer broke a protocol (a malformed HTTP request, a bad WebSocket frame, an oversized message...).</summary>
    /// <param name="source">The server the session belonged to, or the client.</param>
    /// <param name="id">The session's or client's id.</param>
    /// <param name="remote">The peer's address, when known.</param>
    /// <param name="protocol">The protocol ("HTTP", "WebSocket", "Messages", ...).</param>
    /// <param name="error">What was wrong, in a few words (the protocol's error name).</param>
    public virtual void ProtocolError(object source, Guid id, EndPoint? remote, string protocol, string error)
    {
    }

    /// <summary>A TLS handshake failed or timed out; the connection is closed.</summary>
    /// <param name="source">The server the session belonged to, or the client.</param>
    /// <param name="id">The session's or client's id.</param>
    /// <param name="remote">The peer's address, when known.</param>
    /// <param name="error">What failed, in a few words (the exception's message, or "timed out").</param>
    public virtual void TlsHandshakeFailed(object source, Guid id, EndPoint? remote, string error)
    {
    }

    /// <summary>
    /// A session's send queue reached its limit, so an awaitable send waits (or, for a protocol
    /// with backpressure, receiving pauses) until the peer reads: the peer is reading slowly.
    /// </summary>
    /// <param name="source">The server the session belonged to, or the client.</param>
    /// <param name="id">The session's or client's id.</param>
    /// <param name="remote">The peer's address, when known.</param>
    /// <param name="bytesPending">Bytes waiting in the send queue.</param>
    public virtual void SendPaused(object source, Guid id, EndPoint? remote, long bytesPending)
    {
    }

    /// <summary>A session could not take a multicast within its send limit and was disconnected (<see cref="DisconnectReason.SendBufferFull"/>).</summary>
    /// <param name="source">The server.</param>
    /// <param name="id">The session's id.</param>
    /// <param name="remote">The peer's address, when known.</param>
    /// <param name="bytesPending">Bytes waiting in its send queue.</param>
    public virtual void MulticastDisconnect(object source, Guid id, EndPoint? remote, long bytesPending)
    {
    }
}
