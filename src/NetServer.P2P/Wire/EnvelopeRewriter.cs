using System;
using System.Buffers.Binary;
using NetServer.Protobuf;
using NetServer.Protobuf.Wire;

namespace NetServer.P2P.Wire;

/// <summary>
/// The relay's one change to a routed envelope: every <c>From</c> field (field 2) the sender wrote
/// is dropped and the sender's true id written once in its place, the other bytes copied as they
/// came, the payload never decoded. The scan reads only the top-level tags and lengths (an envelope
/// has about eight fields). An envelope laid out as clients write it (an id, then no From or one,
/// then the rest) is not scanned at all: the parse said where its From is (<see cref="RangeOf"/>),
/// and it costs three copies.
/// </summary>
/// <remarks>
/// The input is an envelope the session already parsed and checked (<c>ProtoMessage.TryParse</c>);
/// the scan still stops at anything malformed and says so rather than reading past the end.
/// </remarks>
internal static class EnvelopeRewriter
{
    /// <summary>Bytes of a From field: the tag (field 2, length-delimited), the length 16, the GUID.</summary>
    public const int FromFieldSize = 2 + GuidBytes.Size;

    private const int FromField = 2;
    private const byte FromTag = (FromField << 3) | 2;
    private const byte IdTag = (1 << 3) | 2;

    /// <summary>The From field that stamps <paramref name="sender"/> on what it sends, made once per peer.</summary>
    public static byte[] FromFieldOf(Guid sender)
    {
        var field = new byte[FromFieldSize];
        field[0] = FromTag;
        field[1] = GuidBytes.Size;
        GuidBytes.Write(field.AsSpan(2), sender);
        return field;
    }

    /// <summary>The most bytes a rewritten <paramref name="envelopeLength"/>-byte envelope can take.</summary>
    public static int MaxRewrittenLength(int envelopeLength) => envelopeLength + FromFieldSize;

    /// <summary>
    /// Writes the envelope with <paramref name="fromField"/> as its only From into
    /// <paramref name="destination"/> (at least <see cref="MaxRewrittenLength"/> bytes).
    /// </summary>
    /// <param name="envelope">The envelope as the sender wrote it.</param>
    /// <param name="fromField">The sender's From field (<see cref="FromFieldOf"/>).</param>
    /// <param name="destination">Where the rewritten envelope goes.</param>
    /// <param name="range">
    /// The bytes <paramref name="fromField"/> replaces, from the parse of this envelope
    /// (<see cref="RangeOf"/>): then nothing is scanned, the envelope is copied around
    /// them (the same bytes the scan writes). <see cref="NoRange"/>: the envelope is scanned.
    /// </param>
    /// <returns>The bytes written, or -1 when the envelope is malformed (only a scan finds that).</returns>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="range"/> is neither <see cref="NoRange"/> nor inside the envelope.</exception>
    public static int Rewrite(ReadOnlySpan<byte> envelope, ReadOnlySpan<byte> fromField, Span<byte> destination, (int Start, int End) range)
    {
        if (range == NoRange)
            return Rewrite(envelope, fromField, destination);
        if ((uint)range.Start > (uint)range.End || (uint)range.End > (uint)envelope.Length)
            throw new ArgumentOutOfRangeException(nameof(range), range, "The From range must lie inside the envelope.");
        var head = Copy(envelope.Slice(0, range.Start), destination, 0);
        head = Copy(fromField, destination, head);
        return Copy(envelope.Slice(range.End), destination, head);
    }

    /// <summary>No range known: <see cref="Rewrite(ReadOnlySpan{byte}, ReadOnlySpan{byte}, Span{byte}, ValueTuple{int, int})"/> scans the envelope.</summary>
    public static readonly (int Start, int End) NoRange = (-1, -1);

    /// <summary>
    /// The bytes the sender's From replaces in a parsed envelope (see
    /// <see cref="Rewrite(ReadOnlySpan{byte}, ReadOnlySpan{byte}, Span{byte}, ValueTuple{int, int})"/>),
    /// when the envelope is laid out as clients write it: at most an id (field 1) before where a From
    /// goes, and no From or one. Then the range is what the walk would replace: the From field, or
    /// the empty range before the first field numbered above 2. Otherwise <see cref="NoRange"/>.
    /// </summary>
    public static (int Start, int End) RangeOf(in ProtoMessage message)
    {
        var envelope = message.Raw;
        var at = message.FromFieldAt; // -1: none; -2: several, or not parsed
        if (at < -1)
            return NoRange;

        // The id first, in its short form (its tag, a one-byte length, 0 or 16 bytes), or nothing.
        var head = envelope.Length >= 2 && envelope[0] == IdTag && envelope[1] is 0 or GuidBytes.Size && envelope.Length >= 2 + envelope[1]
            ? 2 + envelope[1]
            : 0;
        if (at >= 0)
        {
            // The one From, right after the id (so after no field numbered above 2), in its short form.
            if (at != head || envelope.Length < at + 2 || envelope[at] != FromTag || envelope[at + 1] is not (0 or GuidBytes.Size))
                return NoRange;
            var end = at + 2 + envelope[at + 1];
            return end <= envelope.Length ? (at, end) : NoRange;
        }

        // No From: the walk puts it before the first field numbered above 2, which must follow the id.
        if (head == envelope.Length)
            return (head, head);
        return WireFormat.ReadVarint(envelope, head, out var tag) >= 0 && tag >> 3 > FromField ? (head, head) : NoRange;
    }

    /// <summary>
    /// Writes the envelope with <paramref name="fromField"/> as its only From into
    /// <paramref name="destination"/> (at least <see cref="MaxRewrittenLength"/> bytes), walking its
    /// top-level fields.
    /// </summary>
    /// <returns>The bytes written, or -1 when the envelope is malformed.</returns>
    public static int Rewrite(ReadOnlySpan<byte> envelope, ReadOnlySpan<byte> fromField, Span<byte> destination)
    {
        var written = 0;
        var run = 0; // start of the bytes not copied yet
        var emitted = false;
        var position = 0;
        while (position < envelope.Length)
        {
            var start = position;
            position = WireFormat.ReadVarint(envelope, position, out var tag);
            if (position < 0 || (position = WireFormat.Skip(envelope, position, (int)(tag & 7))) < 0)
                return -1;
            var field = tag >> 3;
            if (field == FromField)
            {
                written = Copy(envelope.Slice(run, start - run), destination, written);
                if (!emitted)
                    written = Copy(fromField, destination, written);
                emitted = true;
                run = position;
            }
            else if (!emitted && field > FromField)
            {
                // Where field-number order puts it: after the id, before the addressee.
                written = Copy(envelope.Slice(run, start - run), destination, written);
                written = Copy(fromField, destination, written);
                emitted = true;
                run = start;
            }
        }

        written = Copy(envelope.Slice(run), destination, written);
        if (!emitted)
            written = Copy(fromField, destination, written);
        return written;
    }

    /// <summary>
    /// Writes the message frame of the rewritten envelope (the 4-byte little-endian length, then the
    /// envelope) into <paramref name="destination"/>, at least <see cref="MaxRewrittenLength"/> + 4 bytes;
    /// <paramref name="range"/> as for <see cref="Rewrite(ReadOnlySpan{byte}, ReadOnlySpan{byte}, Span{byte}, ValueTuple{int, int})"/>.
    /// </summary>
    /// <returns>The frame's length, or -1 when the envelope is malformed.</returns>
    public static int WriteFrame(ReadOnlySpan<byte> envelope, ReadOnlySpan<byte> fromField, Span<byte> destination, (int Start, int End) range)
    {
        var length = Rewrite(envelope, fromField, destination.Slice(MessageProtocol.HeaderSize), range);
        if (length < 0)
            return -1;
        BinaryPrimitives.WriteInt32LittleEndian(destination, length);
        return MessageProtocol.HeaderSize + length;
    }

    // Positions are passed and returned, not moved by reference (see WireFormat): the walk's
    // variables stay in registers.
    private static int Copy(ReadOnlySpan<byte> source, Span<byte> destination, int written)
    {
        source.CopyTo(destination.Slice(written));
        return written + source.Length;
    }
}
