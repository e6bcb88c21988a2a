using System;
using System.Buffers.Binary;
using NetServer.Protobuf.Wire;

namespace NetServer.P2P.Wire;

/// <summary>
/// The relay's one change to a routed envelope: every <c>From</c> field (field 2) the sender wrote
/// is dropped and the sender's true id written once in its place, the other bytes copied as they
/// came, the payload never decoded. The scan reads only the top-level tags and lengths (an envelope
/// has about eight fields); a canonical envelope (fields in number order) costs two copies.
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
    /// envelope) into <paramref name="destination"/>, at least <see cref="MaxRewrittenLength"/> + 4 bytes.
    /// </summary>
    /// <returns>The frame's length, or -1 when the envelope is malformed.</returns>
    public static int WriteFrame(ReadOnlySpan<byte> envelope, ReadOnlySpan<byte> fromField, Span<byte> destination)
    {
        var length = Rewrite(envelope, fromField, destination.Slice(MessageProtocol.HeaderSize));
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
