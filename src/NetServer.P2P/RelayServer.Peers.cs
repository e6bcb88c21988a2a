using System;
using System.Buffers;
using System.Buffers.Binary;
using System.Collections.Concurrent;
using System.Net;
using System.Threading;
using NetServer.P2P.Internal;
using NetServer.P2P.Server;
using NetServer.P2P.Wire;
using NetServer.P2P.Wire.Contracts;
using NetServer.Protobuf;

namespace NetServer.P2P;

// The peer list: registrations and departures, each one version, announced to the registered peers
// as a delta (relay/peer-joined, relay/peer-left) under one lock, so every peer's queue gets the
// deltas in version order. A new peer gets the list once, at the version it joined (in
// relay/welcome), and is among the recipients from the next change on, in the same locked step:
// it sees every change after that version exactly once. Nobody is sent the whole list on a change.
public partial class RelayServer
{
    private readonly object _viewLock = new();
    private readonly ConcurrentDictionary<Guid, RelayPeerState> _peers = new();
    private readonly ConcurrentDictionary<Guid, RelayPeerState> _sessions = new();
    private readonly RegistrationCounts _registrationCounts = new(); // by IpAddresses.RegistrationKeyOf: an IPv6 peer's /64 and /48
    private readonly long[] _refusals = new long[(int)RelayStatus.NodeUnavailable + 1];
    private volatile RelayPeerState[] _peerArray = [];
    private long _version;
    private long _registrations;
    private long _departedReceived;
    private long _departedRelayed;
    private long _departedBytes;

    /// <summary>Registered peers now.</summary>
    public int PeerCount => _peerArray.Length;

    /// <summary>The peer-list version: one more for each registration and each departure.</summary>
    public long PeersVersion => Interlocked.Read(ref _version);

    /// <summary>The registered peers, replaced (never changed) on each change: a broadcast reads it without a lock.</summary>
    internal RelayPeerState[] PeerArray => _peerArray;

    internal RelayPeerState? FindPeer(Guid id) => _peers.TryGetValue(id, out var peer) ? peer : null;

    /// <summary>The peer a phase-2 datagram names by its registration's session id (nothing sends one yet).</summary>
    internal RelayPeerState? FindSession(Guid sessionId) => _sessions.TryGetValue(sessionId, out var peer) ? peer : null;

    internal void CountRefusal(RelayStatus status) => Interlocked.Increment(ref _refusals[(int)status]);

    /// <summary>
    /// Registers <paramref name="session"/> as <paramref name="name"/>: the other peers are told
    /// (relay/peer-joined), the session gets its id, the list at this version and the relay's limits
    /// (relay/welcome), and from then on the deltas.
    /// </summary>
    internal RelayStatus Register(RelaySession session, string name, out RelayPeerState? registered)
    {
        registered = null;
        var limits = Limits;
        var address = (IpAddresses.Unmap(session.RemoteEndPoint) as IPEndPoint)?.Address;
        // Kept on the peer: its departure takes back what was counted, whatever the limits by then.
        RegistrationKey? key = address is null ? null : IpAddresses.RegistrationKeyOf(address, limits.Translators);
        RelayPeerState peer;
        lock (_viewLock)
        {
            if (key is { } counted && !_registrationCounts.TryAdd(counted, limits.MaxPeersPerAddress, limits.MaxPeersPerIPv6Site))
                return RelayStatus.TooManyRegistrations;

            var version = Interlocked.Increment(ref _version);
            peer = new RelayPeerState(session, NewId(), NewId(), name, address, limits, Milliseconds.Now) { JoinedVersion = version, RegistrationKey = key };
            _peers[peer.Id] = peer;
            _sessions[peer.SessionId] = peer;
            var peers = _peerArray;
            var grown = new RelayPeerState[peers.Length + 1];
            peers.CopyTo(grown, 0);
            grown[peers.Length] = peer;
            _peerArray = grown;

            // The others get the delta; the new one its view of this version, and every delta after it.
            Announce(peers, Control(RelayKinds.PeerJoined), new PeerJoinedMessage { Version = version, Peer = EntryOf(peer) });
            var welcome = new WelcomeMessage
            {
                PeerId = GuidBytes.ToArray(peer.Id),
                SessionId = GuidBytes.ToArray(peer.SessionId),
                Limits = LimitsOf(limits),
                Peers = SnapshotLocked(grown, version),
            };
            _udp?.Attach(peer, welcome);
            session.Welcome(peer, welcome);
            Cluster?.LocalJoinedLocked(peer);
        }

        Interlocked.Increment(ref _registrations);
        registered = peer;
        OnPeerRegistered(peer.Info);
        return RelayStatus.Ok;
    }

    /// <summary>A registered peer's connection ended: the others are told (relay/peer-left), its rooms let go of it.</summary>
    internal void Depart(RelayPeerState peer, DisconnectReason reason)
    {
        lock (_viewLock)
        {
            if (!_peers.TryRemove(peer.Id, out _))
                return;
            _sessions.TryRemove(peer.SessionId, out _);
            peer.HasLeft = true;
            if (peer.RegistrationKey is { } key)
                _registrationCounts.Remove(key);

            var peers = _peerArray;
            var index = Array.IndexOf(peers, peer);
            if (index >= 0)
            {
                var shrunk = new RelayPeerState[peers.Length - 1];
                Array.Copy(peers, 0, shrunk, 0, index);
                Array.Copy(peers, index + 1, shrunk, index, peers.Length - index - 1);
                _peerArray = shrunk;
            }

            _departedReceived += peer.MessagesReceived;
            _departedRelayed += peer.MessagesRelayed;
            _departedBytes += peer.BytesRelayed;
            var version = Interlocked.Increment(ref _version);

            // When the relay stops, everyone is leaving: N deltas to N peers would be wasted work.
            if (reason != DisconnectReason.ServerStopped)
                Announce(_peerArray, Control(RelayKinds.PeerLeft), new PeerLeftMessage { Version = version, PeerId = GuidBytes.ToArray(peer.Id) });
            Cluster?.LocalLeftLocked(peer, announce: reason != DisconnectReason.ServerStopped);
        }

        LeaveAllRooms(peer);
        _udp?.Detach(peer);
        OnPeerLeft(peer.Info, reason);
    }

    /// <summary>
    /// Sends one delta to <paramref name="recipients"/> (registered peers only: a connection still in
    /// its handshake or not registered holds none), serialized once, through each peer's outbox,
    /// under the view lock, so each peer's deltas are queued in version order.
    /// </summary>
    private static void Announce<T>(RelayPeerState[] recipients, MessageEnvelope envelope, T delta)
    {
        if (recipients.Length == 0)
            return;
        var writer = new ArrayBufferWriter<byte>(256);
        writer.GetSpan(MessageProtocol.HeaderSize);
        writer.Advance(MessageProtocol.HeaderSize);
        EnvelopeCodec.Write(writer, envelope, delta);
        var frame = writer.WrittenMemory.ToArray();
        BinaryPrimitives.WriteInt32LittleEndian(frame, frame.Length - MessageProtocol.HeaderSize);
        foreach (var recipient in recipients)
            recipient.Outbox.Append(frame);
    }

    /// <summary>The list at the current version, for a peer that saw a gap (relay/snapshot).</summary>
    internal SnapshotMessage Snapshot()
    {
        lock (_viewLock)
            return SnapshotLocked(_peerArray, Interlocked.Read(ref _version));
    }

    /// <summary>An envelope the relay sends: an empty From (routed ones always carry a peer's), a control header.</summary>
    internal static MessageEnvelope Control(string kind) => new(kind);

    /// <summary>The list at <paramref name="version"/>: this node's peers, then those of the other nodes (under the view lock).</summary>
    private SnapshotMessage SnapshotLocked(RelayPeerState[] peers, long version)
    {
        var snapshot = new SnapshotMessage { Version = version };
        snapshot.Peers.Capacity = peers.Length + _remotePeers.Count;
        foreach (var peer in peers)
            snapshot.Peers.Add(EntryOf(peer));
        AddRemoteEntries(snapshot);
        return snapshot;
    }

    private static PeerEntry EntryOf(RelayPeerState peer) => new() { Id = GuidBytes.ToArray(peer.Id), Name = peer.Info.Name };

    private static LimitsMessage LimitsOf(RelayServerOptions limits) => new()
    {
        MaxMessageSize = (uint)limits.MaxMessageSize,
        MessageRate = (uint)limits.PeerMessageRate,
        ByteRate = (ulong)limits.PeerByteRate,
        MaxRooms = (uint)limits.MaxRoomsPerPeer,
        MaxRoomMembers = (uint)limits.MaxMembersPerRoom,
        MaxRequestsInFlight = (uint)limits.MaxRequestsInFlight,
        MaxNameLength = (uint)limits.MaxNameLength,
    };

    private static Guid NewId()
    {
        // Never the relay's own address or the broadcast one (a 2^-122 chance, but an id must never be either).
        Guid id;
        do
            id = Guid.NewGuid();
        while (id == RelayAddresses.Relay || id == RelayAddresses.Everyone);
        return id;
    }
}
