using System.Collections.Concurrent;
using System.Collections.Generic;

namespace NetServer.SecureUdp;

/// <summary>
/// What makes a <see cref="UdpPeer"/> secure, written once for <see cref="SecureUdpServer"/> and
/// <see cref="SecureUdpClient"/>: every datagram received is opened in place through the session
/// table before any hook sees it (a bad one is counted and dropped), and every datagram sent is
/// sealed with the session for its target: the client's one session, a server's session named by
/// the caller, or for a send to an endpoint the session bound to it. A session's endpoint moves
/// only on an authenticated datagram with its highest counter yet (a replayed or held-back one may
/// come from anywhere), and never onto an endpoint another live session holds (first one wins).
/// </summary>
internal sealed class DatagramSecurity
{
    private readonly SecureUdpSession? _only;
    private readonly ConcurrentDictionary<EndPoint, SecureUdpSession>? _byEndpoint;
    private long _dropped;
    private long _endpointConflicts;

    private DatagramSecurity(SecureUdpSessionTable sessions, SecureUdpSession? only)
    {
        Sessions = sessions;
        _only = only;
        if (only is not null)
            return;
        _byEndpoint = new ConcurrentDictionary<EndPoint, SecureUdpSession>();
        sessions.Removed = Forget;
    }

    /// <summary>The sessions datagrams are opened for.</summary>
    public SecureUdpSessionTable Sessions { get; }

    /// <summary>Datagrams received and not delivered: refused by the table or a session, or authentic but not <see cref="SecureDatagramType.Data"/>.</summary>
    public long DatagramsDropped => Interlocked.Read(ref _dropped);

    /// <summary>Authenticated datagrams that came from an endpoint another live session holds: delivered, but the endpoint stayed with its first session.</summary>
    public long EndpointConflicts => Interlocked.Read(ref _endpointConflicts);

    /// <summary>A server's: many sessions, each answered at the endpoint it was last heard from.</summary>
    public static DatagramSecurity ForServer(SecureUdpSessionTable sessions) => new(sessions, null);

    /// <summary>A client's: one session, which seals everything the client sends.</summary>
    public static DatagramSecurity ForClient(SecureUdpSession session)
    {
        var sessions = new SecureUdpSessionTable();
        sessions.TryAdd(session);
        return new DatagramSecurity(sessions, session);
    }

    /// <summary>
    /// Opens a received datagram in place; returns its session when it is authentic application
    /// data (the payload is then <c>datagram.Slice(HeaderLength, payloadLength)</c>), else null.
    /// </summary>
    public SecureUdpSession? Open(EndPoint source, Span<byte> datagram, out int payloadLength)
    {
        var status = Sessions.Open(datagram, out var session, out var type, out payloadLength, out var newest);
        if (status != SecureDatagramStatus.Ok)
        {
            Interlocked.Increment(ref _dropped);
            return null;
        }

        if (newest)
            Bind(session!, source);
        if (type == SecureDatagramType.Data)
            return session;
        Interlocked.Increment(ref _dropped); // a keepalive (or a P2P type) carries nothing for OnReceived
        return null;
    }

    /// <summary>The session to seal a datagram for <paramref name="target"/> with; null when none is bound to it.</summary>
    public SecureUdpSession? SessionFor(EndPoint target) =>
        _only ?? (_byEndpoint!.TryGetValue(target, out var session) ? session : null);

    /// <summary>Whether <paramref name="session"/> is (still) in the table datagrams are opened for.</summary>
    public bool IsLive(SecureUdpSession session) => Sessions.TryGet(session.LocalIndex, out var held) && ReferenceEquals(held, session);

    /// <summary>
    /// Roaming: the session is answered where its newest authenticated datagram came from, unless
    /// another live session holds that endpoint (an authenticated client spoofing another's address
    /// must not receive its replies), and only while the table still holds the session.
    /// </summary>
    private void Bind(SecureUdpSession session, EndPoint source)
    {
        var previous = session.RemoteEndpoint;
        if (ReferenceEquals(previous, source) || source.Equals(previous))
            return;
        if (_byEndpoint is null)
        {
            session.RemoteEndpoint = source;
            return;
        }

        var holder = _byEndpoint.GetOrAdd(source, session);
        if (holder != session && (IsLive(holder) || !_byEndpoint.TryUpdate(source, session, holder)))
        {
            Interlocked.Increment(ref _endpointConflicts);
            return;
        }

        session.RemoteEndpoint = source;

        // Against Forget: either Remove's Forget sees the new endpoint, or this check sees the removal.
        Thread.MemoryBarrier();
        if (!IsLive(session))
        {
            Unmap(source, session); // Bind raced Remove: a removed session is not resurrected
            return;
        }

        if (previous is not null)
            Unmap(previous, session);
    }

    private void Forget(SecureUdpSession session)
    {
        Thread.MemoryBarrier();
        if (session.RemoteEndpoint is { } endpoint)
            Unmap(endpoint, session);
    }

    /// <summary>Removes <paramref name="endpoint"/>'s entry only while it still names <paramref name="session"/>.</summary>
    private void Unmap(EndPoint endpoint, SecureUdpSession session) =>
        ((ICollection<KeyValuePair<EndPoint, SecureUdpSession>>)_byEndpoint!).Remove(new KeyValuePair<EndPoint, SecureUdpSession>(endpoint, session));
}
