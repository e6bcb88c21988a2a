using System;
using System.Collections.Generic;
using NetServer.P2P.Wire;
using NetServer.P2P.Wire.Contracts;

namespace NetServer.P2P.Server;

// The pair keys (relay/udp-session): made once per pair of peers, one receive index for each,
// unique among the indexes that peer receives on. A pair with a peer of another node is made by
// the requester's node; the other node checks the other peer's index and limits and delivers its
// view (RelayCluster.Routing.cs). Each node keeps the pair (null for the peer it does not hold) so
// that it goes, with its local peer's index, when either peer leaves that node's list.
internal sealed partial class RelayUdp
{
    private readonly object _lock = new();
    private readonly HashSet<uint> _clientIndexes = [];
    private readonly Dictionary<(Guid, Guid), PairEntry> _pairs = [];

    /// <summary>Pair keys this node keeps now (with a peer of another node too).</summary>
    public int PairCount
    {
        get
        {
            lock (_lock)
                return _pairs.Count;
        }
    }

    /// <summary>
    /// The peer left: its session, its indexes and its pairs go, with the surviving peer's index of
    /// each pair (else a peer pairing with a victim and leaving, again and again, would fill the
    /// victim's pair keys). The survivor drops its pair session on relay/peer-left.
    /// </summary>
    public void Detach(RelayPeerState peer)
    {
        lock (_lock)
        {
            foreach (var index in peer.UdpIndexes)
                _clientIndexes.Remove(index);
            peer.UdpIndexes.Clear();
            ForgetLocked(peer.Id);
        }

        if (peer.Udp is { } session)
        {
            _table.Remove(session);
            _byIndex.TryRemove(session.LocalIndex, out _);
            session.Dispose();
        }
    }

    /// <summary>A peer of another node left this node's list: its pairs with peers of this node go, with their indexes.</summary>
    public void ForgetRemote(Guid peer)
    {
        lock (_lock)
            ForgetLocked(peer);
    }

    /// <summary>
    /// The pair key of <paramref name="requester"/> and the peer <paramref name="otherId"/>
    /// (<paramref name="other"/> when it is a peer of this node, null when of another): made once
    /// per pair (a fresh secret, an index each), the requester's view returned, the other's to be
    /// sent to it (null when the pair existed: it has it). Null when either peer of this node holds
    /// <paramref name="maxPairs"/> pair keys already (one index per pair, plus the relay's). The
    /// index of a peer of another node is random here, checked by its node (<see cref="AcceptFromNode"/>).
    /// </summary>
    public UdpPairMessage? Pair(RelayPeerState requester, Guid otherId, RelayPeerState? other, int maxPairs, out UdpPairMessage? forOther)
    {
        var key = Key(requester.Id, otherId);
        lock (_lock)
        {
            forOther = null;
            if (_pairs.TryGetValue(key, out var existing))
                return View(existing.Pair, existing.Initiator == requester, otherId);
            if (requester.UdpIndexes.Count > maxPairs || (other is not null && other.UdpIndexes.Count > maxPairs))
                return null;

            var initiatorIndex = NewClientIndexLocked(requester);
            var responderIndex = other is not null ? NewClientIndexLocked(other) : RandomIndex();
            var pair = new UdpPairMessage
            {
                PairId = GuidBytes.ToArray(Guid.NewGuid()),
                Secret = SecureUdpSession.NewSecret(),
                LocalIndex = initiatorIndex,
                RemoteIndex = responderIndex,
                Initiator = true,
            };
            _pairs[key] = new PairEntry(requester, other, pair);
            forOther = View(pair, initiator: false, requester.Id);
            return View(pair, initiator: true, otherId);
        }
    }

    /// <summary>Takes back a pair with a peer of another node that could not be sent there (the backplane did not take it): the next request makes a new one.</summary>
    public void Unpair(Guid requester, Guid other, byte[]? pairId)
    {
        lock (_lock)
        {
            if (_pairs.TryGetValue(Key(requester, other), out var entry) && entry.Pair.PairId.AsSpan().SequenceEqual(pairId))
                RemoveLocked(Key(requester, other), entry);
        }
    }

    /// <summary>
    /// A pair key the node of <paramref name="initiator"/> made with <paramref name="responder"/>, a
    /// peer of this node: its view to send it, or null with the reason (<see cref="RelayStatus.Ok"/>
    /// when this node has that pair already, or a key of its own for it that wins: nothing to send). Refused when the responder holds the
    /// most pair keys it may, or receives on that index already (a random 31-bit index met).
    /// </summary>
    public UdpPairMessage? AcceptFromNode(Guid initiator, RelayPeerState responder, Guid pairId, uint initiatorIndex, uint responderIndex, ReadOnlySpan<byte> secret, int maxPairs, out RelayStatus refusal)
    {
        var key = Key(initiator, responder.Id);
        lock (_lock)
        {
            refusal = RelayStatus.Ok;
            if (_pairs.TryGetValue(key, out var existing))
            {
                // The same pair again, or both peers asked at once, each on its node, and each node
                // made a key: both keep the one with the smaller pair id, and the node whose key
                // lost sends its peer the other (a relay/udp-session replaces the key a client holds).
                if (GuidBytes.Read(existing.Pair.PairId).CompareTo(pairId) <= 0)
                    return null;
                RemoveLocked(key, existing);
            }

            if (responder.UdpIndexes.Count > maxPairs || responder.HasLeft)
            {
                refusal = responder.HasLeft ? RelayStatus.UnknownPeer : RelayStatus.ResourceLimitExceeded;
                return null;
            }

            if (!_clientIndexes.Add(responderIndex))
            {
                refusal = RelayStatus.ResourceLimitExceeded;
                return null;
            }

            responder.UdpIndexes.Add(responderIndex);
            var pair = new UdpPairMessage
            {
                PairId = GuidBytes.ToArray(pairId),
                Secret = secret.ToArray(),
                LocalIndex = initiatorIndex,
                RemoteIndex = responderIndex,
                Initiator = true,
            };
            _pairs[key] = new PairEntry(null, responder, pair);
            return View(pair, initiator: false, initiator);
        }
    }

    private static (Guid, Guid) Key(Guid a, Guid b) => a.CompareTo(b) < 0 ? (a, b) : (b, a);

    private void ForgetLocked(Guid peer)
    {
        List<((Guid, Guid) Key, PairEntry Entry)>? gone = null;
        foreach (var (key, entry) in _pairs)
        {
            if (key.Item1 == peer || key.Item2 == peer)
                (gone ??= []).Add((key, entry));
        }

        if (gone is null)
            return;
        foreach (var (key, entry) in gone)
            RemoveLocked(key, entry);
    }

    /// <summary>Removes a pair: the indexes of its peers of this node are free again, its secret is wiped.</summary>
    private void RemoveLocked((Guid, Guid) key, PairEntry entry)
    {
        _pairs.Remove(key);
        if (entry.Initiator is { } initiator && initiator.UdpIndexes.Remove(entry.Pair.LocalIndex))
            _clientIndexes.Remove(entry.Pair.LocalIndex);
        if (entry.Responder is { } responder && responder.UdpIndexes.Remove(entry.Pair.RemoteIndex))
            _clientIndexes.Remove(entry.Pair.RemoteIndex);
        if (entry.Pair.Secret is { } secret)
            Array.Clear(secret, 0, secret.Length);
    }

    /// <summary>One side's view of a pair (stored as the initiator's): the other peer's id, its own receive index first.</summary>
    private static UdpPairMessage View(UdpPairMessage pair, bool initiator, Guid other) => new()
    {
        PeerId = GuidBytes.ToArray(other),
        PairId = pair.PairId,
        Secret = pair.Secret,
        LocalIndex = initiator ? pair.LocalIndex : pair.RemoteIndex,
        RemoteIndex = initiator ? pair.RemoteIndex : pair.LocalIndex,
        Initiator = initiator,
    };

    private uint NewClientIndexLocked(RelayPeerState peer)
    {
        uint index;
        do
        {
            index = RandomIndex();
        }
        while (!_clientIndexes.Add(index));
        peer.UdpIndexes.Add(index);
        return index;
    }

    private static uint RandomIndex() => (uint)System.Security.Cryptography.RandomNumberGenerator.GetInt32(1, int.MaxValue);

    /// <summary>A pair as this node keeps it: its peers of this node (null for one of another node), the initiator's view.</summary>
    private sealed class PairEntry(RelayPeerState? initiator, RelayPeerState? responder, UdpPairMessage pair)
    {
        public RelayPeerState? Initiator { get; } = initiator;

        public RelayPeerState? Responder { get; } = responder;

        public UdpPairMessage Pair { get; } = pair;
    }
}
