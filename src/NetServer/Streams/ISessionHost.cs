using NetServer.Buffers;

namespace NetServer.Streams;

/// <summary>What a session needs from the server that accepted it (implemented by <see cref="StreamServer{TSession}"/>).</summary>
internal interface ISessionHost
{
    BufferPool BufferPool { get; }

    void CountSent(long bytes);

    void CountReceived(long bytes);

    void CountPending(long delta);

    void SessionConnecting(StreamSession session);

    void SessionConnected(StreamSession session);

    void SessionDisconnecting(StreamSession session);

    /// <summary>The session is connected (and, over TLS, handshaked): it may now take multicasts.</summary>
    void SessionReady(StreamSession session);

    void SessionDisconnected(StreamSession session);
}
