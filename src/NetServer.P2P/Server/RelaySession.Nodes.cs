using System;
using System.Buffers;
using System.Threading.Tasks;
using NetServer.P2P.Internal;
using NetServer.P2P.Wire;
using NetServer.P2P.Wire.Contracts;
using NetServer.Protobuf;

namespace NetServer.P2P.Server;

// Routes to peers of other relay nodes (RelayServerOptions.Backplane), and the delivery of what
// those nodes route here (RelayCluster.Routing.cs). The sender's node charges and checks as for a
// local route; a send that cannot leave this node gets NodeUnavailable, at once when the backplane
// is down, or when its publish fails.
internal sealed partial class RelaySession
{
    private void RouteToNode(RelayPeerState peer, in ProtoMessage message, RemotePeerState target)
    {
        var now = Milliseconds.Now;
        if (!peer.TryCharge(1, message.Raw.Length, now))
        {
            Refuse(peer, in message, RelayStatus.RateLimited, RateText());
            return;
        }

        // A reply to a peer of another node is checked there, against its requester's table.
        var id = message.RequestId;
        var tracked = !message.IsResponse && message.IsRequest && id != 0;
        if (tracked && !peer.Requests.TryAdd(id, target, now))
        {
            Refuse(peer, in message, RelayStatus.ResourceLimitExceeded, $"{_relay.Limits.MaxRequestsInFlight} requests are in flight already.");
            return;
        }

        var cluster = _relay.Cluster;
        if (cluster is null || !cluster.IsConnected)
        {
            if (tracked)
                peer.Requests.Remove(id);
            Refuse(peer, in message, RelayStatus.NodeUnavailable, Unreachable(message.To));
            return;
        }

        var length = cluster.PublishEnvelope(peer, target.Node, target.Id, message.Raw, out var published);
        peer.CountRelayed(1, Math.Max(length, 0));
        _ = FailUnpublishedAsync(published, peer, tracked ? id : 0, message.Id, message.To);
    }

    /// <summary>The other nodes' part of a message to everyone: one publish, charged once per peer of theirs. Requests were refused by the local fan-out.</summary>
    private void BroadcastToNodes(RelayPeerState peer, in ProtoMessage message)
    {
        var cluster = _relay.Cluster;
        var recipients = _relay.RemotePeerCount;
        if (cluster is null || recipients == 0 || (message.IsRequest && message.RequestId != 0))
            return;
        if (!peer.TryCharge(recipients, message.Raw.Length, Milliseconds.Now))
        {
            Refuse(peer, in message, RelayStatus.RateLimited, RateText() + $" A message to everyone counts once per recipient ({recipients} on other nodes).");
            return;
        }

        if (!cluster.IsConnected)
        {
            Refuse(peer, in message, RelayStatus.NodeUnavailable, $"The {recipients} peers on other relay nodes were not reached: this relay cannot reach the other nodes now.");
            return;
        }

        var length = cluster.PublishEnvelope(peer, Guid.Empty, RelayAddresses.Everyone, message.Raw, out var published);
        peer.CountRelayed(recipients, Math.Max(length, 0));
        _ = FailUnpublishedAsync(published, peer, 0, message.Id, message.To);
    }

    /// <summary>
    /// The other nodes' part of a message to a room (the same id on every node): one publish,
    /// charged once here (this node does not know their members); each node charges it again once
    /// per member of its own, at its rates (RelayCluster.Routing.cs).
    /// </summary>
    private void RoomToNodes(RelayPeerState peer, in ProtoMessage message)
    {
        var cluster = _relay.Cluster;
        if (cluster is null || (message.IsRequest && message.RequestId != 0))
            return;
        if (!peer.TryCharge(1, message.Raw.Length, Milliseconds.Now))
        {
            Refuse(peer, in message, RelayStatus.RateLimited, RateText());
            return;
        }

        if (!cluster.IsConnected)
        {
            Refuse(peer, in message, RelayStatus.NodeUnavailable, "The room's members on other relay nodes were not reached: this relay cannot reach the other nodes now.");
            return;
        }

        var length = cluster.PublishEnvelope(peer, Guid.Empty, message.To, message.Raw, out var published, ClusterKind.RoomEnvelope);
        peer.CountRelayed(1, Math.Max(length, 0));
        _ = FailUnpublishedAsync(published, peer, 0, message.Id, message.To);
    }

    /// <summary>Tells the sender when the backplane did not take its message (completes at once, allocating nothing, when it did).</summary>
    private async Task FailUnpublishedAsync(Task<bool> published, RelayPeerState peer, ulong requestId, Guid messageId, Guid to)
    {
        bool taken;
        try
        {
            taken = await published.ConfigureAwait(false);
        }
        catch (Exception e) when (e is not OutOfMemoryException)
        {
            taken = false; // a backplane that faults instead of returning false: the sender is told the same
        }

        if (taken)
            return;
        if (requestId != 0)
            peer.Requests.Remove(requestId);
        _relay.CountRefusal(RelayStatus.NodeUnavailable);
        SendStatus(peer, RelayStatus.NodeUnavailable, requestId, messageId, to, Unreachable(to));
    }

    /// <summary>
    /// Sends <paramref name="peer"/> a relay/status outside its receive hook (a refusal that came back
    /// from another node, or a failed publish): the reply to request <paramref name="requestId"/>
    /// (its RequestAsync fails at once), or a plain notice when it is 0.
    /// </summary>
    internal void SendStatus(RelayPeerState peer, RelayStatus status, ulong requestId, Guid messageId, Guid to, string detail)
    {
        if (BytesPending > _relay.Limits.DestinationQueueLimit)
            return;
        var notice = Notice(peer.Id, status, messageId, to, detail);
        if (requestId != 0)
            Reply(new MessageEnvelope { RequestId = requestId, Flags = ProtoFlags.Request }, notice);
        else
            SendAsync(notice);
    }

    /// <summary>Delivers an envelope a peer of another node sent to <paramref name="target"/>, stamped with the id its node vouched for.</summary>
    internal static RelayStatus DeliverFromNode(RemotePeerState sender, RelayPeerState target, ReadOnlySpan<byte> envelope) =>
        DeliverFromNode(sender, target, null, envelope);

    /// <summary>Delivers an envelope a peer of another node sent to everyone (or to a room), to every peer of this node (or the room's members here).</summary>
    internal static void DeliverFromNode(RemotePeerState sender, RelayPeerState[] everyone, ReadOnlySpan<byte> envelope) =>
        DeliverFromNode(sender, null, everyone, envelope);

    private static RelayStatus DeliverFromNode(RemotePeerState sender, RelayPeerState? target, RelayPeerState[]? everyone, ReadOnlySpan<byte> envelope)
    {
        var frameSize = MessageProtocol.HeaderSize + EnvelopeRewriter.MaxRewrittenLength(envelope.Length);
        byte[]? rented = null;
        var frame = frameSize <= StackFrame ? stackalloc byte[frameSize] : (rented = ArrayPool<byte>.Shared.Rent(frameSize));
        try
        {
            var length = EnvelopeRewriter.WriteFrame(envelope, sender.FromField, frame, EnvelopeRewriter.NoRange);
            if (length < 0)
                return RelayStatus.InvalidRequest;
            frame = frame.Slice(0, length);
            if (target is not null)
                return Enqueue(target, frame);
            foreach (var member in everyone!)
                Enqueue(member, frame);
            return RelayStatus.Ok;
        }
        finally
        {
            if (rented is not null)
                ArrayPool<byte>.Shared.Return(rented);
        }
    }

    private static MessageEnvelope Notice(Guid peer, RelayStatus status, Guid messageId, Guid to, string detail)
    {
        var notice = RelayServer.Control(RelayKinds.Status);
        notice.To = peer;
        notice.Pack(new StatusMessage
        {
            Status = (uint)status,
            MessageId = messageId == Guid.Empty ? null : GuidBytes.ToArray(messageId),
            To = to == Guid.Empty ? null : GuidBytes.ToArray(to),
            Detail = detail,
        });
        return notice;
    }

    private static string Unreachable(Guid to) => $"Peer {to} is on another relay node, and this relay cannot reach the other nodes now.";
}
