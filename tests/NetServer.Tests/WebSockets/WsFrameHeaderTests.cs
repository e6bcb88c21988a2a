using System;
using System.Buffers.Binary;
using System.Collections.Generic;
using System.Linq;
using NetServer.WebSockets;
using Xunit;

namespace NetServer.Tests.WebSockets;

/// <summary>
/// The frame header reader and writer: the examples of RFC 6455 5.7 byte for byte, round trips
/// over every length form, and headers fed one byte at a time.
/// </summary>
public sealed class WsFrameHeaderTests
{
    // "Hello" masked with the key 37 fa 21 3d, as in RFC 6455 5.7.
    private static readonly byte[] s_rfcKey = [0x37, 0xfa, 0x21, 0x3d];
    private static readonly byte[] s_hello = "Hello"u8.ToArray();
    private static readonly byte[] s_maskedHello = [0x7f, 0x9f, 0x4d, 0x51, 0x58];

    private static readonly long[] s_lengths = [0, 1, 125, 126, 127, 65535, 65536, 1L << 31, (1L << 32) + 5, long.MaxValue];

    public static TheoryData<string, byte, bool, bool, long, string?> RfcExamples => new()
    {
        // frame bytes (header + payload), opcode, fin, masked, payload length, payload as text
        // (opcodes as bytes: a public theory cannot take the internal enum)
        { "81 05 48 65 6c 6c 6f", (byte)WsOpcode.Text, true, false, 5, "Hello" },
        { "81 85 37 fa 21 3d 7f 9f 4d 51 58", (byte)WsOpcode.Text, true, true, 5, "Hello" },
        { "01 03 48 65 6c", (byte)WsOpcode.Text, false, false, 3, "Hel" },
        { "80 02 6c 6f", (byte)WsOpcode.Continuation, true, false, 2, "lo" },
        { "89 05 48 65 6c 6c 6f", (byte)WsOpcode.Ping, true, false, 5, "Hello" },
        { "8a 85 37 fa 21 3d 7f 9f 4d 51 58", (byte)WsOpcode.Pong, true, true, 5, "Hello" },
        { "82 7e 01 00", (byte)WsOpcode.Binary, true, false, 256, null },
        { "82 7f 00 00 00 00 00 01 00 00", (byte)WsOpcode.Binary, true, false, 65536, null },
    };

    private static byte[] Hex(string hex) => Convert.FromHexString(hex.Replace(" ", "", StringComparison.Ordinal));

    [Theory]
    [MemberData(nameof(RfcExamples))]
    public void The_RFC_6455_examples_read_and_write_byte_for_byte(string frameHex, byte opcodeValue, bool fin, bool masked, long length, string? text)
    {
        var frame = Hex(frameHex);
        var opcode = (WsOpcode)opcodeValue;
        var key = masked ? BinaryPrimitives.ReadUInt32LittleEndian(s_rfcKey) : 0u;

        Assert.Equal(WsHeaderStatus.Ok, WsFrameHeader.TryRead(frame, out var header));
        Assert.Equal(fin, header.Fin);
        Assert.Equal(0, header.Rsv);
        Assert.Equal(opcode, header.Opcode);
        Assert.Equal(masked, header.Masked);
        Assert.Equal(key, header.MaskKey);
        Assert.Equal(length, header.PayloadLength);

        Span<byte> written = stackalloc byte[WsFrameHeader.MaxHeaderLength];
        var headerLength = WsFrameHeader.Write(written, opcode, fin, rsv1: false, length, masked, key);
        Assert.Equal(header.HeaderLength, headerLength);
        Assert.Equal(WsFrameHeader.GetHeaderLength(length, masked), headerLength);
        Assert.Equal(frame.AsSpan(0, Math.Min(frame.Length, headerLength)).ToArray(), written.Slice(0, headerLength).ToArray());

        if (text is not null)
        {
            var payload = frame.AsSpan(headerLength).ToArray();
            Assert.Equal(length, payload.Length);
            if (masked)
                WsMask.Apply(payload, header.MaskKey, 0);
            Assert.Equal(text, System.Text.Encoding.ASCII.GetString(payload));
        }
    }

    [Fact]
    public void The_RFC_mask_key_is_kept_in_wire_order()
    {
        var key = BinaryPrimitives.ReadUInt32LittleEndian(s_rfcKey);
        for (var i = 0; i < 4; i++)
            Assert.Equal(s_rfcKey[i], (byte)(key >> (8 * i)));

        var payload = s_hello.ToArray();
        Assert.Equal(1, WsMask.Apply(payload, key, 0));
        Assert.Equal(s_maskedHello, payload);
    }

    public static IEnumerable<object[]> RoundTrips()
    {
        foreach (var length in s_lengths)
        {
            foreach (var masked in new[] { false, true })
            {
                yield return [length, masked, (byte)WsOpcode.Binary, true, false];
                yield return [length, masked, (byte)WsOpcode.Text, false, true];
                yield return [length, masked, (byte)WsOpcode.Continuation, false, false];
            }
        }

        yield return [125L, true, (byte)WsOpcode.Close, true, false];
        yield return [0L, false, (byte)WsOpcode.Pong, true, false];
        yield return [3L, false, (byte)0x0F, true, true]; // a reserved opcode survives too
    }

    [Theory]
    [MemberData(nameof(RoundTrips))]
    public void A_written_header_reads_back_the_same_fields(long length, bool masked, byte opcodeValue, bool fin, bool rsv1)
    {
        var opcode = (WsOpcode)opcodeValue;
        const uint Key = 0xA1B2C3D4;
        var buffer = new byte[WsFrameHeader.MaxHeaderLength + 3];
        var written = WsFrameHeader.Write(buffer, opcode, fin, rsv1, length, masked, Key);

        var expectedLength = (length < 126 ? 2 : length <= 65535 ? 4 : 10) + (masked ? 4 : 0);
        Assert.Equal(expectedLength, written);
        Assert.Equal(expectedLength, WsFrameHeader.GetHeaderLength(length, masked));
        Assert.Equal(WsHeaderStatus.Ok, WsFrameHeader.TryRead(buffer, out var header)); // trailing bytes are payload, untouched
        Assert.Equal(written, header.HeaderLength);
        Assert.Equal(fin, header.Fin);
        Assert.Equal(rsv1, header.Rsv1);
        Assert.Equal(rsv1 ? 4 : 0, header.Rsv);
        Assert.Equal(opcode, header.Opcode);
        Assert.Equal(masked, header.Masked);
        Assert.Equal(masked ? Key : 0u, header.MaskKey);
        Assert.Equal(length, header.PayloadLength);
        if (masked)
            Assert.Equal([0xD4, 0xC3, 0xB2, 0xA1], buffer.AsSpan(written - 4, 4).ToArray());
    }

    [Theory]
    [MemberData(nameof(RoundTrips))]
    public void A_header_fed_one_byte_at_a_time_needs_more_data_until_its_last_byte(long length, bool masked, byte opcodeValue, bool fin, bool rsv1)
    {
        var opcode = (WsOpcode)opcodeValue;
        var buffer = new byte[WsFrameHeader.MaxHeaderLength];
        var written = WsFrameHeader.Write(buffer, opcode, fin, rsv1, length, masked, 0x01020304);

        for (var available = 0; available < written; available++)
            Assert.Equal(WsHeaderStatus.NeedMoreData, WsFrameHeader.TryRead(buffer.AsSpan(0, available), out _));
        Assert.Equal(WsHeaderStatus.Ok, WsFrameHeader.TryRead(buffer.AsSpan(0, written), out var header));
        Assert.Equal(length, header.PayloadLength);
    }

    [Fact]
    public void A_64_bit_length_with_the_top_bit_set_is_invalid_from_its_first_byte()
    {
        var frame = Hex("82 ff 80 00 00 00 00 00 00 00 01 02 03 04");
        Assert.Equal(WsHeaderStatus.NeedMoreData, WsFrameHeader.TryRead(frame.AsSpan(0, 2), out _));
        for (var available = 3; available <= frame.Length; available++)
            Assert.Equal(WsHeaderStatus.InvalidLength, WsFrameHeader.TryRead(frame.AsSpan(0, available), out _));

        Assert.Equal(WsHeaderStatus.InvalidLength, WsFrameHeader.TryRead(Hex("81 7f ff ff ff ff ff ff ff ff"), out _));
        Assert.Equal(WsHeaderStatus.Ok, WsFrameHeader.TryRead(Hex("81 7f 7f ff ff ff ff ff ff ff"), out var largest));
        Assert.Equal(long.MaxValue, largest.PayloadLength);
    }

    [Fact]
    public void The_reader_keeps_rsv_bits_reserved_opcodes_and_non_minimal_lengths_for_the_protocol_to_judge()
    {
        Assert.Equal(WsHeaderStatus.Ok, WsFrameHeader.TryRead(Hex("f3 00"), out var header));
        Assert.True(header.Fin);
        Assert.Equal(7, header.Rsv);
        Assert.Equal((WsOpcode)3, header.Opcode);
        Assert.False(WsOpcodes.IsKnown((byte)header.Opcode));

        Assert.Equal(WsHeaderStatus.Ok, WsFrameHeader.TryRead(Hex("22 00"), out header));
        Assert.False(header.Fin);
        Assert.Equal(2, header.Rsv);
        Assert.False(header.Rsv1);

        Assert.Equal(WsHeaderStatus.Ok, WsFrameHeader.TryRead(Hex("82 7e 00 05"), out header));
        Assert.Equal(5, header.PayloadLength);
        Assert.Equal(4, header.HeaderLength);

        Assert.Equal(WsHeaderStatus.Ok, WsFrameHeader.TryRead(Hex("82 7f 00 00 00 00 00 00 00 7d"), out header));
        Assert.Equal(125, header.PayloadLength);
        Assert.Equal(10, header.HeaderLength);
    }

    [Theory]
    [InlineData(0L, false, 2)]
    [InlineData(125L, false, 2)]
    [InlineData(126L, false, 4)]
    [InlineData(65535L, false, 4)]
    [InlineData(65536L, false, 10)]
    [InlineData(long.MaxValue, false, 10)]
    [InlineData(0L, true, 6)]
    [InlineData(125L, true, 6)]
    [InlineData(126L, true, 8)]
    [InlineData(65536L, true, 14)]
    public void The_header_length_follows_the_length_form(long payloadLength, bool masked, int expected) =>
        Assert.Equal(expected, WsFrameHeader.GetHeaderLength(payloadLength, masked));

    [Fact]
    public void Writing_rejects_a_negative_length_a_short_destination_and_a_wide_opcode()
    {
        var buffer = new byte[WsFrameHeader.MaxHeaderLength];
        Assert.Throws<ArgumentOutOfRangeException>(() => WsFrameHeader.Write(buffer, WsOpcode.Binary, true, false, -1, false, 0));
        Assert.Throws<ArgumentOutOfRangeException>(() => WsFrameHeader.GetHeaderLength(-1, false));
        Assert.Throws<ArgumentOutOfRangeException>(() => WsFrameHeader.Write(buffer.AsSpan(0, 5), WsOpcode.Binary, true, false, 1, true, 0));
        Assert.Throws<ArgumentOutOfRangeException>(() => WsFrameHeader.Write(buffer.AsSpan(0, 3), WsOpcode.Binary, true, false, 126, false, 0));
        Assert.Throws<ArgumentOutOfRangeException>(() => WsFrameHeader.Write(buffer, (WsOpcode)16, true, false, 1, false, 0));
        Assert.Equal(6, WsFrameHeader.Write(buffer.AsSpan(0, 6), WsOpcode.Binary, true, false, 1, true, 0));
    }

    [Fact]
    public void Opcodes_8_to_15_are_control_and_only_the_six_of_the_RFC_are_known()
    {
        for (var op = 0; op < 16; op++)
        {
            Assert.Equal(op >= 8, WsOpcodes.IsControl((WsOpcode)op));
            Assert.Equal(op is 0 or 1 or 2 or 8 or 9 or 10, WsOpcodes.IsKnown((byte)op));
        }

        Assert.False(WsOpcodes.IsKnown(16));
        Assert.False(WsOpcodes.IsKnown(0xFF));
    }
}
