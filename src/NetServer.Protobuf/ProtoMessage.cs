using System;
using System.Collections.Generic;
using System.Runtime.CompilerServices;
using NetServer.Protobuf.Internal;
using NetServer.Protobuf.Wire;
using ProtoBuf;

namespace NetServer.Protobuf;

/// <summary>
/// A received envelope, parsed in place: its fields and payload are read from the bytes the
/// connection received, without a copy. Valid only during the hook that gets it (the bytes belong
/// to the receive buffer): take what you keep with <see cref="Unpack{T}"/> (a new object),
/// <see cref="ToEnvelope"/> (an owned copy) or the string properties.
/// </summary>
public readonly ref struct ProtoMessage
{
    private readonly ReadOnlySpan<byte> _raw;
    private readonly ReadOnlySpan<byte> _header;
    private readonly ReadOnlySpan<byte> _payload;
    private readonly long _timestamp;
    private readonly int _fromAt; // FromFieldAt + 2: 0 (a default message) reads as "several", which is "not known"

    private ProtoMessage(
        ReadOnlySpan<byte> raw, Guid id, Guid from, Guid to, ReadOnlySpan<byte> header,
        long timestamp, int fromAt, int propertyCount, ulong requestId, ProtoFlags flags, ReadOnlySpan<byte> payload)
    {
        _raw = raw;
        Id = id;
        From = from;
        To = to;
        _header = header;
        _timestamp = timestamp;
        _fromAt = fromAt + 2;
        PropertyCount = propertyCount;
        RequestId = requestId;
        Flags = flags;
        _payload = payload;
    }

    /// <summary>The message's id (field 1; <see cref="Guid.Empty"/> when absent).</summary>
    public Guid Id { get; }

    /// <summary>The sender (field 2).</summary>
    public Guid From { get; }

    /// <summary>The addressee (field 3).</summary>
    public Guid To { get; }

    /// <summary>The header's UTF-8 bytes (field 4), without a string made.</summary>
    public ReadOnlySpan<byte> HeaderUtf8 => _header;

    /// <summary>The header (field 4) as a new string; "" when absent. Compare with <see cref="HeaderEquals"/> to allocate nothing.</summary>
    public string Header => _header.IsEmpty ? string.Empty : WireFormat.Utf8.GetString(_header);

    /// <summary>The timestamp (field 5, Unix milliseconds), or null when absent (or zero).</summary>
    public DateTimeOffset? Timestamp => _timestamp != 0 ? DateTimeOffset.FromUnixTimeMilliseconds(_timestamp) : null;

    /// <summary>How many properties (field 6) the envelope carries.</summary>
    public int PropertyCount { get; }

    /// <summary>
    /// The most properties an envelope may carry (4096): more is refused as malformed, so a peer
    /// cannot make <see cref="ToEnvelope"/> build millions of entries out of a few bytes each.
    /// </summary>
    public const int MaxProperties = 4096;

    /// <summary>The properties (field 6) in wire order, read from the received bytes as they are enumerated.</summary>
    public ProtoPropertyEnumerator Properties => new(_raw);

    /// <summary>The correlation id (field 8): that of the request for a request and its reply; 0 otherwise.</summary>
    public ulong RequestId { get; }

    /// <summary>Field 9.</summary>
    public ProtoFlags Flags { get; }

    /// <summary>True for a request: answer it with the session's or client's <c>Reply</c>.</summary>
    public bool IsRequest => (Flags & ProtoFlags.Request) != 0;

    /// <summary>True for a reply to a request.</summary>
    public bool IsResponse => (Flags & ProtoFlags.Response) != 0;

    /// <summary>The payload's bytes (field 15; empty when absent), in the receive buffer.</summary>
    public ReadOnlySpan<byte> Payload => _payload;

    /// <summary>The whole envelope as received (without the 4-byte message length).</summary>
    public ReadOnlySpan<byte> Raw => _raw;

    /// <summary>
    /// Where the envelope's From field (field 2) starts in <see cref="Raw"/>: -1 when it has none,
    /// -2 when it has several (or the message was not parsed). For a relay, which replaces it.
    /// </summary>
    internal int FromFieldAt => _fromAt - 2;

    /// <summary>
    /// Parses an envelope. Every field is checked: varints end within the bytes and within 64 bits,
    /// lengths stay inside the envelope, known fields have their wire type, GUIDs have 16 bytes (or
    /// none), strings are valid UTF-8, properties are well-formed. Unknown fields are skipped (groups
    /// are refused). A field given twice keeps the last value, as protobuf does.
    /// </summary>
    /// <returns>False with <paramref name="error"/> saying what is wrong when the bytes are not a valid envelope.</returns>
    public static bool TryParse(ReadOnlySpan<byte> envelope, out ProtoMessage message, out string? error)
    {
        message = default;
        Guid id = default, from = default, to = default;
        ReadOnlySpan<byte> header = default, payload = default;
        long timestamp = 0;
        var properties = 0;
        ulong requestId = 0;
        uint flags = 0;
        var fromAt = -1; // see FromFieldAt
        var position = 0;
        while (position < envelope.Length)
        {
            var start = position;
            position = WireFormat.ReadVarint(envelope, position, out var tag);
            if (position < 0 || tag > uint.MaxValue)
                return FailTag(out error, start);
            var field = (int)(tag >> 3);
            var wireType = (int)(tag & 7);
            if (field == 0)
                return FailFieldZero(out error, start);
            switch (field)
            {
                case EnvelopeFields.Id:
                case EnvelopeFields.From:
                case EnvelopeFields.To:
                    position = ReadBytes(envelope, position, wireType, out var bytes);
                    if (position < 0)
                        return FailBytes(out error, wireType, field);
                    if (bytes.Length is not (0 or WireFormat.GuidSize))
                        return FailGuid(out error, field, bytes.Length);
                    var guid = bytes.IsEmpty ? Guid.Empty : WireFormat.ReadGuid(bytes);
                    if (field == EnvelopeFields.Id)
                        id = guid;
                    else if (field == EnvelopeFields.From)
                    {
                        from = guid;
                        fromAt = fromAt == -1 ? start : -2;
                    }
                    else
                        to = guid;
                    break;
                case EnvelopeFields.Header:
                    position = ReadBytes(envelope, position, wireType, out header);
                    if (position < 0)
                        return FailBytes(out error, wireType, field);
                    if (!WireFormat.IsValidUtf8(header))
                        return Fail(out error, "field 4 (header) is not valid UTF-8");
                    break;
                case EnvelopeFields.Timestamp:
                case EnvelopeFields.RequestId:
                case EnvelopeFields.Flags:
                    if (wireType != WireFormat.Varint)
                        return FailVarintType(out error, field, wireType);
                    position = WireFormat.ReadVarint(envelope, position, out var value);
                    if (position < 0)
                        return FailVarint(out error, field);
                    if (field == EnvelopeFields.Timestamp)
                        timestamp = (long)value;
                    else if (field == EnvelopeFields.RequestId)
                        requestId = value;
                    else
                        flags = (uint)value; // uint32: protobuf keeps the low 32 bits
                    break;
                case EnvelopeFields.Properties:
                    position = ReadBytes(envelope, position, wireType, out var property);
                    if (position < 0)
                        return FailBytes(out error, wireType, field);
                    if (!ProtoProperty.TryRead(property, out _, out error))
                        return false;
                    if (++properties > MaxProperties)
                        return FailProperties(out error);
                    break;
                case EnvelopeFields.Payload:
                    position = ReadBytes(envelope, position, wireType, out payload);
                    if (position < 0)
                        return FailBytes(out error, wireType, field);
                    break;
                default:
                    position = WireFormat.Skip(envelope, position, wireType);
                    if (position < 0)
                        return FailUnknown(out error, field, wireType, start);
                    break;
            }
        }

        if (timestamp is < MinUnixMilliseconds or > MaxUnixMilliseconds)
            return FailTimestamp(out error, timestamp);

        message = new ProtoMessage(envelope, id, from, to, header, timestamp, fromAt, properties, requestId, (ProtoFlags)flags, payload);
        error = null;
        return true;
    }

    /// <summary>Parses an envelope (see <see cref="TryParse"/>).</summary>
    /// <exception cref="System.IO.InvalidDataException">The bytes are not a valid envelope.</exception>
    public static ProtoMessage Parse(ReadOnlySpan<byte> envelope)
    {
        if (!TryParse(envelope, out var message, out var error))
            throw new System.IO.InvalidDataException("Malformed protobuf envelope: " + error + ".");
        return message;
    }

    /// <summary>True when the header equals <paramref name="header"/> (compared as UTF-8, nothing allocated for short headers).</summary>
    public bool HeaderEquals(string header)
    {
        Guard.NotNull(header, nameof(header));
        var length = WireFormat.Utf8.GetByteCount(header);
        if (length != _header.Length)
            return false;
        Span<byte> utf8 = length <= 256 ? stackalloc byte[length] : new byte[length];
        WireFormat.Utf8.GetBytes(header.AsSpan(), utf8);
        return utf8.SequenceEqual(_header);
    }

    /// <summary>The value of the last property named <paramref name="key"/>, or null.</summary>
    public string? GetProperty(string key)
    {
        string? value = null;
        foreach (var property in Properties)
        {
            if (property.KeyEquals(key))
                value = property.Value;
        }

        return value;
    }

    /// <summary>Deserializes the payload with protobuf-net straight from the received bytes (an empty payload gives a default instance).</summary>
    public T Unpack<T>() => Serializer.Deserialize<T>(_payload);

    /// <summary>A copy of the envelope, payload included, that outlives the hook.</summary>
    public MessageEnvelope ToEnvelope()
    {
        var envelope = new MessageEnvelope
        {
            Id = Id,
            From = From,
            To = To,
            Header = _header.IsEmpty ? null : Header,
            Timestamp = Timestamp,
            RequestId = RequestId,
            Flags = Flags,
            Payload = _payload.IsEmpty ? ReadOnlyMemory<byte>.Empty : _payload.ToArray(),
        };
        if (PropertyCount > 0)
        {
            foreach (var property in Properties)
                envelope.Properties.Add(new KeyValuePair<string, string>(property.Key, property.Value));
        }

        return envelope;
    }

    // DateTimeOffset's range, so Timestamp never throws on a parsed envelope.
    private const long MinUnixMilliseconds = -62_135_596_800_000;
    private const long MaxUnixMilliseconds = 253_402_300_799_999;

    // A length-delimited field's bytes: the position after them, or -1 (FailBytes says why).
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static int ReadBytes(ReadOnlySpan<byte> envelope, int position, int wireType, out ReadOnlySpan<byte> value)
    {
        if (wireType == WireFormat.LengthDelimited)
            return WireFormat.ReadLengthDelimited(envelope, position, out value);
        value = default;
        return -1;
    }

    // The error texts are built out of line: inlined into TryParse, each interpolation's handler was
    // a local its prologue zeroed on every call, valid envelope or not.
    [MethodImpl(MethodImplOptions.NoInlining)]
    private static bool FailTag(out string? error, int start) => Fail(out error, $"a field tag at byte {start} is truncated or over 32 bits");

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static bool FailFieldZero(out string? error, int start) => Fail(out error, $"field number 0 at byte {start}");

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static bool FailGuid(out string? error, int field, int length) => Fail(out error, $"field {field} ({Name(field)}) has {length} bytes; a GUID has 16");

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static bool FailVarintType(out string? error, int field, int wireType) => Fail(out error, $"field {field} ({Name(field)}) has wire type {wireType}; a varint (0) was expected");

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static bool FailVarint(out string? error, int field) => Fail(out error, $"field {field} ({Name(field)}) has a truncated or over-long varint");

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static bool FailProperties(out string? error) => Fail(out error, $"more than {MaxProperties} properties (field 6)");

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static bool FailUnknown(out string? error, int field, int wireType, int start) =>
        Fail(out error, $"unknown field {field} (wire type {wireType}) at byte {start} is malformed or a group");

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static bool FailTimestamp(out string? error, long timestamp) => Fail(out error, $"field 5 (timestamp) {timestamp} ms is outside the years 0001-9999");

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static bool FailBytes(out string? error, int wireType, int field) => wireType != WireFormat.LengthDelimited
        ? Fail(out error, $"field {field} ({Name(field)}) has wire type {wireType}; length-delimited (2) was expected")
        : Fail(out error, $"field {field} ({Name(field)}) announces more bytes than the envelope holds");

    internal static bool Fail(out string? error, string text)
    {
        error = text;
        return false;
    }

    private static string Name(int field) => field switch
    {
        EnvelopeFields.Id => "id",
        EnvelopeFields.From => "from",
        EnvelopeFields.To => "to",
        EnvelopeFields.Header => "header",
        EnvelopeFields.Timestamp => "timestamp",
        EnvelopeFields.Properties => "properties",
        EnvelopeFields.RequestId => "request_id",
        EnvelopeFields.Flags => "flags",
        EnvelopeFields.Payload => "payload",
        _ => "unknown",
    };
}
