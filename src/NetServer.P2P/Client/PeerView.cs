using System;
using System.Collections.Generic;
using NetServer.P2P.Wire;
using NetServer.P2P.Wire.Contracts;

namespace NetServer.P2P.Client;

/// <summary>One change to the peer list as the application sees it.</summary>
internal readonly struct PeerChange(RelayPeer peer, bool joined)
{
    public RelayPeer Peer { get; } = peer;

    public bool Joined { get; } = joined;
}

/// <summary>
/// The client's copy of the relay's peer list: a snapshot at a version, then deltas, each one
/// version on. A delta that skips a version (a gap) or arrives before any snapshot is held, and a
/// snapshot is asked for once; when it comes, the held deltas past its version are applied in
/// order. Deltas at or below the list's version are already in it and are dropped.
/// </summary>
/// <remarks>
/// Deltas and snapshots are applied by the client's receive hook, one at a time; the lock is for
/// readers on other threads (<see cref="RelayClient.GetPeers"/>).
/// </remarks>
internal sealed class PeerView
{
    /// <summary>Deltas held while a snapshot is awaited; more are dropped (the snapshot, or the next gap, covers them).</summary>
    internal const int MaxHeld = 4096;

    private readonly object _lock = new();
    private readonly Dictionary<Guid, RelayPeer> _peers = [];
    private readonly SortedDictionary<long, Delta> _held = [];
    private long _version;
    private bool _synced;

    public long Version
    {
        get
        {
            lock (_lock)
                return _version;
        }
    }

    public int Count
    {
        get
        {
            lock (_lock)
                return _peers.Count;
        }
    }

    /// <summary>True once a snapshot was applied and no gap has been seen since.</summary>
    public bool IsSynced
    {
        get
        {
            lock (_lock)
                return _synced;
        }
    }

    /// <summary>Deltas held now, for tests.</summary>
    internal int HeldCount
    {
        get
        {
            lock (_lock)
                return _held.Count;
        }
    }

    public RelayPeer[] ToArray()
    {
        lock (_lock)
        {
            var peers = new RelayPeer[_peers.Count];
            _peers.Values.CopyTo(peers, 0);
            return peers;
        }
    }

    public bool TryGet(Guid id, out RelayPeer? peer)
    {
        lock (_lock)
            return _peers.TryGetValue(id, out peer);
    }

    /// <summary>Applies or holds a delta; true when it revealed a gap and a snapshot is to be asked for now.</summary>
    public bool OnJoined(long version, PeerEntry? entry, List<PeerChange> changes) =>
        OnDelta(new Delta(version, entry is null ? null : Peer(entry), GuidBytes.Read(entry?.Id)), changes);

    /// <inheritdoc cref="OnJoined"/>
    public bool OnLeft(long version, Guid id, List<PeerChange> changes) => OnDelta(new Delta(version, null, id), changes);

    /// <summary>
    /// Replaces the list with <paramref name="snapshot"/> (the changes against the old one go to
    /// <paramref name="changes"/>), then applies the held deltas past its version. True when they
    /// still have a gap (another snapshot is to be asked for).
    /// </summary>
    public bool OnSnapshot(SnapshotMessage snapshot, List<PeerChange> changes)
    {
        lock (_lock)
        {
            if (_synced && snapshot.Version <= _version)
                return false; // the list moved past it by deltas already
            var fresh = new Dictionary<Guid, RelayPeer>(snapshot.Peers.Count);
            foreach (var entry in snapshot.Peers)
            {
                var peer = Peer(entry);
                if (peer.Id != Guid.Empty)
                    fresh[peer.Id] = peer;
            }

            foreach (var old in _peers.Values)
            {
                if (!fresh.ContainsKey(old.Id))
                    changes.Add(new PeerChange(old, joined: false));
            }

            foreach (var peer in fresh.Values)
            {
                if (!_peers.ContainsKey(peer.Id))
                    changes.Add(new PeerChange(peer, joined: true));
            }

            _peers.Clear();
            foreach (var pair in fresh)
                _peers.Add(pair.Key, pair.Value);
            _version = snapshot.Version;
            _synced = true;
            return ReplayHeldLocked(changes);
        }
    }

    /// <summary>Forgets everything (the connection ended).</summary>
    public void Reset()
    {
        lock (_lock)
        {
            _peers.Clear();
            _held.Clear();
            _version = 0;
            _synced = false;
        }
    }

    private bool OnDelta(Delta delta, List<PeerChange> changes)
    {
        lock (_lock)
        {
            if (_synced && delta.Version <= _version)
                return false;
            if (_synced && delta.Version == _version + 1)
            {
                ApplyLocked(delta, changes);
                return false;
            }

            // Before the first snapshot, or a gap: hold it until a snapshot comes.
            var gap = _synced;
            _synced = false;
            if (_held.Count < MaxHeld)
                _held[delta.Version] = delta;
            return gap;
        }
    }

    private bool ReplayHeldLocked(List<PeerChange> changes)
    {
        var gap = false;
        var rest = new List<KeyValuePair<long, Delta>>();
        foreach (var pair in _held)
        {
            if (pair.Key <= _version)
                continue;
            if (!gap && pair.Key == _version + 1)
            {
                ApplyLocked(pair.Value, changes);
                continue;
            }

            gap = true;
            rest.Add(pair);
        }

        _held.Clear();
        foreach (var pair in rest)
            _held.Add(pair.Key, pair.Value);
        _synced = !gap;
        return gap;
    }

    private void ApplyLocked(Delta delta, List<PeerChange> changes)
    {
        _version = delta.Version;
        if (delta.Joined is { } joined)
        {
            if (joined.Id == Guid.Empty)
                return;
            _peers[joined.Id] = joined;
            changes.Add(new PeerChange(joined, joined: true));
        }
        else if (_peers.TryGetValue(delta.Id, out var left))
        {
            _peers.Remove(delta.Id);
            changes.Add(new PeerChange(left, joined: false));
        }
    }

    private static RelayPeer Peer(PeerEntry entry) => new(GuidBytes.Read(entry.Id), entry.Name ?? string.Empty);

    private readonly struct Delta(long version, RelayPeer? joined, Guid id)
    {
        public long Version { get; } = version;

        /// <summary>The peer that joined; null for a departure.</summary>
        public RelayPeer? Joined { get; } = joined;

        public Guid Id { get; } = id;
    }
}
