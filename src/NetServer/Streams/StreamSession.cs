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

    /// <summary>Where the session sits in its server's multicast registry (-1 when not registered).</summary>
    internal int RegistrySlot { get; set; } = -1;

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
