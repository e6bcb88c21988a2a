using System;
using System.Collections.Concurrent;
using NetServer.P2P.Server;
using NetServer.P2P.Wire;
using NetServer.P2P.Wire.Contracts;

namespace NetServer.P2P;

// Peers of other relay nodes (RelayServerOptions.Backplane): they join and leave this node's list
// as its own peers do, one version each, announced to the local peers by the same deltas under the
// same lock, and are in every snapshot. Their messages are delivered as routed envelopes stamped
// with the id their node vouched for (Server/RelayCluster.cs).
public partial class RelayServer
{
    private readonly ConcurrentDictionary<Guid, RemotePeerState> _remotePeers = new();
    private RelayCluster? _cluster;

    /// <summary>Peers registered on other relay nodes that this node lists now (0 without a backplane).</summary>
    public int RemotePeerCount => _remotePeers.Count;

    /// <summary>The link to the other nodes (null without a backplane, or while stopped).</summary>
    internal RelayCluster? Cluster => System.Threading.Volatile.Read(ref _cluster);

    internal object ViewLock => _viewLock;

    internal RemotePeerState? FindRemote(Guid id) => _remotePeers.TryGetValue(id, out var peer) ? peer : null;

    /// <summary>Lists a peer of another node (under the view lock); false when its id is taken here already (by a local peer or another node's).</summary>
    internal bool AddRemoteLocked(RemotePeerState peer)
    {
        if (_peers.ContainsKey(peer.Id) || peer.Id == RelayAddresses.Relay || peer.Id == RelayAddresses.Everyone || !_remotePeers.TryAdd(peer.Id, peer))
            return false;
        var version = System.Threading.Interlocked.Increment(ref _version);
        Announce(_peerArray, Control(RelayKinds.PeerJoined), new PeerJoinedMessage { Version = version, Peer = new PeerEntry { Id = GuidBytes.ToArray(peer.Id), Name = peer.Info.Name } });
        return true;
    }

    /// <summary>Takes a peer of another node off the list (under the view lock): the local peers are told, requests waiting for it fail at their clients, its UDP pairs here go.</summary>
    internal void RemoveRemoteLocked(RemotePeerState peer)
    {
        if (!_remotePeers.TryGetValue(peer.Id, out var listed) || !ReferenceEquals(listed, peer))
            return;
        _remotePeers.TryRemove(peer.Id, out _);
        peer.HasLeft = true;
        _udp?.ForgetRemote(peer.Id);
        var version = System.Threading.Interlocked.Increment(ref _version);
        Announce(_peerArray, Control(RelayKinds.PeerLeft), new PeerLeftMessage { Version = version, PeerId = GuidBytes.ToArray(peer.Id) });
    }

    /// <summary>This node's own peers, for a node that asked (under the view lock).</summary>
    internal RelayPeer[] LocalPeersLocked()
    {
        var peers = _peerArray;
        var list = new RelayPeer[peers.Length];
        for (var i = 0; i < peers.Length; i++)
            list[i] = peers[i].Info;
        return list;
    }

    private void StartCluster(RelayServerOptions limits)
    {
        if (limits.Backplane is not { } backplane)
            return;
        var cluster = new RelayCluster(this, backplane, limits);
        System.Threading.Volatile.Write(ref _cluster, cluster);
        cluster.Start();
    }

    /// <summary>Tells the other nodes this one stops (they drop its peers at once) and forgets theirs.</summary>
    private void StopCluster()
    {
        if (System.Threading.Interlocked.Exchange(ref _cluster, null) is not { } cluster)
            return;
        cluster.Dispose();

        // The local peers are being disconnected: no deltas for them (as departures on a stop).
        lock (_viewLock)
        {
            foreach (var peer in _remotePeers.Values)
            {
                peer.HasLeft = true;
                _udp?.ForgetRemote(peer.Id);
            }
            _remotePeers.Clear();
            System.Threading.Interlocked.Increment(ref _version);
        }
    }

    private void AddRemoteEntries(SnapshotMessage snapshot)
    {
        foreach (var peer in _remotePeers.Values)
            snapshot.Peers.Add(new PeerEntry { Id = GuidBytes.ToArray(peer.Id), Name = peer.Info.Name });
    }
}
