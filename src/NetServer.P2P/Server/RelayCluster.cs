using System;
using System.Collections.Concurrent;
using System.Collections.Generic;
using System.Threading;
using System.Threading.Tasks;
using NetServer.P2P.Internal;
using NetServer.P2P.Wire;

namespace NetServer.P2P.Server;

/// <summary>
/// One relay's part in a cluster of relay nodes over an <see cref="IRelayBackplane"/>: it tells the
/// other nodes of its own peers (Joined, Left, each one change of this node's registry, numbered
/// <c>seq</c>), keeps their peers in the relay's list, and routes envelopes between them
/// (RelayCluster.Routing.cs). Each node heartbeats its current <c>seq</c>: a node that sees a gap,
/// or a seq it does not have, asks for the whole list (State), so a lost message (Redis restarted,
/// a resubscription) is repaired within a heartbeat. A node silent for the node timeout is taken
/// for dead and its peers leave; any message heard from it counts, not only its heartbeats. Registry work runs under the relay's view lock, so the deltas the
/// local peers get stay in version order. All of this is published as
/// <see cref="RelayNodeTraffic.Control"/>, which the backplane never refuses for the peers' sake;
/// envelopes, the refusals they cause, pair keys and relayed datagrams (RelayCluster.Udp.cs) are
/// <see cref="RelayNodeTraffic.Peer"/>.
/// </summary>
internal sealed partial class RelayCluster : IRelayNodeReceiver, IDisposable
{
    private readonly RelayServer _relay;
    private readonly IRelayBackplane _backplane;
    private readonly object _lock;
    private readonly ConcurrentDictionary<Guid, RemoteNode> _nodes = new(); // changed under the lock; read without it by Hear
    private readonly long _interval;
    private readonly long _timeout;
    private Timer? _timer;
    private long _seq;
    private static readonly Task<bool> s_notPublished = Task.FromResult(false);

    /// <summary>
    /// Dropped envelopes answered per second at most (<see cref="OnNodeMessageDropped"/>): answering
    /// is work, published, done while this node is behind already. Only drops that get an answer spend it.
    /// </summary>
    internal const int DropRepliesPerSecond = 100;

    private readonly object _dropRepliesLock = new();
    private TokenBucket _dropReplies = new(DropRepliesPerSecond, Milliseconds.Now);

    private long _ignored;
    private long _dropsUnanswered;
    private long _oversized;
    private long _roomRateLimited;
    private long _publishFailures;

    public RelayCluster(RelayServer relay, IRelayBackplane backplane, RelayServerOptions limits)
    {
        _relay = relay;
        _backplane = backplane;
        _lock = relay.ViewLock;
        _interval = (long)limits.NodeHeartbeatInterval.TotalMilliseconds;
        _timeout = (long)limits.NodeTimeout.TotalMilliseconds;
    }

    public Guid NodeId => _backplane.NodeId;

    public bool IsConnected => _backplane.IsConnected;

    /// <summary>Messages from other nodes that were malformed, or named a sender their node does not have (dropped).</summary>
    public long Ignored => Interlocked.Read(ref _ignored);

    /// <summary>Envelopes to one peer that the backplane dropped and that were not answered: over <see cref="DropRepliesPerSecond"/>.</summary>
    public long DropsUnanswered => Interlocked.Read(ref _dropsUnanswered);

    /// <summary>Envelopes from other nodes longer than this node's <see cref="RelayServerOptions.MaxMessageSize"/> (dropped; a peer's sender is told <see cref="RelayStatus.MessageTooLarge"/>).</summary>
    public long Oversized => Interlocked.Read(ref _oversized);

    /// <summary>Room messages from peers of other nodes not delivered here: over the sender's rate at this node, charged per member here.</summary>
    public long RoomRateLimited => Interlocked.Read(ref _roomRateLimited);

    /// <summary>Publishes the backplane refused by throwing (it is stopped or disposed).</summary>
    public long PublishFailures => Interlocked.Read(ref _publishFailures);

    /// <summary>Nodes this node hears from now.</summary>
    public int NodeCount
    {
        get
        {
            lock (_lock)
                return _nodes.Count;
        }
    }

    public void Start()
    {
        _backplane.Attach(this);

        // The first heartbeat before any Joined of this relay, so that a node id coming back shows
        // in its count before the new peers do.
        Tick();
        _timer = new Timer(static state => ((RelayCluster)state!).Tick(), this, TimeSpan.FromMilliseconds(_interval), TimeSpan.FromMilliseconds(_interval));
    }

    /// <summary>Stops the heartbeat and tells the other nodes this one leaves (they drop its peers at once).</summary>
    public void Dispose()
    {
        _timer?.Dispose();
        _backplane.Detach(this);
        Publish(Guid.Empty, ClusterMessage.Simple(ClusterKind.Bye));
        lock (_lock)
            _nodes.Clear();
    }

    /// <summary>A local peer registered (under the view lock): one change, told to every node.</summary>
    public void LocalJoinedLocked(RelayPeerState peer) => Publish(Guid.Empty, ClusterMessage.Joined(++_seq, peer.Info));

    /// <summary>A local peer left (under the view lock); not told when the relay stops (its Bye says it for all).</summary>
    public void LocalLeftLocked(RelayPeerState peer, bool announce)
    {
        var seq = ++_seq;
        if (announce)
            Publish(Guid.Empty, ClusterMessage.Left(seq, peer.Id));
    }

    public void OnNodeMessage(Guid node, ReadOnlySpan<byte> message)
    {
        if (node == NodeId || !ClusterMessage.TryReadKind(message, out var kind))
        {
            Interlocked.Increment(ref _ignored);
            return;
        }

        switch (kind)
        {
            case ClusterKind.Envelope or ClusterKind.RoomEnvelope or ClusterKind.Status or ClusterKind.UdpPair or ClusterKind.UdpDatagram:
                Hear(node);
                break;
        }

        switch (kind)
        {
            case ClusterKind.Envelope or ClusterKind.RoomEnvelope:
                OnEnvelope(node, message, toRoom: kind == ClusterKind.RoomEnvelope);
                return;
            case ClusterKind.Status:
                OnStatus(node, message);
                return;
            case ClusterKind.UdpPair:
                OnUdpPair(node, message);
                return;
            case ClusterKind.UdpDatagram:
                OnUdpDatagram(node, message);
                return;
        }

        lock (_lock)
        {
            if (!OnRegistryLocked(node, kind, message))
                Interlocked.Increment(ref _ignored);
        }
    }

    private bool OnRegistryLocked(Guid node, ClusterKind kind, ReadOnlySpan<byte> message)
    {
        var now = Milliseconds.Now;
        if (kind == ClusterKind.Bye)
        {
            if (_nodes.TryGetValue(node, out var leaving))
                RemoveNodeLocked(leaving);
            return true;
        }

        if (!_nodes.TryGetValue(node, out var entry))
            _nodes[node] = entry = new RemoteNode(node);
        entry.LastHeard = now;
        if (kind == ClusterKind.SyncRequest)
        {
            Publish(node, ClusterMessage.State(_seq, _relay.LocalPeersLocked()));
            return true;
        }

        if (!ClusterMessage.TryReadSeq(message, out var seq, out var rest))
            return false;
        switch (kind)
        {
            case ClusterKind.Heartbeat:
                // A node's count only grows, and its messages come in order: one that went back is a
                // new relay on that node id (its Bye was lost), whose State must replace the old list.
                if (seq < entry.Seq)
                    entry.Synced = false;
                if (!entry.Synced || seq != entry.Seq)
                    AskSyncLocked(entry, now);
                return true;
            case ClusterKind.Joined:
                if (!ClusterMessage.TryReadPeer(ref rest, out var joined) || !rest.IsEmpty)
                    return false;
                if (NextLocked(entry, seq, now))
                    AddLocked(entry, joined);
                return true;
            case ClusterKind.Left:
                if (!ClusterMessage.TryReadId(rest, out var left))
                    return false;
                if (NextLocked(entry, seq, now) && entry.Peers.TryGetValue(left, out var gone))
                {
                    entry.Peers.Remove(left);
                    _relay.RemoveRemoteLocked(gone);
                }

                return true;
            case ClusterKind.State:
                return ApplyStateLocked(entry, seq, rest);
            default:
                return false;
        }
    }

    /// <summary>
    /// A node whose peer traffic arrives is alive, whether or not its heartbeats do: they share the
    /// control reserve with its registry churn and may come late behind it. Only a node this one
    /// knows already (a heartbeat or a registry message made it one, with its seq) is kept; the
    /// repair of a lost registry message stays the heartbeats' and the registry's.
    /// </summary>
    private void Hear(Guid node)
    {
        if (_nodes.TryGetValue(node, out var entry))
            entry.LastHeard = Milliseconds.Now;
    }

    /// <summary>True when <paramref name="seq"/> is the node's next change (apply it); a gap asks for its list, an old one is dropped.</summary>
    private bool NextLocked(RemoteNode entry, long seq, long now)
    {
        if (entry.Synced && seq == entry.Seq + 1)
        {
            entry.Seq = seq;
            return true;
        }

        if (!entry.Synced || seq > entry.Seq)
        {
            entry.Synced = false;
            AskSyncLocked(entry, now);
        }

        return false;
    }

    /// <summary>Replaces a node's peers with its list: those gone leave, new ones join, the others stay as they are (their requests with them).</summary>
    private bool ApplyStateLocked(RemoteNode entry, long seq, ReadOnlySpan<byte> rest)
    {
        if (!ClusterMessage.TryReadStateCount(ref rest, out var count))
            return false;
        var listed = new Dictionary<Guid, RelayPeer>(Math.Min(count, 4096));
        for (var i = 0; i < count; i++)
        {
            if (!ClusterMessage.TryReadPeer(ref rest, out var peer))
                return false;
            listed[peer.Id] = peer;
        }

        if (!rest.IsEmpty || (entry.Synced && seq <= entry.Seq))
            return rest.IsEmpty;
        List<RemotePeerState>? gone = null;
        foreach (var peer in entry.Peers.Values)
        {
            if (!listed.ContainsKey(peer.Id))
                (gone ??= []).Add(peer);
        }

        if (gone is not null)
        {
            foreach (var peer in gone)
            {
                entry.Peers.Remove(peer.Id);
                _relay.RemoveRemoteLocked(peer);
            }
        }

        foreach (var peer in listed.Values)
        {
            if (!entry.Peers.ContainsKey(peer.Id))
                AddLocked(entry, peer);
        }

        entry.Seq = seq;
        entry.Synced = true;
        return true;
    }

    private void AddLocked(RemoteNode entry, RelayPeer peer)
    {
        var state = new RemotePeerState(peer, entry.Id, _relay.Limits, Milliseconds.Now);
        if (_relay.AddRemoteLocked(state))
            entry.Peers[peer.Id] = state;
        else
            Interlocked.Increment(ref _ignored); // an id taken here already: the first holder keeps it
    }

    private void RemoveNodeLocked(RemoteNode entry)
    {
        _nodes.TryRemove(entry.Id, out _);
        foreach (var peer in entry.Peers.Values)
            _relay.RemoveRemoteLocked(peer);
        entry.Peers.Clear();
    }

    /// <summary>Asks a node for its list, at most once a heartbeat interval.</summary>
    private void AskSyncLocked(RemoteNode entry, long now)
    {
        if (now - entry.SyncAsked < _interval)
            return;
        entry.SyncAsked = now;
        Publish(entry.Id, ClusterMessage.Simple(ClusterKind.SyncRequest));
    }

    /// <summary>The heartbeat: this node's seq to all; nodes silent past the timeout are taken for dead.</summary>
    private void Tick()
    {
        var now = Milliseconds.Now;
        lock (_lock)
        {
            if (!ReferenceEquals(_relay.Cluster, this))
                return;
            Publish(Guid.Empty, ClusterMessage.Heartbeat(_seq));
            List<RemoteNode>? dead = null;
            foreach (var entry in _nodes.Values)
            {
                if (now - entry.LastHeard > _timeout)
                    (dead ??= []).Add(entry);
                else if (!entry.Synced)
                    AskSyncLocked(entry, now);
            }

            if (dead is not null)
            {
                foreach (var entry in dead)
                    RemoveNodeLocked(entry);
            }
        }
    }

    /// <summary>Registry messages are not awaited: one lost is repaired by the next heartbeat's comparison.</summary>
    private void Publish(Guid node, byte[] message, RelayNodeTraffic traffic = RelayNodeTraffic.Control) => _ = TryPublish(node, message, traffic);

    /// <summary>
    /// Publishes through the backplane; a backplane that throws instead of returning false (stopped,
    /// disposed) fails this message only: it must not take the heartbeat or a peer's receive hook down.
    /// </summary>
    private Task<bool> TryPublish(Guid node, ReadOnlyMemory<byte> message, RelayNodeTraffic traffic)
    {
        try
        {
            return _backplane.PublishAsync(node, message, traffic);
        }
        catch (Exception e) when (e is InvalidOperationException or ObjectDisposedException)
        {
            Interlocked.Increment(ref _publishFailures);
            return s_notPublished;
        }
    }

    private sealed class RemoteNode(Guid id)
    {
        public Guid Id { get; } = id;

        public Dictionary<Guid, RemotePeerState> Peers { get; } = [];

        public long Seq { get; set; }

        public bool Synced { get; set; }

        private long _lastHeard;

        /// <summary>Set under the lock by the registry, and without it by <see cref="Hear"/> (the reader of the node messages).</summary>
        public long LastHeard
        {
            get => Volatile.Read(ref _lastHeard);
            set => Volatile.Write(ref _lastHeard, value);
        }

        public long SyncAsked { get; set; } = long.MinValue / 2;
    }
}
