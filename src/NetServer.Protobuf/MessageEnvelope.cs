using System;
using System.Buffers;
using System.Collections.Generic;
using ProtoBuf;

namespace NetServer.Protobuf;

/// <summary>
/// A message with routing fields in front of its payload: id, sender, addressee, header (the
/// message type or route), timestamp, key-value properties, the correlation of a request and its
/// reply, then the payload, a protobuf message of any protobuf-net contract type
/// (<see cref="Pack{T}"/>/<see cref="Unpack{T}"/>). The wire format is a protobuf message of its
/// own, documented in docs/protobuf.md; a received one is read in place as a <see cref="ProtoMessage"/>.
/// </summary>
/// <remarks>
/// An envelope is serialized when it is sent, so one instance can be changed and sent again. Not
/// thread-safe. Default values (<see cref="Guid.Empty"/>, a null or empty header, no timestamp,
/// no properties, request id 0, no flags, an empty payload) are not written, as in proto3.
/// </remarks>
public sealed class MessageEnvelope
{
    private List<KeyValuePair<string, string>>? _properties;

    /// <summary>An empty envelope (every field at its default).</summary>
    public MessageEnvelope()
    {
    }

    /// <summary>An envelope with a new <see cref="Id"/>, <paramref name="header"/>, and the current time.</summary>
    public MessageEnvelope(string header)
    {
        Id = Guid.NewGuid();
        Header = header;
        Timestamp = DateTimeOffset.UtcNow;
    }

    /// <summary>The message's id (field 1).</summary>
    public Guid Id { get; set; }

    /// <summary>The sender (field 2).</summary>
    public Guid From { get; set; }

    /// <summary>The addressee (field 3).</summary>
    public Guid To { get; set; }

    /// <summary>The message type or route (field 4).</summary>
    public string? Header { get; set; }

    /// <summary>When the message was made (field 5, sent as Unix milliseconds, so finer parts are dropped); null: not sent.</summary>
    public DateTimeOffset? Timestamp { get; set; }

    /// <summary>Key-value pairs (field 6), in order; a key may repeat.</summary>
    public IList<KeyValuePair<string, string>> Properties => _properties ??= [];

    /// <summary>
    /// The correlation id (field 8). Set by <c>RequestAsync</c> on the request it sends and by
    /// <c>Reply</c> on the reply; a received envelope carries the peer's.
    /// </summary>
    public ulong RequestId { get; set; }

    /// <summary>Field 9 (set by <c>RequestAsync</c> and <c>Reply</c> on what they send).</summary>
    public ProtoFlags Flags { get; set; }

    /// <summary>The payload's bytes (field 15): a serialized protobuf message, or any bytes.</summary>
    public ReadOnlyMemory<byte> Payload { get; set; }

    internal List<KeyValuePair<string, string>>? PropertyList => _properties;

    /// <summary>The value of the last property named <paramref name="key"/>, or null.</summary>
    public string? GetProperty(string key)
    {
        string? value = null;
        if (_properties is not null)
        {
            foreach (var property in _properties)
            {
                if (property.Key == key)
                    value = property.Value;
            }
        }

        return value;
    }

    /// <summary>Adds a property; returns this envelope.</summary>
    public MessageEnvelope WithProperty(string key, string value)
    {
        Properties.Add(new KeyValuePair<string, string>(key ?? throw new ArgumentNullException(nameof(key)), value ?? throw new ArgumentNullException(nameof(value))));
        return this;
    }

    /// <summary>Serializes <paramref name="payload"/> with protobuf-net into <see cref="Payload"/> (a new array; a send with a typed payload avoids it).</summary>
    public MessageEnvelope Pack<T>(T payload)
    {
        var writer = new ArrayBufferWriter<byte>();
        Serializer.Serialize(writer, payload);
        Payload = writer.WrittenMemory;
        return this;
    }

    /// <summary>Deserializes <see cref="Payload"/> with protobuf-net.</summary>
    public T Unpack<T>() => Serializer.Deserialize<T>(Payload);

    /// <summary>The envelope's bytes on the wire (a new array; sends write straight into the connection's memory instead).</summary>
    public byte[] ToArray()
    {
        var writer = new ArrayBufferWriter<byte>();
        EnvelopeCodec.Write(writer, this);
        return writer.WrittenSpan.ToArray();
    }
}
