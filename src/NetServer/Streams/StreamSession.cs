using NetServer.Streams;

namespace NetServer;

/// <summary>
/// A connection accepted by a server. The server creates it (<c>CreateSession</c>), raises
/// OnConnecting/OnConnected, starts receiving, and forgets it after OnDisconnected.
/// Derive from <see cref="TcpSession"/> or <see cref="UdsSession"/>.
/// </summary>
public abstract class StreamSession : StreamConnection
{
    private protected StreamSession(ISessionHost server)
    {
        if (server is null)
            Internal.ThrowHelper.ThrowArgumentNull(nameof(server));
        Host = server;
    }

    internal ISessionHost Host { get; }

    /// <summary>Where the session sits in its server's multicast registry (-1 when not registered, -2 once disconnected).</summary>
    internal int RegistrySlot { get; set; } = -1;

    /// <summary>
    /// Whether the session joins its server's multicast as soon as it is ready (connected, and
    /// handshaked over TLS): true by default, as in NetCoreServer. A session whose protocol starts
    /// later (a WebSocket session, at its upgrade) sets it to false in its constructor and calls
    /// <see cref="JoinMulticast"/> when it is ready.
    /// </summary>
    protected internal bool AutoJoinMulticast { get; protected set; } = true;

    /// <summary>True while the session receives its server's multicasts.</summary>
    public bool IsMulticastMember => RegistrySlot >= 0;

    /// <summary>
    /// Starts receiving the server's multicasts (a session that does not join when it connects,
    /// see <see cref="AutoJoinMulticast"/>, or one that left).
    /// </summary>
    /// <returns>True if it joined; false if it is a member already, or is not connected.</returns>
    public bool JoinMulticast() => IsConnected && Host.JoinMulticast(this);

    /// <summary>Stops receiving the server's multicasts; a multicast under way may still reach it.</summary>
    /// <returns>True if it left; false if it was not a member.</returns>
    public bool LeaveMulticast() => Host.LeaveMulticast(this);

    internal override void CountSent(long bytes)
    {
        base.CountSent(bytes);
        Host.CountSent(bytes);
    }

    internal override void CountReceived(long bytes)
    {
        base.CountReceived(bytes);
        Host.CountReceived(bytes);
    }

    internal override void CountPending(long delta) => Host.CountPending(delta);

    internal override void InvokeDisconnecting()
    {
        OnDisconnecting();
        Host.SessionDisconnecting(this);
    }

    private protected override void NotifyDisconnected(Connection connection) => Host.SessionDisconnected(this);

    internal override void InvokeReady() => Host.SessionReady(this);

    /// <summary>Raises the session's connect hooks (session first, then server); the server calls this.</summary>
    internal void RaiseConnecting()
    {
        OnConnecting();
        Host.SessionConnecting(this);
    }

    /// <summary>Raises OnConnected (session, then server).</summary>
    internal void RaiseConnected()
    {
        OnConnected();
        Host.SessionConnected(this);
    }

    /// <summary>Raises OnDisconnected with the reason; the server then raises its own.</summary>
    internal void RaiseDisconnected(DisconnectReason reason) => OnDisconnected(reason);
}
