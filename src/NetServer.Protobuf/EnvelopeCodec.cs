using System;
using System.Buffers;
using NetServer.Protobuf.Internal;
using NetServer.Protobuf.Wire;
using ProtoBuf;

namespace NetServer.Protobuf;

/// <summary>
/// Writes envelopes in their wire format (docs/protobuf.md) into any <see cref="IBufferWriter{T}"/>:
/// the fields in number order, the payload last. The sessions and clients write straight into the
/// connection's send memory through <see cref="MessageProtocol.StartMessage"/>; reading is
/// <see cref="ProtoMessage.TryParse"/>.
/// </summary>
public static class EnvelopeCodec
{
    /// <summary>Writes <paramref name="envelope"/>, its <see cref="MessageEnvelope.Payload"/> as field 15.</summary>
    public static void Write(IBufferWriter<byte> output, MessageEnvelope envelope)
    {
        Guard.NotNull(envelope, nameof(envelope));
        WriteHead(output, envelope, envelope.RequestId, envelope.Flags);
        WritePayload(output, envelope.Payload.Span);
    }

    /// <summary>
    /// Writes <paramref name="envelope"/> with <paramref name="payload"/> serialized by protobuf-net
    /// as field 15 (the envelope's own <see cref="MessageEnvelope.Payload"/> is not used). The
    /// payload is measured first (its length precedes it) and then serialized straight into the output.
    /// </summary>
    public static void Write<T>(IBufferWriter<byte> output, MessageEnvelope envelope, T payload)
    {
        Guard.NotNull(envelope, nameof(envelope));
        WriteHead(output, envelope, envelope.RequestId, envelope.Flags);
        WritePayload(output, payload);
    }

    /// <summary>Fields 1 to 9 of <paramref name="envelope"/>, with the correlation given.</summary>
    internal static void WriteHead(IBufferWriter<byte> output, MessageEnvelope envelope, ulong requestId, ProtoFlags flags)
    {
        Guard.NotNull(output, nameof(output));
        WriteIds(output, envelope.Id, envelope.From, envelope.To);
        if (!string.IsNullOrEmpty(envelope.Header))
            WireFormat.WriteStringField(output, EnvelopeFields.Header, envelope.Header!);
        if (envelope.Timestamp is { } time && time.ToUnixTimeMilliseconds() != 0)
            WireFormat.WriteVarintField(output, EnvelopeFields.Timestamp, (ulong)time.ToUnixTimeMilliseconds());
        if (envelope.PropertyList is { Count: > 0 } properties)
        {
            foreach (var property in properties)
                WriteProperty(output, property.Key, property.Value);
        }

        WriteCorrelation(output, requestId, flags);
    }

    /// <summary>
    /// Fields 1 to 9 of the reply to <paramref name="request"/>: a new id, sender and addressee
    /// swapped, the request's header, the current time, the request's id and the reply flag.
    /// </summary>
    internal static void WriteReplyHead(IBufferWriter<byte> output, in ProtoMessage request)
    {
        WriteIds(output, Guid.NewGuid(), request.To, request.From);
        if (!request.HeaderUtf8.IsEmpty)
            WireFormat.WriteBytesField(output, EnvelopeFields.Header, request.HeaderUtf8);
        WireFormat.WriteVarintField(output, EnvelopeFields.Timestamp, (ulong)DateTimeOffset.UtcNow.ToUnixTimeMilliseconds());
        WriteCorrelation(output, request.RequestId, ProtoFlags.Response);
    }

    /// <summary>As <see cref="WriteReplyHead(IBufferWriter{byte}, in ProtoMessage)"/>, for a request kept as an owned copy (a reply sent later).</summary>
    internal static void WriteReplyHead(IBufferWriter<byte> output, MessageEnvelope request)
    {
        WriteIds(output, Guid.NewGuid(), request.To, request.From);
        if (!string.IsNullOrEmpty(request.Header))
            WireFormat.WriteStringField(output, EnvelopeFields.Header, request.Header!);
        WireFormat.WriteVarintField(output, EnvelopeFields.Timestamp, (ulong)DateTimeOffset.UtcNow.ToUnixTimeMilliseconds());
        WriteCorrelation(output, request.RequestId, ProtoFlags.Response);
    }

    internal static void WritePayload(IBufferWriter<byte> output, ReadOnlySpan<byte> payload)
    {
        if (!payload.IsEmpty)
            WireFormat.WriteBytesField(output, EnvelopeFields.Payload, payload);
    }

    internal static void WritePayload<T>(IBufferWriter<byte> output, T payload)
    {
        if (payload is null)
            return;

        // protobuf-net measures once and keeps what it measured for the serialization that follows.
        using var measured = Serializer.Measure(payload);
        var length = measured.Length;
        if (length == 0)
            return;
        if (length > int.MaxValue)
            throw new InvalidOperationException($"A payload holds at most {int.MaxValue} bytes; this {typeof(T).Name} serializes to {length}.");
        WireFormat.WriteLengthPrefix(output, EnvelopeFields.Payload, (int)length);
        measured.Serialize(output);
    }

    private static void WriteIds(IBufferWriter<byte> output, Guid id, Guid from, Guid to)
    {
        if (id != Guid.Empty)
            WireFormat.WriteGuidField(output, EnvelopeFields.Id, id);
        if (from != Guid.Empty)
            WireFormat.WriteGuidField(output, EnvelopeFields.From, from);
        if (to != Guid.Empty)
            WireFormat.WriteGuidField(output, EnvelopeFields.To, to);
    }

    private static void WriteCorrelation(IBufferWriter<byte> output, ulong requestId, ProtoFlags flags)
    {
        if (requestId != 0)
            WireFormat.WriteVarintField(output, EnvelopeFields.RequestId, requestId);
        if (flags != ProtoFlags.None)
            WireFormat.WriteVarintField(output, EnvelopeFields.Flags, (uint)flags);
    }

    // A Property submessage: both strings always written (an empty one as length 0).
    private static void WriteProperty(IBufferWriter<byte> output, string key, string value)
    {
        var keyLength = WireFormat.Utf8.GetByteCount(key ?? throw new InvalidOperationException("A property key is null."));
        var valueLength = WireFormat.Utf8.GetByteCount(value ?? throw new InvalidOperationException($"The value of property '{key}' is null."));
        var length = WireFormat.StringFieldSize(EnvelopeFields.PropertyKey, keyLength) + WireFormat.StringFieldSize(EnvelopeFields.PropertyValue, valueLength);
        WireFormat.WriteLengthPrefix(output, EnvelopeFields.Properties, length);
        WireFormat.WriteLengthPrefix(output, EnvelopeFields.PropertyKey, keyLength);
        WireFormat.WriteString(output, key, keyLength);
        WireFormat.WriteLengthPrefix(output, EnvelopeFields.PropertyValue, valueLength);
        WireFormat.WriteString(output, value, valueLength);
    }
}
