using System;
using System.Buffers;
using System.Linq;
using NetServer.P2P.Tests.Infrastructure;
using NetServer.P2P.Wire;
using NetServer.Protobuf;
using NetServer.Tests.Infrastructure;
using Xunit;

namespace NetServer.P2P.Tests.Wire;

/// <summary>The relay's one change to a routed envelope: every From replaced by the sender's, the rest byte for byte.</summary>
public sealed class EnvelopeRewriterTests
{
    private static readonly Guid s_sender = new("11111111-2222-3333-4444-555555555555");
    private static readonly Guid s_spoofed = new("99999999-9999-9999-9999-999999999999");
    private static readonly Guid s_to = new("aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee");

    [Fact]
    public void A_spoofed_From_is_replaced_and_every_other_field_kept()
    {
        var envelope = Encode(new MessageEnvelope("chat") { From = s_spoofed, To = s_to, RequestId = 9, Flags = ProtoFlags.Request }.WithProperty("k", "v"), new Sample { A = 42, Text = "hi" });
        var rewritten = Rewrite(envelope);

        var message = ProtoMessage.Parse(rewritten);
        Assert.Equal(s_sender, message.From);
        Assert.Equal(s_to, message.To);
        Assert.True(message.HeaderEquals("chat"));
        Assert.Equal(9ul, message.RequestId);
        Assert.True(message.IsRequest);
        Assert.Equal("v", message.GetProperty("k"));
        Assert.Equal(42, message.Unpack<Sample>().A);
        Assert.Equal(envelope.Length, rewritten.Length); // one 18-byte From out, one in
    }

    [Fact]
    public void A_canonical_envelope_gets_the_From_where_field_order_puts_it()
    {
        var envelope = Encode(new MessageEnvelope("x") { From = s_spoofed, To = s_to }, new Sample { A = 1 });
        var expected = Encode(new MessageEnvelope("x") { From = s_sender, To = s_to }, new Sample { A = 1 }, idOf: envelope);
        Assert.Equal(expected, Rewrite(envelope));
    }

    [Fact]
    public void An_envelope_without_From_gets_one()
    {
        var envelope = Encode(new MessageEnvelope("x") { To = s_to }, new Sample { A = 1 });
        var rewritten = Rewrite(envelope);
        Assert.Equal(envelope.Length + EnvelopeRewriter.FromFieldSize, rewritten.Length);
        Assert.Equal(s_sender, ProtoMessage.Parse(rewritten).From);
    }

    [Fact]
    public void An_empty_envelope_gets_a_From()
    {
        var rewritten = Rewrite([]);
        Assert.Equal(s_sender, ProtoMessage.Parse(rewritten).From);
    }

    [Fact]
    public void Every_From_goes_even_several_and_one_after_the_payload()
    {
        // Protobuf keeps the last of a repeated field: a From after the payload would win at the receiver if it stayed.
        var writer = new ArrayBufferWriter<byte>();
        writer.Write(Encode(new MessageEnvelope("x") { From = s_spoofed, To = s_to }, new Sample { A = 5 }));
        var extra = new byte[18];
        extra[0] = 0x12;
        extra[1] = 16;
        GuidBytes.Write(extra.AsSpan(2), s_spoofed);
        writer.Write(extra);
        writer.Write(extra);
        var envelope = writer.WrittenSpan.ToArray();
        Assert.Equal(s_spoofed, ProtoMessage.Parse(envelope).From);

        var rewritten = Rewrite(envelope);
        Assert.Equal(s_sender, ProtoMessage.Parse(rewritten).From);
        Assert.Equal(envelope.Length - 2 * 18, rewritten.Length);
        Assert.Equal(-1, rewritten.AsSpan().IndexOf(extra.AsSpan(2)));
    }

    [Fact]
    public void The_frame_carries_the_rewritten_length_little_endian()
    {
        var envelope = Encode(new MessageEnvelope("x") { To = s_to }, new Sample { A = 1 });
        var frame = new byte[4 + EnvelopeRewriter.MaxRewrittenLength(envelope.Length)];
        var length = EnvelopeRewriter.WriteFrame(envelope, EnvelopeRewriter.FromFieldOf(s_sender), frame, RangeOf(envelope));
        Assert.Equal(4 + envelope.Length + 18, length);
        Assert.Equal(envelope.Length + 18, BitConverter.ToInt32(frame, 0));
    }

    [Theory]
    [InlineData(new byte[] { 0x0A })]                   // a length missing
    [InlineData(new byte[] { 0x0A, 0x05, 1, 2 })]       // a length past the end
    [InlineData(new byte[] { 0x08, 0x80 })]             // a varint cut short
    [InlineData(new byte[] { 0x0B, 0x0C })]             // a group
    public void Malformed_bytes_are_refused_not_read_past(byte[] envelope)
    {
        var destination = new byte[EnvelopeRewriter.MaxRewrittenLength(envelope.Length)];
        Assert.Equal(-1, EnvelopeRewriter.Rewrite(envelope, EnvelopeRewriter.FromFieldOf(s_sender), destination));
    }

    [Fact]
    public void Rewriting_allocates_nothing()
    {
        var envelope = Encode(new MessageEnvelope("chat") { From = s_spoofed, To = s_to }, new Sample { A = 42, Text = "hi" });
        var from = EnvelopeRewriter.FromFieldOf(s_sender);
        var destination = new byte[4 + EnvelopeRewriter.MaxRewrittenLength(envelope.Length)];
        var range = RangeOf(envelope);
        Assert.Equal(0, Allocations.Least(() => EnvelopeRewriter.WriteFrame(envelope, from, destination, range), roundsPerWindow: 10_000));
        Assert.Equal(0, Allocations.Least(() => EnvelopeRewriter.WriteFrame(envelope, from, destination, EnvelopeRewriter.NoRange), roundsPerWindow: 10_000));
    }

    [Fact]
    public void The_parse_gives_the_From_range_of_canonical_envelopes_with_none_or_one()
    {
        // What the relay routes without walking the fields again: an envelope as clients encode it.
        var none = Encode(new MessageEnvelope("x") { To = s_to }, new Sample { A = 1 });
        var one = Encode(new MessageEnvelope("x") { From = s_spoofed, To = s_to }, new Sample { A = 1 });
        var (start, end) = RangeOf(none);
        Assert.Equal(18, start); // after the id, before the addressee
        Assert.Equal(start, end);
        Assert.Equal((18, 36), RangeOf(one));
        Assert.Equal((0, 0), RangeOf([]));
        Assert.Equal(EnvelopeRewriter.NoRange, EnvelopeRewriter.RangeOf(default));

        // An empty From (2 bytes) is replaced as a whole, not as if it held a GUID.
        byte[] empty = [.. one.AsSpan(0, 18), 0x12, 0, .. one.AsSpan(36)];
        Assert.Equal((18, 20), RangeOf(empty));
        Assert.Equal(s_sender, ProtoMessage.Parse(Rewrite(empty)).From);
    }

    [Fact]
    public void A_From_or_an_id_in_a_longer_form_than_needed_is_left_to_the_walk()
    {
        // Long enough that a length read as one byte (0x80 or 0x90 where 0 or 16 is meant) would still fall inside it.
        byte[] guid = s_spoofed.ToByteArray();
        // Its payload is 0x1A bytes: a field 3 tag wherever a wrong length lands, so a wrong range is taken, not refused.
        byte[] rest = [.. Field(3, s_to), 0x7A, 0xC8, 0x01, .. Enumerable.Repeat((byte)0x1A, 200)];
        byte[][] envelopes =
        [
            [.. Field(1, s_to), 0x12, 0x90, 0, .. guid, .. rest],
            [.. Field(1, s_to), 0x12, 0x80, 0, .. rest],
            [.. Field(1, s_to), 0x92, 0, 16, .. guid, .. rest],
            [0x0A, 0x90, 0, .. guid, .. Field(2, s_spoofed), .. rest],
            [0x0A, 0x90, 0, .. guid, .. rest],
            [0x8A, 0, 16, .. guid, .. rest],
        ];
        foreach (var envelope in envelopes)
        {
            Assert.Equal(EnvelopeRewriter.NoRange, RangeOf(envelope));
            Assert.Equal(s_sender, ProtoMessage.Parse(Rewrite(envelope)).From);
        }
    }

    [Fact]
    public void A_range_outside_the_envelope_is_refused()
    {
        var envelope = Encode(new MessageEnvelope("x") { To = s_to }, new Sample { A = 1 });
        var destination = new byte[EnvelopeRewriter.MaxRewrittenLength(envelope.Length)];
        var from = EnvelopeRewriter.FromFieldOf(s_sender);
        Assert.Throws<ArgumentOutOfRangeException>(() => EnvelopeRewriter.Rewrite(envelope, from, destination, (20, 18)));
        Assert.Throws<ArgumentOutOfRangeException>(() => EnvelopeRewriter.Rewrite(envelope, from, destination, (0, envelope.Length + 1)));
    }

    [Fact]
    public void Two_Froms_or_one_after_a_later_field_are_left_to_the_walk()
    {
        var from = Field(2, s_spoofed);
        var to = Field(3, s_to);
        byte[][] envelopes = [[.. from, .. to, .. from], [.. to, .. from], [.. Field(1, s_to), .. to, .. from]];
        foreach (var envelope in envelopes)
        {
            Assert.Equal(EnvelopeRewriter.NoRange, RangeOf(envelope));
            var rewritten = Rewrite(envelope);
            Assert.Equal(s_sender, ProtoMessage.Parse(rewritten).From);
            Assert.Equal(-1, rewritten.AsSpan().IndexOf(s_spoofed.ToByteArray()));
        }
    }

    [Fact]
    public void The_parsed_range_writes_the_same_bytes_as_the_walk_for_any_field_order()
    {
        // Envelopes of 0-9 fields drawn from the known ones (ids and Froms empty, of 16 bytes, and with
        // a tag or a length in a longer form than needed), an unknown one of each wire type, in any
        // order: the copy around the parsed range and the walk agree byte for byte.
        var random = new Random(1905);
        byte[] guid = s_spoofed.ToByteArray();
        byte[][] pool =
        [
            Field(1, s_to), [0x0A, 0], [0x8A, 0, 16, .. guid], [0x0A, 0x90, 0, .. guid],
            Field(2, s_spoofed), Field(2, Guid.Empty), [0x12, 0], [0x92, 0, 16, .. guid], [0x12, 0x90, 0, .. guid], [0x92, 0, 0],
            Field(3, s_to), [0x22, 2, (byte)'h', (byte)'i'], [0x28, 0x81, 0x01],
            [0x40, 7], [0x48, 3], [0x7A, 3, 1, 2, 3], [0x98, 0x01, 5], [0xA1, 0x01, 1, 2, 3, 4, 5, 6, 7, 8], [0xAD, 0x01, 1, 2, 3, 4],
            [0xB2, 0x01, 1, 9],
        ];
        var walked = 0;
        for (var i = 0; i < 20_000; i++)
        {
            var writer = new ArrayBufferWriter<byte>();
            var fields = random.Next(10);
            for (var f = 0; f < fields; f++)
                writer.Write(pool[random.Next(pool.Length)]);
            var envelope = writer.WrittenSpan.ToArray();
            Assert.True(ProtoMessage.TryParse(envelope, out _, out var error), error);
            walked += RangeOf(envelope) == EnvelopeRewriter.NoRange ? 1 : 0;
            Rewrite(envelope); // compares the two
        }

        Assert.InRange(walked, 2000, 18_000); // both ways were taken often
    }

    private static byte[] Field(int number, Guid value)
    {
        var field = new byte[18];
        field[0] = (byte)((number << 3) | 2);
        field[1] = 16;
        GuidBytes.Write(field.AsSpan(2), value);
        return field;
    }

    private static (int Start, int End) RangeOf(byte[] envelope) =>
        ProtoMessage.TryParse(envelope, out var message, out _) ? EnvelopeRewriter.RangeOf(in message) : EnvelopeRewriter.NoRange;

    /// <summary>The walk's rewrite; for an envelope that parses, also the copy around its parsed From range, which must be the same bytes.</summary>
    private static byte[] Rewrite(byte[] envelope)
    {
        var from = EnvelopeRewriter.FromFieldOf(s_sender);
        var destination = new byte[EnvelopeRewriter.MaxRewrittenLength(envelope.Length)];
        var length = EnvelopeRewriter.Rewrite(envelope, from, destination);
        Assert.True(length >= 0);
        var walked = destination.AsSpan(0, length).ToArray();
        if (ProtoMessage.TryParse(envelope, out var message, out _))
        {
            Array.Clear(destination);
            length = EnvelopeRewriter.Rewrite(envelope, from, destination, EnvelopeRewriter.RangeOf(in message));
            Assert.Equal(walked, destination.AsSpan(0, length).ToArray());
        }

        return walked;
    }

    private static byte[] Encode(MessageEnvelope envelope, Sample payload, byte[]? idOf = null)
    {
        if (idOf is not null)
        {
            var original = ProtoMessage.Parse(idOf);
            envelope.Id = original.Id;
            envelope.Timestamp = original.Timestamp;
        }

        var writer = new ArrayBufferWriter<byte>();
        EnvelopeCodec.Write(writer, envelope, payload);
        return writer.WrittenSpan.ToArray();
    }
}
