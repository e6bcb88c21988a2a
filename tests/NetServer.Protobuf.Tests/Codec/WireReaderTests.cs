using NetServer.Protobuf.Wire;
using Xunit;

namespace NetServer.Protobuf.Tests.Codec;

/// <summary>The wire readers: the position after what they read, -1 for malformed bytes, and the Try* forms' position after a failure.</summary>
public sealed class WireReaderTests
{
    [Theory]
    [InlineData(new byte[] { 0x00 }, 0, 0UL, 1)]
    [InlineData(new byte[] { 0x7F }, 0, 127UL, 1)]
    [InlineData(new byte[] { 0xAC, 0x02 }, 0, 300UL, 2)]
    [InlineData(new byte[] { 0x05, 0xAC, 0x02 }, 1, 300UL, 3)]
    [InlineData(new byte[] { 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01 }, 0, ulong.MaxValue, 10)]
    public void A_varint_is_read_and_the_position_after_it_returned(byte[] bytes, int position, ulong expected, int next)
    {
        Assert.Equal(next, WireFormat.ReadVarint(bytes, position, out var value));
        Assert.Equal(expected, value);
    }

    [Theory]
    [InlineData(new byte[] { })] // nothing
    [InlineData(new byte[] { 0x80 })] // truncated
    [InlineData(new byte[] { 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x02 })] // over 64 bits
    [InlineData(new byte[] { 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01 })] // an 11th byte
    public void A_malformed_varint_gives_minus_one_and_the_try_form_ends_at_the_end(byte[] bytes)
    {
        Assert.Equal(-1, WireFormat.ReadVarint(bytes, 0, out _));
        var position = 0;
        Assert.False(WireFormat.TryReadVarint(bytes, ref position, out _));
        Assert.Equal(bytes.Length, position); // a loop over the bytes cannot stall on it
    }

    [Fact]
    public void Length_delimited_bytes_stay_inside_the_source()
    {
        byte[] bytes = [0x03, 0x61, 0x62, 0x63, 0x04, 0x61];
        Assert.Equal(4, WireFormat.ReadLengthDelimited(bytes, 0, out var value));
        Assert.Equal("abc"u8.ToArray(), value.ToArray());
        Assert.Equal(-1, WireFormat.ReadLengthDelimited(bytes, 4, out value)); // announces 4, holds 1
        Assert.True(value.IsEmpty);
        var position = 4;
        Assert.False(WireFormat.TryReadLengthDelimited(bytes, ref position, out _));
        Assert.Equal(bytes.Length, position);
    }

    [Theory]
    [InlineData(WireFormat.Varint, new byte[] { 0x96, 0x01, 0xAA }, 2)]
    [InlineData(WireFormat.Fixed64, new byte[] { 1, 2, 3, 4, 5, 6, 7, 8 }, 8)]
    [InlineData(WireFormat.Fixed64, new byte[] { 1, 2, 3, 4, 5, 6, 7 }, -1)]
    [InlineData(WireFormat.LengthDelimited, new byte[] { 0x02, 0x00, 0x00 }, 3)]
    [InlineData(WireFormat.Fixed32, new byte[] { 1, 2, 3, 4 }, 4)]
    [InlineData(WireFormat.Fixed32, new byte[] { 1, 2, 3 }, -1)]
    [InlineData(3, new byte[] { 0x00 }, -1)] // start group: refused
    [InlineData(4, new byte[] { 0x00 }, -1)] // end group: refused
    public void Skip_returns_the_position_after_the_value_or_minus_one(int wireType, byte[] bytes, int next) =>
        Assert.Equal(next, WireFormat.Skip(bytes, 0, wireType));
}
