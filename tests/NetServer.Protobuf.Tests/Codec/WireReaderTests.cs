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
    [InlineData(6, new byte[] { 0x00 }, -1)]
    [InlineData(7, new byte[] { 0x00 }, -1)]
    public void Skip_returns_the_position_after_the_value_or_minus_one(int wireType, byte[] bytes, int next) =>
        Assert.Equal(next, WireFormat.Skip(bytes, 0, wireType));

    [Fact]
    public void Skip_starts_where_it_is_told_and_its_try_form_ends_at_the_end_on_failure()
    {
        byte[] bytes = [0x08, 0x96, 0x01, 0x11, 1, 2, 3, 4, 5, 6, 7, 8];
        Assert.Equal(3, WireFormat.Skip(bytes, 1, WireFormat.Varint));
        Assert.Equal(12, WireFormat.Skip(bytes, 4, WireFormat.Fixed64));
        var position = 5;
        Assert.False(WireFormat.TrySkip(bytes, ref position, WireFormat.Fixed64)); // 7 bytes left
        Assert.Equal(bytes.Length, position);
    }

    [Theory]
    [InlineData(-1)]
    [InlineData(int.MinValue)]
    [InlineData(13)] // past the end
    public void A_position_outside_the_source_gives_minus_one(int position)
    {
        var bytes = new byte[12];
        Assert.Equal(-1, WireFormat.ReadVarint(bytes, position, out _));
        Assert.Equal(-1, WireFormat.ReadLengthDelimited(bytes, position, out _));
        foreach (var wireType in new[] { WireFormat.Varint, WireFormat.Fixed64, WireFormat.LengthDelimited, WireFormat.Fixed32 })
            Assert.Equal(-1, WireFormat.Skip(bytes, position, wireType));
        Assert.Equal(12, WireFormat.ReadVarint(bytes, 11, out _)); // the last byte, a 0 varint
        Assert.Equal(-1, WireFormat.ReadVarint(bytes, 12, out _)); // at the end: nothing to read
    }

    [Theory]
    [InlineData(new byte[] { 0x81, 0x80, 0x80, 0x80, 0x10, 0x00 })] // 2^32 + 1 announced, 1 byte held
    [InlineData(new byte[] { 0xFF, 0xFF, 0xFF, 0xFF, 0x07, 0x00 })] // int.MaxValue announced
    [InlineData(new byte[] { 0x80 })] // the length prefix cut short
    public void A_length_past_the_source_gives_minus_one(byte[] bytes) =>
        Assert.Equal(-1, WireFormat.ReadLengthDelimited(bytes, 0, out _));
}
