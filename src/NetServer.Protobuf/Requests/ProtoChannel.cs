using System;
using System.IO;
using System.Threading;
using System.Threading.Tasks;
using NetServer.Protobuf.Internal;

namespace NetServer.Protobuf.Requests;

/// <summary>
/// The envelope side of one message protocol (a <see cref="ProtoSession"/> or a <see cref="ProtoClient"/>):
/// envelopes written straight into the connection's send memory, received ones parsed in place,
/// replies matched to their requests. Written once; the session and the client forward to it.
/// </summary>
internal sealed class ProtoChannel
{
    // A first guess for the writer: the routing fields of a typical envelope.
    private const int HeadSizeHint = 128;

    private readonly MessageProtocol _owner;

    public ProtoChannel(MessageProtocol owner)
    {
        _owner = owner;
        owner.Disconnected += Requests.FailAll; // every pending request fails when the connection ends, whatever the subclass overrides
    }

    public RequestTable Requests { get; } = new();

    /// <summary>
    /// Parses a received message. True: <paramref name="message"/> is for the application. False:
    /// it was handled here (a reply, matched or counted late) or malformed (the connection is closing).
    /// With <paramref name="passUnmatchedReplies"/>, a reply that matches no pending request is for
    /// the application too (a broker routing replies between its connections), not counted late.
    /// </summary>
    public bool Accept(ReadOnlySpan<byte> bytes, out ProtoMessage message, bool passUnmatchedReplies = false)
    {
        if (!ProtoMessage.TryParse(bytes, out message, out var error))
        {
            _owner.Connection?.DisconnectOnProtocolError($"Malformed protobuf envelope ({bytes.Length} bytes): {error}.");
            return false;
        }

        if (!message.IsResponse || message.RequestId == 0)
            return true;
        return !Requests.TryComplete(in message, countLate: !passUnmatchedReplies) && passUnmatchedReplies;
    }

    public bool Send(MessageEnvelope envelope)
    {
        Guard.NotNull(envelope, nameof(envelope));
        using var writer = _owner.StartMessage(HeadSizeHint + envelope.Payload.Length);
        EnvelopeCodec.Write(writer, envelope);
        return writer.Commit();
    }

    public bool Send<T>(MessageEnvelope envelope, T payload)
    {
        Guard.NotNull(envelope, nameof(envelope));
        using var writer = _owner.StartMessage(HeadSizeHint);
        EnvelopeCodec.Write(writer, envelope, payload);
        return writer.Commit();
    }

    public ValueTask<bool> SendAsync(MessageEnvelope envelope, CancellationToken cancellationToken)
    {
        Guard.NotNull(envelope, nameof(envelope));
        using var writer = _owner.StartMessage(HeadSizeHint + envelope.Payload.Length);
        EnvelopeCodec.Write(writer, envelope);
        return writer.CommitAsync(cancellationToken);
    }

    public bool Reply(in ProtoMessage request, MessageEnvelope reply)
    {
        Guard.NotNull(reply, nameof(reply));
        var requestId = RequestIdOf(in request);
        using var writer = _owner.StartMessage(HeadSizeHint + reply.Payload.Length);
        EnvelopeCodec.WriteHead(writer, reply, requestId, (reply.Flags & ~ProtoFlags.Request) | ProtoFlags.Response);
        EnvelopeCodec.WritePayload(writer, reply.Payload.Span);
        return writer.Commit();
    }

    public bool Reply<T>(in ProtoMessage request, T payload)
    {
        RequestIdOf(in request);
        using var writer = _owner.StartMessage(HeadSizeHint + request.HeaderUtf8.Length);
        EnvelopeCodec.WriteReplyHead(writer, in request);
        EnvelopeCodec.WritePayload(writer, payload);
        return writer.Commit();
    }

    public bool Reply<T>(MessageEnvelope request, T payload)
    {
        RequestIdOf(request);
        using var writer = _owner.StartMessage(HeadSizeHint);
        EnvelopeCodec.WriteReplyHead(writer, request);
        EnvelopeCodec.WritePayload(writer, payload);
        return writer.Commit();
    }

    public bool Reply(MessageEnvelope request, MessageEnvelope reply)
    {
        Guard.NotNull(reply, nameof(reply));
        var requestId = RequestIdOf(request);
        using var writer = _owner.StartMessage(HeadSizeHint + reply.Payload.Length);
        EnvelopeCodec.WriteHead(writer, reply, requestId, (reply.Flags & ~ProtoFlags.Request) | ProtoFlags.Response);
        EnvelopeCodec.WritePayload(writer, reply.Payload.Span);
        return writer.Commit();
    }

    public bool ReplyBytes(in ProtoMessage request, ReadOnlySpan<byte> payload)
    {
        RequestIdOf(in request);
        using var writer = _owner.StartMessage(HeadSizeHint + request.HeaderUtf8.Length + payload.Length);
        EnvelopeCodec.WriteReplyHead(writer, in request);
        EnvelopeCodec.WritePayload(writer, payload);
        return writer.Commit();
    }

    /// <summary>
    /// Sends <paramref name="envelope"/> as a request (a new correlation id, the request flag) with
    /// <paramref name="payload"/> when <paramref name="typed"/> (else the envelope's own payload),
    /// and returns what <paramref name="reader"/> makes of the reply.
    /// </summary>
    public Task<TResult> RequestAsync<TPayload, TResult>(
        MessageEnvelope envelope, TPayload payload, bool typed, ReplyReader<TResult> reader, TimeSpan timeout, CancellationToken cancellationToken)
    {
        Guard.NotNull(envelope, nameof(envelope));
        if (timeout <= TimeSpan.Zero && timeout != Timeout.InfiniteTimeSpan)
            throw new ArgumentOutOfRangeException(nameof(timeout), timeout, "The timeout must be positive (or Timeout.InfiniteTimeSpan).");
        if (cancellationToken.IsCancellationRequested)
            return Task.FromCanceled<TResult>(cancellationToken);

        var reply = Requests.Start(reader, timeout, cancellationToken, out var id);
        ValueTask<bool> sent;
        try
        {
            using var writer = _owner.StartMessage(HeadSizeHint + envelope.Payload.Length);
            EnvelopeCodec.WriteHead(writer, envelope, id, (envelope.Flags & ~ProtoFlags.Response) | ProtoFlags.Request);
            if (typed)
                EnvelopeCodec.WritePayload(writer, payload);
            else
                EnvelopeCodec.WritePayload(writer, envelope.Payload.Span);
            sent = writer.CommitAsync(cancellationToken);
        }
        catch (Exception e) when (e is not OutOfMemoryException)
        {
            // The payload did not serialize (or the writer refused it): this request fails, nothing was sent.
            Requests.Fail(id, e);
            return reply;
        }

        _ = ObserveSendAsync(sent, id); // completes at once (no allocation) when the send already did
        return reply;
    }

    private async Task ObserveSendAsync(ValueTask<bool> sent, ulong id)
    {
        try
        {
            if (!await sent.ConfigureAwait(false))
                Requests.Fail(id, NotSent(id));
        }
        catch (Exception e) when (e is not OutOfMemoryException)
        {
            Requests.Fail(id, e);
        }
    }

    private IOException NotSent(ulong id) => new(_owner.Connection?.IsConnected == true
        ? $"Request {id} was not sent: the connection's send limit refused it."
        : $"Request {id} was not sent: not connected.");

    private static ulong RequestIdOf(in ProtoMessage request) => RequestIdOf(request.Flags, request.RequestId);

    private static ulong RequestIdOf(MessageEnvelope request)
    {
        Guard.NotNull(request, nameof(request));
        return RequestIdOf(request.Flags, request.RequestId);
    }

    private static ulong RequestIdOf(ProtoFlags flags, ulong requestId)
    {
        if ((flags & ProtoFlags.Request) == 0 || requestId == 0)
            throw new ArgumentException("The message is not a request (no request flag, or request id 0): there is nobody waiting for a reply.");
        return requestId;
    }
}
