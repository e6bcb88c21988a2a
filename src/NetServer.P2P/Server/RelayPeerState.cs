using System;
using System.Collections.Generic;
using System.Net;
using System.Threading;
using NetServer.P2P.Internal;
using NetServer.P2P.Wire;

namespace NetServer.P2P.Server;

/// <summary>
/// A registered peer on the relay: its id bound to its session (its TLS connection) for the
/// session's life, the From field stamped on everything it sends, its token buckets, the requests
/// it has in flight, its rooms and its counters.
/// </summary>
internal sealed class RelayPeerState : IRequestTarget
{
    private PeerRate _rate;
    private long _messagesReceived;
    private long _messagesRelayed;
    private long _bytesRelayed;
    private long _refused;
    private volatile bool _hasLeft;

    public RelayPeerState(RelaySession session, Guid id, Guid sessionId, string name, IPAddress? address, RelayServerOptions limits, long now)
    {
        Session = session;
        Outbox = new Outbox(session);
        Id = id;
        SessionId = sessionId;
        Info = new RelayPeer(id, name);
        Address = address;
        FromField = EnvelopeRewriter.FromFieldOf(id);
        _rate = new PeerRate(limits, now);
        UdpBucket = new TokenBucket(limits.PeerMessageRate, now);
        UdpByteBucket = new TokenBucket(limits.PeerByteRate, now);
        var lifetime = limits.RequestLifetime == Timeout.InfiniteTimeSpan ? -1 : (long)limits.RequestLifetime.TotalMilliseconds;
        Requests = new OutstandingRequests(limits.MaxRequestsInFlight, lifetime);
    }

    public RelaySession Session { get; }

    /// <summary>The relay's secure UDP session with this peer (null when the relay has no UDP port).</summary>
    public NetServer.SecureUdpSession? Udp { get; set; }

    /// <summary>The indexes the relay assigned this peer to receive on (under the UDP port's lock).</summary>
    public List<uint> UdpIndexes { get; } = [];

    /// <summary>Datagrams a second this peer may have relayed by UDP (the message rate, a bucket of its own: the UDP receive loop's only). A field: the bucket is a struct, taken from in place.</summary>
    public TokenBucket UdpBucket;

    /// <summary>Datagram bytes a second this peer may have relayed by UDP (<c>PeerByteRate</c>, a bucket of its own as <see cref="UdpBucket"/>).</summary>
    public TokenBucket UdpByteBucket;

    /// <summary>Routed frames waiting to go to this peer together.</summary>
    public Outbox Outbox { get; }

    public Guid Id { get; }

    /// <summary>
    /// A second random id of this registration, sent only to the peer itself: what the phase-2 UDP
    /// work binds a datagram sender to (docs/p2p.md). Nothing uses it yet.
    /// </summary>
    public Guid SessionId { get; }

    public RelayPeer Info { get; }

    public IPAddress? Address { get; }

    /// <summary>What this registration was counted under against the per-address and per-site limits (null: no IP source).</summary>
    public RegistrationKey? RegistrationKey { get; set; }

    /// <summary>The 18 bytes of the From field the relay writes into everything this peer sends.</summary>
    public byte[] FromField { get; }

    public OutstandingRequests Requests { get; }

    /// <summary>The view version at which the peer joined.</summary>
    public long JoinedVersion { get; set; }

    /// <summary>The rooms the peer is in (under the room registry's lock).</summary>
    public List<RelayRoomState> Rooms { get; } = [];

    /// <summary>Set once, under the view lock, when the peer left the registry.</summary>
    public bool HasLeft
    {
        get => _hasLeft;
        set => _hasLeft = value;
    }

    /// <summary>When the last relay/status for a refused plain message went out (one a second at most for rate refusals); the peer's own hook only.</summary>
    public long LastRateNotice { get; set; } = long.MinValue / 2;

    /// <summary>When the last snapshot was sent (milliseconds); under the session's snapshot lock.</summary>
    public long LastSnapshot { get; set; } = long.MinValue / 2;

    public long MessagesReceived => Volatile.Read(ref _messagesReceived);

    public long MessagesRelayed => Volatile.Read(ref _messagesRelayed);

    public long BytesRelayed => Volatile.Read(ref _bytesRelayed);

    public long Refused => Volatile.Read(ref _refused);

    // The counters below are written only by the peer's own receive hook (never concurrent with itself) and read by others.

    public void CountReceived() => Volatile.Write(ref _messagesReceived, _messagesReceived + 1);

    public void CountRelayed(long copies, long bytes)
    {
        Volatile.Write(ref _messagesRelayed, _messagesRelayed + copies);
        Volatile.Write(ref _bytesRelayed, _bytesRelayed + bytes);
    }

    public void CountRefused() => Volatile.Write(ref _refused, _refused + 1);

    /// <summary>Charges <paramref name="copies"/> messages of <paramref name="envelopeBytes"/> each to the buckets; false (nothing taken) when either is short.</summary>
    public bool TryCharge(long copies, long envelopeBytes, long now) => _rate.TryCharge(copies, envelopeBytes, now);
}
