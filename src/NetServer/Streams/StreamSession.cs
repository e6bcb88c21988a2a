using System.Collections.Concurrent;

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

    private protected override IoService? LoopService => Host.Service ?? IoService.Ambient;

    private protected override bool HooksOnLoop => Host.HooksOnLoop;

    /// <summary>
    /// The client's address: the real client named by a trusted PROXY header (see the server's
    /// <c>OptionProxyProtocol</c>), otherwise the socket's peer. Set before the first hook; it
    /// still answers after the connection closed when it came from a PROXY header. Null when the socket could not say.
    /// </summary>
    public EndPoint? RemoteEndPoint => CurrentConnection?.PeerEndPoint;

    /// <summary>
    /// What the connection's PROXY header said (real source and destination, v2 TLVs such as ALPN
    /// and authority); null when the server read none (<c>OptionProxyProtocol</c> off, or a direct
    /// client in <see cref="ProxyProtocolMode.Optional"/> mode). Set before the first hook.
    /// </summary>
    public ProxyInfo? Proxy => CurrentConnection?.Proxy;

    private static readonly ConcurrentDictionary<Type, MulticastRoute> s_multicastRoutes = new();

    private MulticastRoute _multicastRoute;
    private long _messagesSentUnreported; // see CountMessagesSent
    private int _messagesSentKind;

    /// <summary>
    /// How a multicast reaches this session: through its type's override of a compatible
    /// <c>SendAsync</c>, or by the shared copy. Worked out at the session's first multicast, once per type.
    /// </summary>
    internal MulticastRoute MulticastRoute
    {
        get
        {
            var route = _multicastRoute;
            return route != MulticastRoute.Unknown ? route : _multicastRoute = FindMulticastRoute();
        }
    }

    private delegate bool SpanSend(ReadOnlySpan<byte> buffer);

    private delegate bool ArraySend(byte[] buffer, long offset, long size);

    private MulticastRoute FindMulticastRoute()
    {
        var type = GetType();
        if (s_multicastRoutes.TryGetValue(type, out var route))
            return route;

        // A delegate bound to the virtual method equals one bound to StreamConnection's own
        // implementation only when the session's type does not override it. Unlike a lookup of the
        // method by name, this leaves the trimming analysis nothing to flag.
        if (!new SpanSend(SendAsync).Equals(new SpanSend(base.SendAsync)))
            route = MulticastRoute.SpanOverride;
        else if (!new ArraySend(SendAsync).Equals(new ArraySend(base.SendAsync)))
            route = MulticastRoute.ArrayOverride;
        else
            route = MulticastRoute.SharedCopy;
        return s_multicastRoutes.GetOrAdd(type, route);
    }

    /// <summary>Where the session sits in its server's multicast registry (-1 when not registered, -2 once disconnected).</summary>
    internal int RegistrySlot { get; set; } = -1;

    /// <summary>
    /// Whether the session joins its server's multicast when it enters <c>Sessions</c>, before its
    /// connect hooks (what reaches it before it is ready waits in its send queue): true by default,
    /// as in NetCoreServer. A session whose protocol starts
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
        ReportMessagesSent();
    }

    /// <summary>
    /// Counted on the session (an uncontended add) and moved to the server's totals at the next
    /// flush: a message is counted before its bytes go, so the flush that sends them reports it, and
    /// a busy server does not contend on one shared counter per message.
    /// </summary>
    internal override void CountMessagesSent(int kind, long count)
    {
        _messagesSentKind = kind;
        Interlocked.Add(ref _messagesSentUnreported, count);
    }

    private void ReportMessagesSent()
    {
        if (Volatile.Read(ref _messagesSentUnreported) != 0)
            Host.CountMessagesSent(_messagesSentKind, Interlocked.Exchange(ref _messagesSentUnreported, 0));
    }

    internal override void CountReceived(long bytes)
    {
        base.CountReceived(bytes);
        Host.CountReceived(bytes);
    }

    internal override void CountMessagesReceived(int kind, long count) => Host.CountMessagesReceived(kind, count);

    internal override void CountPending(long delta) => Host.CountPending(delta);

    internal override Diagnostics.NetServerEventListener? Listener => Host.EventListener;

    internal override object DiagnosticSource => Host;

    internal override Diagnostics.EndpointTags? MetricTags => Host.MetricTags;

    internal override void InvokeDisconnecting()
    {
        OnDisconnecting();
        Host.SessionDisconnecting(this);
    }

    private protected override void NotifyDisconnected(Connection connection)
    {
        ReportMessagesSent(); // what was counted and not flushed by a later send
        Host.SessionDisconnected(this);
    }

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
