using System;
using System.Buffers;
using System.Collections.Generic;
using NetServer.Protobuf.Tests.Infrastructure;
using NetServer.Tests.Infrastructure;
using Xunit;

namespace NetServer.Protobuf.Tests.Codec;

/// <summary>The envelope's wire format against bytes written out by hand from the protobuf encoding rules.</summary>
public sealed class EnvelopeBytesTests
{
    // Worked out by hand from the protobuf encoding (tag = field << 3 | wire type):
    internal static readonly byte[] HandEncoded =
    [
        0x0A, 0x10, // field 1 (id), length-delimited, 16 bytes: the GUID in text order
        0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xAA, 0xBB, 0xCC, 0xDD, 0xEE, 0xFF,
        0x12, 0x10, // field 2 (from)
        0x10, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01,
        // field 3 (to) is Guid.Empty: not written
        0x22, 0x04, (byte)'e', (byte)'c', (byte)'h', (byte)'o', // field 4 (header), "echo"
        0x28, 0x80, 0xD0, 0x95, 0xFF, 0xBC, 0x31, // field 5 (timestamp), varint 1_700_000_000_000
        0x32, 0x06, 0x0A, 0x01, (byte)'k', 0x12, 0x01, (byte)'v', // field 6: Property { key "k", value "v" }
        0x32, 0x04, 0x0A, 0x00, 0x12, 0x00, // field 6: Property { key "", value "" } (both always written)
        0x40, 0xAC, 0x02, // field 8 (request_id), varint 300 = 0b10_0101100
        0x48, 0x01, // field 9 (flags), Request
        0x7A, 0x03, 0x08, 0x96, 0x01, // field 15 (payload), 3 bytes: Sample { a = 150 }
    ];

    internal static MessageEnvelope HandEnvelope() => new MessageEnvelope
    {
        Id = Guid.Parse("00112233-4455-6677-8899-aabbccddeeff"),
        From = Guid.Parse("10000000-0000-0000-0000-000000000001"),
        Header = "echo",
        Timestamp = DateTimeOffset.FromUnixTimeMilliseconds(1_700_000_000_000),
        RequestId = 300,
        Flags = ProtoFlags.Request,
        Payload = new byte[] { 0x08, 0x96, 0x01 },
    }.WithProperty("k", "v").WithProperty("", "");

    [Fact]
    public void An_envelope_is_written_as_the_hand_encoded_bytes()
    {
        Assert.Equal(HandEncoded, HandEnvelope().ToArray());
    }

    [Fact]
    public void A_typed_payload_is_written_as_the_same_bytes_as_the_packed_one()
    {
        var envelope = HandEnvelope();
        envelope.Payload = default;
        var output = new ArrayBufferWriter<byte>();
        EnvelopeCodec.Write(output, envelope, new Sample { A = 150 });
        Assert.Equal(HandEncoded, output.WrittenSpan.ToArray());

        Assert.Equal(new byte[] { 0x08, 0x96, 0x01 }, new MessageEnvelope().Pack(new Sample { A = 150 }).Payload.ToArray());
    }

    [Fact]
    public void The_hand_encoded_bytes_parse_into_every_field()
    {
        var message = ProtoMessage.Parse(HandEncoded);
        Assert.Equal(Guid.Parse("00112233-4455-6677-8899-aabbccddeeff"), message.Id);
        Assert.Equal(Guid.Parse("10000000-0000-0000-0000-000000000001"), message.From);
        Assert.Equal(Guid.Empty, message.To);
        Assert.Equal("echo", message.Header);
        Assert.True(message.HeaderEquals("echo"));
        Assert.False(message.HeaderEquals("echo!"));
        Assert.Equal(DateTimeOffset.FromUnixTimeMilliseconds(1_700_000_000_000), message.Timestamp);
        Assert.Equal(2, message.PropertyCount);
        Assert.Equal("v", message.GetProperty("k"));
        Assert.Equal(300UL, message.RequestId);
        Assert.True(message.IsRequest);
        Assert.False(message.IsResponse);
        Assert.Equal(new byte[] { 0x08, 0x96, 0x01 }, message.Payload.ToArray());
        Assert.Equal(150, message.Unpack<Sample>().A);

        // The payload is a slice of the received bytes, not a copy.
        Assert.True(message.Payload.Overlaps(HandEncoded));
        var keys = new List<string>();
        foreach (var property in message.Properties)
            keys.Add(property.Key + "=" + property.Value);
        Assert.Equal(["k=v", "="], keys);
    }

    [Fact]
    public void Padded_varints_unknown_fields_and_repeated_fields_are_read_as_protobuf_does()
    {
        byte[] bytes =
        [
            0x22, 0x01, (byte)'a', // header "a", replaced below (last one wins)
            0xA0, 0x01, 0x07, // field 20, varint 7: unknown, skipped
            0xA9, 0x01, 1, 2, 3, 4, 5, 6, 7, 8, // field 21, fixed64: unknown, skipped
            0xAD, 0x01, 1, 2, 3, 4, // field 21, fixed32: unknown, skipped
            0xB2, 0x01, 0x02, 0xFF, 0xFF, // field 22, length-delimited: unknown, skipped
            0x22, 0x01, (byte)'b',
            0x40, 0x85, 0x80, 0x80, 0x80, 0x00, // request_id 5 as a 5-byte padded varint
            0x7A, 0x82, 0x80, 0x00, 0x08, 0x01, // payload length 2 as a 3-byte padded varint
        ];
        var message = ProtoMessage.Parse(bytes);
        Assert.Equal("b", message.Header);
        Assert.Equal(5UL, message.RequestId);
        Assert.Equal(new byte[] { 0x08, 0x01 }, message.Payload.ToArray());
        Assert.Equal(1, message.Unpack<Sample>().A);
    }

    [Fact]
    public void An_empty_envelope_is_zero_bytes_and_parses_to_defaults()
    {
        Assert.Empty(new MessageEnvelope().ToArray());
        var message = ProtoMessage.Parse(ReadOnlySpan<byte>.Empty);
        Assert.Equal(Guid.Empty, message.Id);
        Assert.Equal("", message.Header);
        Assert.Null(message.Timestamp);
        Assert.Equal(0, message.PropertyCount);
        Assert.Equal(ProtoFlags.None, message.Flags);
        Assert.True(message.Payload.IsEmpty);
        Assert.Equal(0, message.Unpack<Sample>().A);
    }

    [Fact]
    public void Random_envelopes_round_trip_through_the_wire_format()
    {
        var random = new Random(1234);
        for (var i = 0; i < 300; i++)
        {
            var envelope = RandomEnvelope(random);
            var copy = ProtoMessage.Parse(envelope.ToArray()).ToEnvelope();
            Assert.Equal(envelope.Id, copy.Id);
            Assert.Equal(envelope.From, copy.From);
            Assert.Equal(envelope.To, copy.To);
            Assert.Equal(string.IsNullOrEmpty(envelope.Header) ? null : envelope.Header, copy.Header);
            Assert.Equal(envelope.Timestamp, copy.Timestamp);
            Assert.Equal(envelope.Properties, copy.Properties);
            Assert.Equal(envelope.RequestId, copy.RequestId);
            Assert.Equal(envelope.Flags, copy.Flags);
            Assert.Equal(envelope.Payload.ToArray(), copy.Payload.ToArray());
        }
    }

    internal static MessageEnvelope RandomEnvelope(Random random)
    {
        string[] texts = ["", "a", "route/42", "héllo wörld", "日本語", "emoji 😀", new string('x', 300)];
        var envelope = new MessageEnvelope
        {
            Id = random.Next(4) == 0 ? Guid.Empty : Guid.NewGuid(),
            From = random.Next(2) == 0 ? Guid.Empty : Guid.NewGuid(),
            To = random.Next(2) == 0 ? Guid.Empty : Guid.NewGuid(),
            Header = random.Next(5) == 0 ? null : texts[random.Next(texts.Length)],
            Timestamp = random.Next(3) == 0 ? null : DateTimeOffset.FromUnixTimeMilliseconds(random.NextInt64(-62_000_000_000_000, 253_000_000_000_000) | 1),
            RequestId = random.Next(2) == 0 ? 0 : (ulong)random.NextInt64() * 2 + 1,
            Flags = (ProtoFlags)random.Next(4),
        };
        for (var p = random.Next(4); p > 0; p--)
            envelope.WithProperty(texts[random.Next(texts.Length)], texts[random.Next(texts.Length)]);
        var payload = new byte[random.Next(8) == 0 ? random.Next(200_000) : random.Next(64)];
        random.NextBytes(payload);
        envelope.Payload = payload;
        return envelope;
    }

    [Fact]
    public void Parsing_and_reading_the_fields_allocates_nothing()
    {
        var bytes = HandEncoded;
        long sum = 0;
        var allocated = Allocations.Least(() => sum += Read(bytes), roundsPerWindow: 1000);
        Assert.Equal(0, allocated);
        Assert.True(sum > 0);

        static long Read(byte[] bytes)
        {
            var message = ProtoMessage.Parse(bytes);
            long total = message.Payload.Length + (long)message.RequestId + message.Id.GetHashCode() + message.HeaderUtf8.Length;
            foreach (var property in message.Properties)
                total += property.KeyUtf8.Length + property.ValueUtf8.Length;
            return total + (message.HeaderEquals("echo") ? 1 : 0);
        }
    }

    [Fact]
    public void Writing_an_envelope_into_a_reused_buffer_allocates_nothing()
    {
        var envelope = HandEnvelope();
        var output = new ArrayBufferWriter<byte>(1024);
        EnvelopeCodec.Write(output, envelope);
        var allocated = Allocations.Least(() =>
        {
            output.ResetWrittenCount();
            EnvelopeCodec.Write(output, envelope);
        }, roundsPerWindow: 1000);

        Assert.Equal(0, allocated);
        Assert.True(output.WrittenSpan.SequenceEqual(HandEncoded));
    }
}
