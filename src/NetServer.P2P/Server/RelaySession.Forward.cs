using System;
using System.Buffers;
using NetServer.P2P.Internal;
using NetServer.P2P.Wire;
using NetServer.Protobuf;

namespace NetServer.P2P.Server;

// Routing: the envelope was parsed and checked in place by ProtoSession; the relay reads To, the
// flags and the request id from it, writes the frame with the sender's From into the stack (or a
// pooled array past 1 KiB) and hands it to the addressee's connection, which copies it into its
// send queue (or sends it at once when idle). Nothing is allocated per message; the payload is
// never decoded.
internal sealed partial class RelaySession
{
    // Frames up to this size are built on the stack.
    private const int StackFrame = 1024;

    private void Route(RelayPeerState peer, in ProtoMessage message)
    {
        peer.CountReceived();
        var envelope = message.Raw;
        if (RelayKinds.IsReserved(message.HeaderUtf8))
        {
            RefuseCharged(peer, in message, RelayStatus.Forbidden, $"Headers under '{RelayKinds.Prefix}' are the relay's own; they are not routed.");
            return;
        }

        var to = message.To;
        if (to == RelayAddresses.Everyone)
        {
            // Refused here (a request, over the rate): refused for the other nodes too.
            if (FanOut(peer, in message, _relay.PeerArray, "everyone"))
                BroadcastToNodes(peer, in message);
            return;
        }

        var target = _relay.FindPeer(to);
        if (target is null)
        {
            if (_relay.FindRemote(to) is { } remote)
                RouteToNode(peer, in message, remote);
            else if (_relay.FindRoom(to) is { } room)
            {
                if (room.Contains(peer))
                {
                    if (FanOut(peer, in message, room.Members, "room " + room.Name))
                        RoomToNodes(peer, in message);
                }
                else
                    RefuseCharged(peer, in message, RelayStatus.NotMember, $"Not a member of room {to}.");
            }
            else
            {
                RefuseCharged(peer, in message, RelayStatus.UnknownPeer, $"No peer or room {to} is registered.");
            }

            return;
        }

        var now = Milliseconds.Now;
        if (!peer.TryCharge(1, envelope.Length, now))
        {
            Refuse(peer, in message, RelayStatus.RateLimited, RateText());
            return;
        }

        // A reply passes only from the peer the request went to; a request is remembered until its reply passes.
        var id = message.RequestId;
        if (message.IsResponse && id != 0)
        {
            if (!target.Requests.TryComplete(id, peer))
            {
                Refuse(peer, in message, RelayStatus.UnexpectedReply, $"Peer {to} has no request {id} to this peer in flight.");
                return;
            }
        }
        else if (message.IsRequest && id != 0 && !peer.Requests.TryAdd(id, target, now))
        {
            Refuse(peer, in message, RelayStatus.ResourceLimitExceeded, $"{_relay.Limits.MaxRequestsInFlight} requests are in flight already.");
            return;
        }

        var status = Deliver(peer, target, in message);
        if (status == RelayStatus.Ok)
            return;
        if (message.IsRequest && id != 0)
            peer.Requests.Remove(id);
        Refuse(peer, in message, status, status switch
        {
            RelayStatus.UnknownPeer => $"Peer {to} left.",
            RelayStatus.InvalidRequest => "The envelope could not be rewritten with its From.",
            _ => $"Peer {to}'s queue is full ({_relay.Limits.DestinationQueueLimit} bytes).",
        });
    }

    /// <summary>
    /// One copy to <paramref name="target"/>, with the sender's From. An envelope laid out as clients
    /// write it is copied around its From straight into the addressee's outbox (the frame is built
    /// nowhere else); any other is walked into a frame of its own first (on the stack, or in a pooled
    /// array past 1 KiB), outside the outbox's lock, so that a long walk holds up no other sender.
    /// </summary>
    private static RelayStatus Deliver(RelayPeerState sender, RelayPeerState target, in ProtoMessage message)
    {
        var envelope = message.Raw;
        var frameSize = MessageProtocol.HeaderSize + EnvelopeRewriter.MaxRewrittenLength(envelope.Length);
        var range = EnvelopeRewriter.RangeOf(in message);
        if (range != EnvelopeRewriter.NoRange && frameSize <= Outbox.Capacity)
        {
            var status = CheckRoom(target, frameSize, out var outbox);
            if (status != RelayStatus.Ok)
                return status;
            var length = outbox!.AppendRouted(envelope, sender.FromField, range, frameSize);
            if (length == 0)
                return Gone(target);
            sender.CountRelayed(1, length);
            return RelayStatus.Ok;
        }

        if (frameSize <= StackFrame)
        {
            Span<byte> frame = stackalloc byte[frameSize];
            var length = EnvelopeRewriter.WriteFrame(envelope, sender.FromField, frame, range);
            return length < 0 ? RelayStatus.InvalidRequest : Deliver(sender, target, frame.Slice(0, length), copies: 1);
        }

        var rented = ArrayPool<byte>.Shared.Rent(frameSize);
        try
        {
            var length = EnvelopeRewriter.WriteFrame(envelope, sender.FromField, rented, range);
            return length < 0 ? RelayStatus.InvalidRequest : Deliver(sender, target, rented.AsSpan(0, length), copies: 1);
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(rented);
        }
    }

    private static RelayStatus Deliver(RelayPeerState sender, RelayPeerState target, ReadOnlySpan<byte> frame, long copies)
    {
        var status = Enqueue(target, frame);
        if (status == RelayStatus.Ok)
            sender.CountRelayed(copies, frame.Length);
        return status;
    }

    /// <summary>Hands a stamped frame to <paramref name="target"/>'s outbox, within its destination limit.</summary>
    private static RelayStatus Enqueue(RelayPeerState target, ReadOnlySpan<byte> frame)
    {
        var status = CheckRoom(target, frame.Length, out var outbox);
        if (status != RelayStatus.Ok)
            return status;
        return outbox!.Append(frame) ? RelayStatus.Ok : Gone(target);
    }

    /// <summary>Whether <paramref name="target"/> is still here and its destination limit has room for <paramref name="frameSize"/> more bytes.</summary>
    private static RelayStatus CheckRoom(RelayPeerState target, int frameSize, out Outbox? outbox)
    {
        outbox = null;
        var connection = target.Session.Connection;
        if (connection is null || target.HasLeft)
            return RelayStatus.UnknownPeer;
        outbox = target.Outbox;
        var pending = connection.BytesPending + outbox.Length;
        if (pending > 0 && pending + frameSize > target.Session._relay.Limits.DestinationQueueLimit)
            return RelayStatus.ResourceLimitExceeded;
        return RelayStatus.Ok;
    }

    /// <summary>The status of a frame the outbox refused: its connection went (or stopped reading, and was closed for it).</summary>
    private static RelayStatus Gone(RelayPeerState target) =>
        target.Session.Connection is { IsConnected: true } ? RelayStatus.ResourceLimitExceeded : RelayStatus.UnknownPeer;

    /// <summary>
    /// A message to a room or to everyone: one copy per recipient but the sender, the frame built
    /// once. The sender is charged for every copy first; recipients whose queues are full are
    /// skipped, and the sender is told how many with one status.
    /// </summary>
    /// <returns>False when the message was refused as a whole (a request, or over the sender's rate): it goes no further.</returns>
    private bool FanOut(RelayPeerState sender, in ProtoMessage message, RelayPeerState[] members, string audience)
    {
        if (message.IsRequest && message.RequestId != 0)
        {
            Refuse(sender, in message, RelayStatus.Forbidden, $"A request goes to one peer, not to {audience}.");
            return false;
        }

        // A reply passes only from the peer its request went to (checked for one addressee): never fanned out.
        if (message.IsResponse && message.RequestId != 0)
        {
            Refuse(sender, in message, RelayStatus.Forbidden, $"A reply goes to the peer that asked, not to {audience}.");
            return false;
        }

        var recipients = 0;
        foreach (var member in members)
            recipients += ReferenceEquals(member, sender) ? 0 : 1;
        if (recipients == 0)
            return true;
        var envelope = message.Raw;
        if (!sender.TryCharge(recipients, envelope.Length, Milliseconds.Now))
        {
            Refuse(sender, in message, RelayStatus.RateLimited, RateText() + $" A message to {audience} counts once per recipient ({recipients}).");
            return false;
        }

        var frameSize = MessageProtocol.HeaderSize + EnvelopeRewriter.MaxRewrittenLength(envelope.Length);
        byte[]? rented = null;
        var frame = frameSize <= StackFrame ? stackalloc byte[frameSize] : (rented = ArrayPool<byte>.Shared.Rent(frameSize));
        var skipped = 0;
        try
        {
            var length = EnvelopeRewriter.WriteFrame(envelope, sender.FromField, frame, EnvelopeRewriter.RangeOf(in message));
            if (length < 0)
            {
                Refuse(sender, in message, RelayStatus.InvalidRequest, "The envelope could not be rewritten with its From.");
                return false;
            }

            frame = frame.Slice(0, length);
            foreach (var member in members)
            {
                if (!ReferenceEquals(member, sender) && Deliver(sender, member, frame, copies: 1) != RelayStatus.Ok)
                    skipped++;
            }
        }
        finally
        {
            if (rented is not null)
                ArrayPool<byte>.Shared.Return(rented);
        }

        if (skipped > 0)
            Refuse(sender, in message, RelayStatus.ResourceLimitExceeded, $"{skipped} of {recipients} recipients in {audience} were not reached: their queues were full or they left.");
        return true;
    }

    /// <summary>
    /// Counts a refusal and tells the sender with relay/status: the reply to a refused request (its
    /// RequestAsync fails at once), else a plain message naming the refused envelope. Not sent to a
    /// peer whose own queue is over the limit (it is not reading), nor more than once a second for
    /// plain messages over the rate.
    /// </summary>
    private void Refuse(RelayPeerState? peer, in ProtoMessage message, RelayStatus status, string detail)
    {
        _relay.CountRefusal(status);
        peer?.CountRefused();
        var request = message.IsRequest && message.RequestId != 0;
        if (status == RelayStatus.RateLimited && !request && peer is not null)
        {
            var now = Milliseconds.Now;
            if (now - peer.LastRateNotice < 1000)
                return;
            peer.LastRateNotice = now;
        }

        if (BytesPending > _relay.Limits.DestinationQueueLimit)
            return;
        var notice = Notice(peer?.Id ?? Guid.Empty, status, message.Id, message.To, detail);
        if (request)
            Reply(in message, notice);
        else
            SendAsync(notice);
    }

    /// <summary>
    /// Refuses an envelope that goes nowhere, charged to the sender's buckets like a delivered one:
    /// a flood of envelopes to unknown ids (each answered with a status) is held to the peer's rate,
    /// and past it gets the rate's one notice a second instead.
    /// </summary>
    private void RefuseCharged(RelayPeerState peer, in ProtoMessage message, RelayStatus status, string detail)
    {
        if (peer.TryCharge(1, message.Raw.Length, Milliseconds.Now))
            Refuse(peer, in message, status, detail);
        else
            Refuse(peer, in message, RelayStatus.RateLimited, RateText());
    }

    /// <summary>Refuses a connection's registration (or what it sent before one) and closes it once the status is out.</summary>
    private void RefuseAndClose(in ProtoMessage message, RelayStatus status, string detail)
    {
        Refuse(null, in message, status, detail);
        Connection?.DisconnectOnProtocolError($"{status}: {detail}");
    }

    private string RateText()
    {
        var limits = _relay.Limits;
        return $"Over this peer's rate: {limits.PeerMessageRate} messages and {limits.PeerByteRate} bytes a second.";
    }
}
