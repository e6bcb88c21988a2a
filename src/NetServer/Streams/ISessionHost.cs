
namespace NetServer.Streams;

/// <summary>What a session needs from the server that accepted it (implemented by <see cref="StreamServer{TSession}"/>).</summary>
internal interface ISessionHost
{
    BufferPool BufferPool { get; }

    /// <summary>The service whose loops new sessions are pinned to, or null.</summary>
    IoService? Service { get; }

    /// <summary>With a service: receive hooks on the loop (true) or on the thread pool.</summary>
    bool HooksOnLoop { get; }

    Diagnostics.NetServerEventListener? EventListener { get; }

    /// <summary>The endpoint tags of its metrics (worked out at start).</summary>
    Diagnostics.EndpointTags? MetricTags { get; }

    void CountSent(long bytes);

    void CountReceived(long bytes);

    /// <summary>Whole messages of <paramref name="kind"/> (<see cref="Diagnostics.MessageMetrics"/>) a session's protocol delivered.</summary>
    void CountMessagesReceived(int kind, long count);

    /// <summary>Whole messages of <paramref name="kind"/> a session's protocol sent (reported by the session at its flushes).</summary>
    void CountMessagesSent(int kind, long count);

    void CountPending(long delta);

    void SessionConnecting(StreamSession session);

    void SessionConnected(StreamSession session);

    void SessionDisconnecting(StreamSession session);

    /// <summary>Adds the session to the multicast; false if it is a member already or disconnected.</summary>
    bool JoinMulticast(StreamSession session);

    /// <summary>Takes the session out of the multicast; false if it was not a member.</summary>
    bool LeaveMulticast(StreamSession session);

    void SessionDisconnected(StreamSession session);
}
