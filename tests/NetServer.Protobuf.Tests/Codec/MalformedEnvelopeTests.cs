using System;
using System.IO;
using Xunit;

namespace NetServer.Protobuf.Tests.Codec;

/// <summary>Bytes that are not an envelope are refused with a message saying why, never with an exception out of the parser.</summary>
public sealed class MalformedEnvelopeTests
{
    public static TheoryData<string, string, string> Cases => new()
    {
        { "truncated tag", "80", "tag at byte 0 is truncated" },
        { "field number 0", "0001", "field number 0" },
        { "id of 5 bytes", "0A050102030405", "field 1 (id) has 5 bytes; a GUID has 16" },
        { "from as a varint", "1001", "field 2 (from) has wire type 0; length-delimited (2) was expected" },
        { "length past the end", "2205616263", "field 4 (header) announces more bytes than the envelope holds" },
        { "header not UTF-8", "2202C328", "field 4 (header) is not valid UTF-8" },
        { "timestamp as bytes", "2A0101", "field 5 (timestamp) has wire type 2; a varint (0) was expected" },
        { "varint over 10 bytes", "40FFFFFFFFFFFFFFFFFFFF01", "field 8 (request_id) has a truncated or over-long varint" },
        { "10th varint byte over 1", "40FFFFFFFFFFFFFFFFFF02", "field 8 (request_id) has a truncated or over-long varint" },
        { "truncated varint", "48FF", "field 9 (flags) has a truncated or over-long varint" },
        { "property key as a varint", "32020801", "a property's key is not a well-formed string" },
        { "property value not UTF-8", "320312 01FF", "a property's value is not valid UTF-8" },
        { "property past its end", "3203120501", "a property's value is not a well-formed string" },
        { "payload past the end", "7A0A0102", "field 15 (payload) announces more bytes than the envelope holds" },
        { "payload length over 2 GiB", "7AFFFFFFFF0F00", "field 15 (payload) announces more bytes than the envelope holds" },
        { "a group", "A3010000A401", "unknown field 20 (wire type 3) at byte 0 is malformed or a group" },
        { "unknown fixed64 cut short", "A901010203", "unknown field 21 (wire type 1) at byte 0 is malformed or a group" },
        { "wire type 7", "A701", "unknown field 20 (wire type 7)" },
        { "timestamp after 9999", "28FFFFFFFFFFFFFFFF7F", "field 5 (timestamp) 9223372036854775807 ms is outside the years 0001-9999" },
    };

    [Theory]
    [MemberData(nameof(Cases))]
    public void Malformed_bytes_are_refused_with_the_reason(string what, string hex, string reason)
    {
        var bytes = Convert.FromHexString(hex.Replace(" ", "", StringComparison.Ordinal));
        Assert.False(ProtoMessage.TryParse(bytes, out _, out var error), what);
        Assert.Contains(reason, error, StringComparison.Ordinal);
        var exception = Assert.Throws<InvalidDataException>(() => ProtoMessage.Parse(bytes));
        Assert.Contains(reason, exception.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void Properties_up_to_the_maximum_parse_and_one_more_is_refused()
    {
        // An empty property is 2 bytes (tag 0x32, length 0): cheap to send, costly to expand.
        var atMost = new byte[ProtoMessage.MaxProperties * 2];
        for (var i = 0; i < atMost.Length; i += 2)
            atMost[i] = 0x32;
        Assert.True(ProtoMessage.TryParse(atMost, out var message, out _));
        Assert.Equal(ProtoMessage.MaxProperties, message.PropertyCount);

        var tooMany = new byte[atMost.Length + 2];
        atMost.CopyTo(tooMany, 0);
        tooMany[^2] = 0x32;
        Assert.False(ProtoMessage.TryParse(tooMany, out _, out var error));
        Assert.Contains($"more than {ProtoMessage.MaxProperties} properties", error, StringComparison.Ordinal);
    }

    [Fact]
    public void Every_prefix_of_a_valid_envelope_is_refused_or_parsed_without_an_exception()
    {
        // A cut inside a field is refused; a cut between fields is a shorter valid envelope.
        var bytes = EnvelopeBytesTests.HandEncoded;
        var valid = 0;
        for (var length = 0; length <= bytes.Length; length++)
        {
            if (ProtoMessage.TryParse(bytes.AsSpan(0, length), out _, out var error))
                valid++;
            else
                Assert.NotNull(error);
        }

        Assert.Equal(10, valid); // the empty prefix and one after each of the 9 fields written
    }

    [Fact]
    public void Random_bytes_never_throw_out_of_the_parser()
    {
        var random = new Random(99);
        var buffer = new byte[64];
        for (var i = 0; i < 20_000; i++)
        {
            var length = random.Next(buffer.Length);
            random.NextBytes(buffer);
            if (ProtoMessage.TryParse(buffer.AsSpan(0, length), out var message, out _))
            {
                // Whatever parsed reads back without throwing.
                _ = message.Header;
                _ = message.Timestamp;
                foreach (var property in message.Properties)
                    _ = property.Key + property.Value;
            }
        }
    }
}
