using System;
using System.Threading;
using System.Threading.Tasks;
using NetServer.P2P.Internal;
using NetServer.Protobuf;

namespace NetServer.P2P;

// Sending: an envelope addressed (its To set) to a peer, a room or everyone, serialized straight
// into the connection's send memory. The relay writes From; whatever the envelope holds there is
// replaced. Envelopes longer than the relay's limit are refused here, before they would close
// the connection at the relay.
public partial class RelayClient
{
    /// <summary>
    /// Sends <paramref name="envelope"/> (its own payload) to <paramref name="peer"/>; sets its
    /// <c>To</c>. False when not connected or the send queue refused it; what the relay cannot
    /// deliver comes back to <see cref="OnDeliveryFailed"/>.
    /// </summary>
    /// <exception cref="RelayException"><see cref="RelayStatus.MessageTooLarge"/>: longer than the relay's limit.</exception>
    public bool Send(Guid peer, MessageEnvelope envelope)
    {
        Guard.NotNull(envelope, nameof(envelope));
        envelope.To = peer;
        return Write(peer, envelope, default(object), typed: false);
    }

    /// <summary>Sends <paramref name="envelope"/> with <paramref name="payload"/> (serialized by protobuf-net straight into the send memory) to <paramref name="peer"/>; sets its <c>To</c>.</summary>
    /// <exception cref="RelayException"><see cref="RelayStatus.MessageTooLarge"/>: longer than the relay's limit.</exception>
    public bool Send<T>(Guid peer, MessageEnvelope envelope, T payload)
    {
        Guard.NotNull(envelope, nameof(envelope));
        envelope.To = peer;
        return Write(peer, envelope, payload, typed: true);
    }

    /// <summary>Sends <paramref name="envelope"/> to <paramref name="peer"/> with backpressure: completes once the send queue took it (false if the connection closed).</summary>
    public ValueTask<bool> SendAsync(Guid peer, MessageEnvelope envelope, CancellationToken cancellationToken = default)
    {
        Guard.NotNull(envelope, nameof(envelope));
        envelope.To = peer;
        using var writer = _connection.StartMessage(128 + envelope.Payload.Length);
        EnvelopeCodec.Write(writer, envelope);
        CheckSize(writer.WrittenCount);
        Count(peer, writer.WrittenCount);
        return writer.CommitAsync(cancellationToken);
    }

    /// <summary>Sends <paramref name="envelope"/> to every member of <paramref name="room"/> but this client (one message out; the relay makes the copies, each counted against this peer's rate).</summary>
    public bool SendToRoom(RelayRoom room, MessageEnvelope envelope)
    {
        Guard.NotNull(room, nameof(room));
        Guard.NotNull(envelope, nameof(envelope));
        envelope.To = room.Id;
        return Write(Guid.Empty, envelope, default(object), typed: false);
    }

    /// <summary>Sends <paramref name="envelope"/> with <paramref name="payload"/> to every member of <paramref name="room"/> but this client.</summary>
    public bool SendToRoom<T>(RelayRoom room, MessageEnvelope envelope, T payload)
    {
        Guard.NotNull(room, nameof(room));
        Guard.NotNull(envelope, nameof(envelope));
        envelope.To = room.Id;
        return Write(Guid.Empty, envelope, payload, typed: true);
    }

    /// <summary>Sends <paramref name="envelope"/> to every registered peer but this client (<see cref="RelayAddresses.Everyone"/>).</summary>
    public bool Broadcast(MessageEnvelope envelope)
    {
        Guard.NotNull(envelope, nameof(envelope));
        envelope.To = RelayAddresses.Everyone;
        return Write(Guid.Empty, envelope, default(object), typed: false);
    }

    /// <summary>Sends <paramref name="envelope"/> with <paramref name="payload"/> to every registered peer but this client.</summary>
    public bool Broadcast<T>(MessageEnvelope envelope, T payload)
    {
        Guard.NotNull(envelope, nameof(envelope));
        envelope.To = RelayAddresses.Everyone;
        return Write(Guid.Empty, envelope, payload, typed: true);
    }

    /// <summary>
    /// Sends an envelope already encoded (<see cref="EnvelopeCodec"/>, <see cref="MessageEnvelope.ToArray"/>,
    /// or a received one's <see cref="ProtoMessage.Raw"/>) as it is, addressed by its own <c>To</c>:
    /// for forwarding without decoding. The relay checks it as any other.
    /// </summary>
    /// <exception cref="RelayException"><see cref="RelayStatus.MessageTooLarge"/>: longer than the relay's limit.</exception>
    public bool SendEncoded(ReadOnlySpan<byte> envelope)
    {
        CheckSize(envelope.Length);
        return _connection.SendAsync(envelope);
    }

    /// <summary>Answers a peer's request with <paramref name="payload"/> (through the relay, to the sender it names).</summary>
    public bool Reply<T>(in ProtoMessage request, T payload) => _connection.Reply(in request, payload);

    /// <summary>Answers a peer's request with <paramref name="payload"/>'s bytes.</summary>
    public bool ReplyBytes(in ProtoMessage request, ReadOnlySpan<byte> payload) => _connection.ReplyBytes(in request, payload);

    /// <summary>Answers a peer's request with an envelope of your own (its <c>To</c> set to the requester).</summary>
    public bool Reply(in ProtoMessage request, MessageEnvelope reply)
    {
        Guard.NotNull(reply, nameof(reply));
        reply.To = request.From;
        return _connection.Reply(in request, reply);
    }

    /// <summary>Answers a request kept with <see cref="ProtoMessage.ToEnvelope"/>, later or from another thread.</summary>
    public bool Reply<T>(MessageEnvelope request, T payload) => _connection.Reply(request, payload);

    private bool Write<T>(Guid peer, MessageEnvelope envelope, T payload, bool typed)
    {
        using var writer = _connection.StartMessage(128 + envelope.Payload.Length);
        if (typed)
            EnvelopeCodec.Write(writer, envelope, payload);
        else
            EnvelopeCodec.Write(writer, envelope);
        var length = writer.WrittenCount;
        CheckSize(length); // throws before the commit: the writer's dispose drops the message
        if (peer != Guid.Empty)
            Count(peer, length);
        return writer.Commit();
    }

    private void Count(Guid peer, long length)
    {
        if (_links.TryGetValue(peer, out var link))
            link.CountSent(length + MessageProtocol.HeaderSize);
    }

    private void CheckSize(long length)
    {
        var limit = _registration?.Limits.MaxMessageSize ?? int.MaxValue;
        if (length > limit)
            throw new RelayException(RelayStatus.MessageTooLarge, $"The envelope is {length} bytes; the relay takes at most {limit}.");
    }
}
