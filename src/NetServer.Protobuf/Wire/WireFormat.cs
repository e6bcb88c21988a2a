using System;
using System.Buffers;
using System.Runtime.CompilerServices;
using System.Text;

namespace NetServer.Protobuf.Wire;

/// <summary>
/// The protobuf wire primitives the envelope needs, over spans: varints, tags, length-delimited
/// fields, and 16-byte GUIDs in RFC 9562 (text) byte order. Writers go straight into an
/// <see cref="IBufferWriter{T}"/>; readers return -1 (or false) on malformed input instead of throwing.
/// </summary>
internal static class WireFormat
{
    public const int Varint = 0;
    public const int Fixed64 = 1;
    public const int LengthDelimited = 2;
    public const int StartGroup = 3;
    public const int EndGroup = 4;
    public const int Fixed32 = 5;

    public const int GuidSize = 16;
    public const int MaxVarintSize = 10;

    // Strict: invalid UTF-8 throws, so a received string is validated without allocating.
    public static readonly UTF8Encoding Utf8 = new(encoderShouldEmitUTF8Identifier: false, throwOnInvalidBytes: true);

    public static uint Tag(int field, int wireType) => ((uint)field << 3) | (uint)wireType;

    public static int VarintSize(ulong value)
    {
        var size = 1;
        while (value >= 0x80)
        {
            value >>= 7;
            size++;
        }

        return size;
    }

    public static int WriteVarint(Span<byte> destination, ulong value)
    {
        var i = 0;
        while (value >= 0x80)
        {
            destination[i++] = (byte)(value | 0x80);
            value >>= 7;
        }

        destination[i++] = (byte)value;
        return i;
    }

    public static void WriteVarint(IBufferWriter<byte> output, ulong value)
    {
        var span = output.GetSpan(MaxVarintSize);
        output.Advance(WriteVarint(span, value));
    }

    /// <summary>A varint field (tag and value).</summary>
    public static void WriteVarintField(IBufferWriter<byte> output, int field, ulong value)
    {
        var span = output.GetSpan(2 * MaxVarintSize);
        var n = WriteVarint(span, Tag(field, Varint));
        n += WriteVarint(span.Slice(n), value);
        output.Advance(n);
    }

    /// <summary>The tag and length of a length-delimited field, whose <paramref name="length"/> bytes the caller writes next.</summary>
    public static void WriteLengthPrefix(IBufferWriter<byte> output, int field, int length)
    {
        var span = output.GetSpan(2 * MaxVarintSize);
        var n = WriteVarint(span, Tag(field, LengthDelimited));
        n += WriteVarint(span.Slice(n), (uint)length);
        output.Advance(n);
    }

    public static void WriteBytesField(IBufferWriter<byte> output, int field, ReadOnlySpan<byte> value)
    {
        WriteLengthPrefix(output, field, value.Length);
        Write(output, value);
    }

    public static void WriteGuidField(IBufferWriter<byte> output, int field, Guid value)
    {
        WriteLengthPrefix(output, field, GuidSize);
        var span = output.GetSpan(GuidSize);
        WriteGuid(span, value);
        output.Advance(GuidSize);
    }

    /// <summary>A string field: its UTF-8 bytes encoded straight into the output.</summary>
    public static void WriteStringField(IBufferWriter<byte> output, int field, string value)
    {
        var length = Utf8.GetByteCount(value);
        WriteLengthPrefix(output, field, length);
        WriteString(output, value, length);
    }

    /// <summary>The bytes a string field takes (tag, length, UTF-8).</summary>
    public static int StringFieldSize(int field, int utf8Length) =>
        VarintSize(Tag(field, LengthDelimited)) + VarintSize((uint)utf8Length) + utf8Length;

    public static void WriteString(IBufferWriter<byte> output, string value, int utf8Length)
    {
        if (utf8Length == 0)
            return;
        var span = output.GetSpan(utf8Length);
        output.Advance(Utf8.GetBytes(value.AsSpan(), span));
    }

    public static void Write(IBufferWriter<byte> output, ReadOnlySpan<byte> value)
    {
        while (!value.IsEmpty)
        {
            var span = output.GetSpan(1);
            var part = Math.Min(span.Length, value.Length);
            value.Slice(0, part).CopyTo(span);
            output.Advance(part);
            value = value.Slice(part);
        }
    }

    /// <summary>RFC 9562 order: the bytes as the GUID's text reads them (.NET keeps the first three groups little-endian).</summary>
    public static void WriteGuid(Span<byte> destination, Guid value)
    {
#if NET
        value.TryWriteBytes(destination, bigEndian: true, out _);
#else
        value.TryWriteBytes(destination);
        destination.Slice(0, 4).Reverse();
        destination.Slice(4, 2).Reverse();
        destination.Slice(6, 2).Reverse();
#endif
    }

    public static Guid ReadGuid(ReadOnlySpan<byte> source)
    {
#if NET
        return new Guid(source.Slice(0, GuidSize), bigEndian: true);
#else
        Span<byte> bytes = stackalloc byte[GuidSize];
        source.Slice(0, GuidSize).CopyTo(bytes);
        bytes.Slice(0, 4).Reverse();
        bytes.Slice(4, 2).Reverse();
        bytes.Slice(6, 2).Reverse();
        return new Guid(bytes);
#endif
    }

    // The readers return the position after what they read, or -1 when it is malformed, rather than
    // move a position passed by reference: a local whose address goes to a call that is not inlined
    // lives in memory for the whole method, and a parser's position is its hottest variable
    // (ProtoMessage.TryParse took twice as long that way). The Try* forms wrap them.

    /// <summary>Reads a varint at <paramref name="position"/>: the position after it, or -1 when it runs past the end or over 64 bits.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static int ReadVarint(ReadOnlySpan<byte> source, int position, out ulong value)
    {
        if ((uint)position < (uint)source.Length && source[position] < 0x80)
        {
            value = source[position];
            return position + 1;
        }

        return ReadLongVarint(source, position, out value);
    }

    private static int ReadLongVarint(ReadOnlySpan<byte> source, int position, out ulong value)
    {
        value = 0;
        if (position < 0)
            return -1;
        for (var shift = 0; shift < 64; shift += 7)
        {
            if (position >= source.Length)
                return -1;
            var b = source[position++];
            if (shift == 63 && b > 1)
                return -1; // the 10th byte may carry only the top bit
            value |= (ulong)(b & 0x7F) << shift;
            if (b < 0x80)
                return position;
        }

        return -1;
    }

    /// <summary>Reads a length prefix and the bytes it announces: the position after them, or -1 when it runs past the end.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static int ReadLengthDelimited(ReadOnlySpan<byte> source, int position, out ReadOnlySpan<byte> value)
    {
        value = default;
        position = ReadVarint(source, position, out var length);
        if (position < 0 || length > (ulong)(source.Length - position))
            return -1;
        value = source.Slice(position, (int)length);
        return position + (int)length;
    }

    /// <summary>Skips the value of an unknown field: the position after it, or -1 when malformed or a group (deprecated, not supported).</summary>
    public static int Skip(ReadOnlySpan<byte> source, int position, int wireType) => wireType switch
    {
        Varint => ReadVarint(source, position, out _),
        Fixed64 => Advance(source, position, 8),
        LengthDelimited => ReadLengthDelimited(source, position, out _),
        Fixed32 => Advance(source, position, 4),
        _ => -1,
    };

    // A position outside the source (-1 from a read before, unchecked) stays -1.
    private static int Advance(ReadOnlySpan<byte> source, int position, int count) =>
        (uint)position <= (uint)source.Length && source.Length - position >= count ? position + count : -1;

    /// <summary>Reads a varint at <paramref name="position"/> and moves past it; false when it runs past the end or over 64 bits (the position then is the end).</summary>
    public static bool TryReadVarint(ReadOnlySpan<byte> source, scoped ref int position, out ulong value) =>
        Moved(source, ref position, ReadVarint(source, position, out value));

    /// <summary>Reads a length prefix and the bytes it announces, and moves past them; false when it runs past the end (the position then is the end).</summary>
    public static bool TryReadLengthDelimited(ReadOnlySpan<byte> source, scoped ref int position, out ReadOnlySpan<byte> value) =>
        Moved(source, ref position, ReadLengthDelimited(source, position, out value));

    /// <summary>Skips the value of an unknown field; false when malformed or a group (the position then is the end).</summary>
    public static bool TrySkip(ReadOnlySpan<byte> source, scoped ref int position, int wireType) =>
        Moved(source, ref position, Skip(source, position, wireType));

    // A failed read ends the reading: no loop over the bytes can stall on it.
    private static bool Moved(ReadOnlySpan<byte> source, scoped ref int position, int next)
    {
        position = next < 0 ? source.Length : next;
        return next >= 0;
    }

    public static bool IsValidUtf8(ReadOnlySpan<byte> value)
    {
#if NET
        return System.Text.Unicode.Utf8.IsValid(value);
#else
        try
        {
            Utf8.GetCharCount(value);
            return true;
        }
        catch (DecoderFallbackException)
        {
            return false;
        }
#endif
    }
}
