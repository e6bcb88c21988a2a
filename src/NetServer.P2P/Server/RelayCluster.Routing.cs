using System;
using System.Threading.Tasks;
using NetServer.P2P.Internal;
using NetServer.P2P.Wire;
using NetServer.Protobuf;

namespace NetServer.P2P.Server;

// Envelopes between nodes. The sender's node did everything a local route does (the buckets, the
// reserved headers, the request table, From written with the sender's id) and publishes
// [from | to | the stamped envelope] to the addressee's node. That node takes it only when its
// sender is a peer the publishing node listed (so a node can speak only for its own peers), checks
// the envelope again, writes From once more with that id (so nothing in the bytes can override it)
// and delivers it as a local route would. Replies are checked on the requester's node, where its
// request table is; a refusal goes back to the sender's node as a Status.
internal sealed partial class RelayCluster
{
    /// <summary>
    /// Publishes <paramref name="envelope"/> from <paramref name="sender"/> (stamped with its From) to
    /// <paramref name="node"/>, or to every node when <paramref name="to"/> is everyone.
    /// </summary>
    /// <returns>The bytes published, or -1 when the envelope is malformed; <paramref name="published"/> tells whether the backplane took it.</returns>
    public int PublishEnvelope(RelayPeerState sender, Guid node, Guid to, ReadOnlySpan<byte> envelope, out Task<bool> published, ClusterKind kind = ClusterKind.Envelope)
    {
        // One array per message crosses to the backplane (which frames it again); local routes allocate nothing.
        var message = new byte[ClusterMessage.EnvelopeHeaderSize + EnvelopeRewriter.MaxRewrittenLength(envelope.Length)];
        ClusterMessage.WriteEnvelopeHeader(message, sender.Id, to, kind);
        var length = EnvelopeRewriter.Rewrite(envelope, sender.FromField, message.AsSpan(ClusterMessage.EnvelopeHeaderSize));
        if (length < 0)
        {
            published = s_notPublished;
            return -1;
        }

        var total = ClusterMessage.EnvelopeHeaderSize + length;
        published = TryPublish(node, message.AsMemory(0, total), RelayNodeTraffic.Peer);
        return total;
    }

    private void OnEnvelope(Guid node, ReadOnlySpan<byte> message, bool toRoom)
    {
        if (!ClusterMessage.TryReadEnvelope(message, out var from, out var to, out var envelope)
            || _relay.FindRemote(from) is not { HasLeft: false } sender || sender.Node != node
            || !ProtoMessage.TryParse(envelope, out var parsed, out _) || parsed.To != to || RelayKinds.IsReserved(parsed.HeaderUtf8))
        {
            System.Threading.Interlocked.Increment(ref _ignored);
            return;
        }

        // This node's limit, not the sender's node's: a node configured with a larger one (or a
        // frame forged on the backplane) must not hand a local peer more than a local route could.
        if (envelope.Length > EnvelopeRewriter.MaxRewrittenLength(_relay.Limits.MaxMessageSize))
        {
            System.Threading.Interlocked.Increment(ref _oversized);
            if (toRoom || to == RelayAddresses.Everyone)
                _relay.CountRefusal(RelayStatus.MessageTooLarge);
            else
                StatusBack(node, from, RelayStatus.MessageTooLarge, in parsed, $"The envelope is {envelope.Length} bytes; the relay node of peer {to} takes at most {_relay.Limits.MaxMessageSize}.");
            return;
        }

        // A room's members here, if it has any (its sender's node checked the sender is a member),
        // charged here once per member at this node's rates, as a local member's message would be.
        if (toRoom)
        {
            if (IsCorrelated(in parsed) || _relay.FindRoom(to) is not { } room || room.Members is not { Length: > 0 } members)
                return;
            if (sender.TryChargeRoom(members.Length, envelope.Length, Milliseconds.Now))
                RelaySession.DeliverFromNode(sender, members, envelope);
            else
            {
                System.Threading.Interlocked.Increment(ref _roomRateLimited);
                _relay.CountRefusal(RelayStatus.RateLimited);
            }

            return;
        }

        if (to == RelayAddresses.Everyone)
        {
            if (!IsCorrelated(in parsed))
                RelaySession.DeliverFromNode(sender, _relay.PeerArray, envelope);
            return;
        }

        var target = _relay.FindPeer(to);
        if (target is null)
        {
            StatusBack(node, from, RelayStatus.UnknownPeer, in parsed, $"Peer {to} left.");
            return;
        }

        if (parsed.IsResponse && parsed.RequestId != 0 && !target.Requests.TryComplete(parsed.RequestId, sender))
        {
            StatusBack(node, from, RelayStatus.UnexpectedReply, in parsed, $"Peer {to} has no request {parsed.RequestId} to this peer in flight.");
            return;
        }

        var status = RelaySession.DeliverFromNode(sender, target, envelope);
        if (status != RelayStatus.Ok)
            StatusBack(node, from, status, in parsed, status == RelayStatus.UnknownPeer ? $"Peer {to} left." : $"Peer {to}'s queue is full ({_relay.Limits.DestinationQueueLimit} bytes).");
    }

    /// <summary>
    /// The backplane dropped an envelope for this node unhandled (this node is behind): the sender
    /// of one to a single peer is told at once, so that its request fails rather than times out,
    /// at most <see cref="DropRepliesPerSecond"/> a second (past that, requests time out). So is the
    /// requester of a UDP pair key (RelayCluster.Udp.cs). Messages to everyone or to a room, and
    /// relayed datagrams, are lost silently (at most once), as the cluster's other losses are, and
    /// spend nothing of that budget. Runs beside <see cref="OnNodeMessage"/>: it reads only the
    /// message and concurrent maps.
    /// </summary>
    public void OnNodeMessageDropped(Guid node, ReadOnlySpan<byte> message)
    {
        if (ClusterMessage.TryReadKind(message, out var pairKind) && pairKind == ClusterKind.UdpPair)
        {
            OnUdpPairDropped(node, message);
            return;
        }

        if (!ClusterMessage.TryReadKind(message, out var kind) || kind != ClusterKind.Envelope
            || !ClusterMessage.TryReadEnvelope(message, out var from, out var to, out var envelope) || to == RelayAddresses.Everyone
            || _relay.FindRemote(from) is not { HasLeft: false } sender || sender.Node != node
            || !ProtoMessage.TryParse(envelope, out var parsed, out _) || parsed.To != to)
            return;
        if (!TryTakeDropReply())
        {
            System.Threading.Interlocked.Increment(ref _dropsUnanswered);
            return;
        }

        StatusBack(node, from, RelayStatus.NodeUnavailable, in parsed, $"The relay node of peer {to} is overloaded and dropped the message.");
    }

    /// <summary>Whether one more dropped envelope may be answered now (a backplane may call from more than one thread: locked, on the drop path only).</summary>
    private bool TryTakeDropReply()
    {
        lock (_dropRepliesLock)
            return _dropReplies.TryTake(1, Milliseconds.Now);
    }

    /// <summary>A request or a reply: for one peer, never fanned out to a room or to everyone (the sender's node refused it already).</summary>
    private static bool IsCorrelated(in ProtoMessage message) => message.IsRequest || (message.IsResponse && message.RequestId != 0);

    /// <summary>A routed envelope was refused on the addressee's node: its sender here is told, as if this relay had refused it.</summary>
    private void OnStatus(Guid node, ReadOnlySpan<byte> message)
    {
        if (!ClusterMessage.TryReadStatus(message, out var peerId, out var status, out var requestId, out var messageId, out var to, out var detail)
            || _relay.FindPeer(peerId) is not { } peer)
        {
            System.Threading.Interlocked.Increment(ref _ignored);
            return;
        }

        // Only a request this peer sent to a peer of that node can be failed by it.
        if (requestId != 0 && (_relay.FindRemote(to) is not { } asked || asked.Node != node || !peer.Requests.TryComplete(requestId, asked)))
        {
            System.Threading.Interlocked.Increment(ref _ignored);
            return;
        }

        peer.Session.SendStatus(peer, status, requestId, messageId, to, detail);
    }

    private void StatusBack(Guid node, Guid sender, RelayStatus status, in ProtoMessage message, string detail)
    {
        _relay.CountRefusal(status);
        var requestId = message.IsRequest ? message.RequestId : 0;
        Publish(node, ClusterMessage.Status(sender, status, requestId, message.Id, message.To, detail), RelayNodeTraffic.Peer);
    }
}
