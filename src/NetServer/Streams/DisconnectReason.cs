namespace NetServer;

/// <summary>Why a connection ended. The first cause wins; later ones do not overwrite it.</summary>
public enum DisconnectReason
{
    /// <summary>The connection has not ended.</summary>
    None = 0,

    /// <summary>This side called <c>Disconnect</c> (or <c>DisconnectAsync</c>).</summary>
    LocalDisconnect,

    /// <summary>
    /// The peer closed its side (end of stream); queued bytes were still sent before closing. Over
    /// TLS also a peer that sent close_notify and closed its socket at once: what could no longer
    /// reach it was dropped.
    /// </summary>
    PeerClosed,

    /// <summary>
    /// The peer reset or aborted the connection (also when it ended its side and then reset the
    /// connection while replies owed to it were still being sent: those were lost).
    /// </summary>
    ConnectionReset,

    /// <summary>The server stopped, or disconnected all sessions.</summary>
    ServerStopped,

    /// <summary>The object was disposed while connected.</summary>
    Disposed,

    /// <summary>
    /// The session's send queue could not take a multicast within <c>OptionSendBufferLimit</c>:
    /// rather than silently miss a message, the slow session is disconnected.
    /// </summary>
    SendBufferFull,

    /// <summary>
    /// A graceful close could not send its queued bytes within <c>OptionDisconnectTimeout</c> and
    /// dropped them (this replaces the reason the close started with), or the connection timed out.
    /// </summary>
    TimedOut,

    /// <summary>A client's connect attempt failed.</summary>
    ConnectFailed,

    /// <summary>A socket error other than a reset; it was also reported through <c>OnError</c>.</summary>
    SocketError,

    /// <summary>
    /// An <c>On*</c> hook threw. The connection is closed so the failure cannot go unnoticed;
    /// the exception is in <see cref="StreamConnection.DisconnectException"/>.
    /// </summary>
    HandlerException,

    /// <summary>
    /// The TLS handshake failed or timed out (an untrusted or expired certificate, a name mismatch,
    /// a missing client certificate, a peer that does not speak TLS or does not speak at all). It
    /// was reported through <c>OnHandshakeFailed</c>; the exception is in <see cref="StreamConnection.DisconnectException"/>.
    /// </summary>
    HandshakeFailed,

    /// <summary>
    /// The connection's protocol needed more received bytes at once than <c>OptionReceiveBufferLimit</c>
    /// allows (a frame or header larger than the limit): the input was refused before anything was
    /// allocated past the limit. It was reported through <c>OnError</c> (<c>MessageSize</c>); the
    /// details are in <see cref="StreamConnection.DisconnectException"/>.
    /// </summary>
    ReceiveBufferFull,

    /// <summary>No byte moved either way for <c>OptionIdleTimeout</c>.</summary>
    IdleTimeout,

    /// <summary>A server at its <c>OptionMaxSessions</c> refused the connection (sessions only see this in counters and the server's <c>OnError</c>).</summary>
    SessionLimit,

    /// <summary>
    /// The peer broke the protocol spoken over the connection (a message longer than the protocol
    /// allows, a malformed frame or header): the protocol closed the connection with
    /// <see cref="StreamConnection.DisconnectOnProtocolError"/>. What it had queued before (an error
    /// reply) was still sent; the description is in <see cref="StreamConnection.DisconnectException"/>
    /// (a <see cref="System.Net.ProtocolViolationException"/>).
    /// </summary>
    ProtocolError,
}
