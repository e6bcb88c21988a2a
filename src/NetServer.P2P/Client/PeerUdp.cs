using System;
using System.Net;
using System.Threading;

namespace NetServer.P2P.Client;

/// <summary>
/// A client's UDP state with one peer: the pair's secure session (its receive index finds it), the
/// direct endpoint once a punch succeeded, and the counters of <see cref="PeerStatistics"/>.
/// </summary>
internal sealed class PeerUdp(Guid peerId, SecureUdpSession session, bool initiator, Guid pairId = default)
{
    private long _bytesDirectSent;
    private long _bytesDirectReceived;
    private long _bytesRelayedSent;
    private long _bytesRelayedReceived;
    private long _punchAttempts;
    private long _punchSuccesses;
    private long _lastDirectReceive;
    private IPEndPoint? _direct;

    public Guid PeerId { get; } = peerId;

    public SecureUdpSession Session { get; } = session;

    /// <summary>The relay's id of the pair key (a key sent again with another id replaces this one).</summary>
    public Guid PairId { get; } = pairId;

    /// <summary>True for the peer that asked the relay for the pair key (the session's initiator).</summary>
    public bool Initiator { get; } = initiator;

    /// <summary>The peer's endpoint while the path is direct (set only from an authenticated datagram); null when relayed.</summary>
    public IPEndPoint? Direct => Volatile.Read(ref _direct);

    // The path's changes are atomic, so that of two threads that change it at once (a punch's
    // acknowledgement and the peer's nomination; a fallback and a datagram) only the one that
    // changed it reports the change.

    /// <summary>Makes the path direct to <paramref name="endpoint"/>; true when it was relayed until now (the caller reports it).</summary>
    public bool GoDirect(IPEndPoint endpoint) => Interlocked.Exchange(ref _direct, endpoint) is null;

    /// <summary>Follows the peer from <paramref name="from"/> to <paramref name="to"/> (roaming); nothing when the path changed meanwhile.</summary>
    public void Roam(IPEndPoint from, IPEndPoint to) => Interlocked.CompareExchange(ref _direct, to, from);

    /// <summary>Falls back to the relay from <paramref name="from"/>; true when this call did it (the caller reports it), false when the path changed meanwhile.</summary>
    public bool FallBack(IPEndPoint from) => ReferenceEquals(Interlocked.CompareExchange(ref _direct, null, from), from);

    /// <summary>When the last authenticated datagram came straight from the peer (<see cref="Internal.Milliseconds"/>).</summary>
    public long LastDirectReceive
    {
        get => Volatile.Read(ref _lastDirectReceive);
        set => Volatile.Write(ref _lastDirectReceive, value);
    }

    private object? _punch;

    /// <summary>The punch now running with this peer, if any (one at a time).</summary>
    public object? Punch => Volatile.Read(ref _punch);

    /// <summary>Makes <paramref name="punch"/> the running one; returns the one it replaces.</summary>
    public object? ReplacePunch(object punch) => Interlocked.Exchange(ref _punch, punch);

    /// <summary>Takes the running punch, if any, leaving none (the pair is going).</summary>
    public object? TakePunch() => Interlocked.Exchange(ref _punch, null);

    /// <summary>Ends <paramref name="punch"/> if it is still the running one; true when this call ended it (a newer punch is left alone).</summary>
    public bool EndPunch(object punch) => ReferenceEquals(Interlocked.CompareExchange(ref _punch, null, punch), punch);

    public void CountSent(long bytes, bool direct) => Interlocked.Add(ref direct ? ref _bytesDirectSent : ref _bytesRelayedSent, bytes);

    public void CountReceived(long bytes, bool direct) => Interlocked.Add(ref direct ? ref _bytesDirectReceived : ref _bytesRelayedReceived, bytes);

    public void CountPunchAttempt() => Interlocked.Increment(ref _punchAttempts);

    public void CountPunchSuccess() => Interlocked.Increment(ref _punchSuccesses);

    public void Fill(PeerStatistics statistics)
    {
        statistics.Path = Direct is null ? RelayPath.Relayed : RelayPath.Direct;
        statistics.DatagramBytesSentDirect = Interlocked.Read(ref _bytesDirectSent);
        statistics.DatagramBytesReceivedDirect = Interlocked.Read(ref _bytesDirectReceived);
        statistics.DatagramBytesSentRelayed = Interlocked.Read(ref _bytesRelayedSent);
        statistics.DatagramBytesReceivedRelayed = Interlocked.Read(ref _bytesRelayedReceived);
        statistics.PunchAttempts = Interlocked.Read(ref _punchAttempts);
        statistics.PunchSuccesses = Interlocked.Read(ref _punchSuccesses);
        statistics.AuthenticationFailures = Session.AuthenticationFailures;
        statistics.ReplaysDropped = Session.ReplaysDropped;
    }
}
