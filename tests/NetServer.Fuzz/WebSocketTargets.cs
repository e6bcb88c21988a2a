using System;
using System.IO;
using System.IO.Compression;
using System.Linq;
using System.Text;
using NetServer.WebSockets;

namespace NetServer.Fuzz;

/// <summary>WebSocket frame headers, the UTF-8 validator and permessage-deflate inflation.</summary>
internal static class WebSocketTargets
{
    private const int MaxMessageSize = 4096;
    private static readonly UTF8Encoding s_strict = new(false, throwOnInvalidBytes: true);

    /// <summary>
    /// The input read as frames, header after header (each payload skipped): a header is 2 to 14
    /// bytes, never read from fewer bytes than it needs, the same from any longer buffer, a length
    /// never negative, and what Write makes of its fields reads back as the same fields.
    /// </summary>
    public static void FrameHeaders(ReadOnlySpan<byte> input)
    {
        Span<byte> written = stackalloc byte[WsFrameHeader.MaxHeaderLength];
        var position = 0;
        while (position < input.Length)
        {
            var rest = input.Slice(position);
            var status = WsFrameHeader.TryRead(rest, out var header);
            if (status != WsHeaderStatus.Ok)
            {
                Invariant.Check(status == WsHeaderStatus.InvalidLength || rest.Length < WsFrameHeader.MaxHeaderLength, "more data is needed only for a header not yet whole");
                return;
            }

            Invariant.Check(header.HeaderLength is >= 2 and <= WsFrameHeader.MaxHeaderLength && header.HeaderLength <= rest.Length, "a header is 2 to 14 bytes, all of them there");
            Invariant.Check(header.PayloadLength >= 0, "a payload length is never negative");
            for (var shorter = 0; shorter < header.HeaderLength; shorter++)
                Invariant.Check(WsFrameHeader.TryRead(rest.Slice(0, shorter), out _) != WsHeaderStatus.Ok, "a header is not read from fewer bytes than it has");
            WsFrameHeader.TryRead(rest.Slice(0, header.HeaderLength), out var again);
            Invariant.Check(again.PayloadLength == header.PayloadLength && again.HeaderLength == header.HeaderLength && again.MaskKey == header.MaskKey, "a header reads the same from its own bytes");

            var length = WsFrameHeader.Write(written, header.Opcode, header.Fin, header.Rsv1, header.PayloadLength, header.Masked, header.MaskKey);
            Invariant.Check(WsFrameHeader.TryRead(written.Slice(0, length), out var back) == WsHeaderStatus.Ok, "a written header reads back");
            Invariant.Check(back.Opcode == header.Opcode && back.Fin == header.Fin && back.Rsv1 == header.Rsv1 && back.Masked == header.Masked
                && back.PayloadLength == header.PayloadLength && (!header.Masked || back.MaskKey == header.MaskKey) && length <= header.HeaderLength, "a written header holds the same fields, in no more bytes");

            position += header.HeaderLength + (int)Math.Min(header.PayloadLength, input.Length - position - header.HeaderLength);
        }
    }

    /// <summary>The validator, fed in pieces, accepts exactly what .NET's strict decoder accepts, and fails no later than the piece that made the bytes invalid.</summary>
    public static void Utf8(ReadOnlySpan<byte> input)
    {
        bool valid;
        try
        {
            s_strict.GetCharCount(input);
            valid = true;
        }
        catch (DecoderFallbackException)
        {
            valid = false;
        }

        foreach (var cuts in Cuts.Of(input))
        {
            var validator = default(WsUtf8Validator);
            var position = 0;
            var accepted = true;
            foreach (var cut in cuts)
            {
                accepted = validator.Append(input.Slice(position, cut));
                position += cut;
                if (!accepted)
                    break;
            }

            Invariant.Equal(valid, accepted && validator.IsComplete, $"UTF-8 validity of {Convert.ToHexString(input.Slice(0, Math.Min(32, input.Length)))}");
            if (!accepted)
                Invariant.Check(!valid, "the validator failed on valid text");
        }
    }

    /// <summary>
    /// A compressed message inflated in pieces: the same outcome however it was cut; never more
    /// than the message size bound out; and a message that inflates is the bytes .NET's own
    /// DeflateStream makes of it. One outcome may differ with the cuts, and only for a message
    /// that is both too big and corrupt: zlib reports corrupt data found in the same call that
    /// inflated bytes before it, so with the corruption in the same piece the message fails as
    /// Corrupt, and with it in a later piece as TooBig (the bytes came out first). That is allowed
    /// only that way round (Corrupt whole, TooBig cut) and only when the message, inflated a byte of
    /// input at a time, gives more than the bound and then throws.
    /// </summary>
    public static void Inflate(ReadOnlySpan<byte> input)
    {
        string? whole = null;
        bool? bothTooBigAndCorrupt = null;
        foreach (var cuts in Cuts.Of(input))
        {
            using var inflater = new WsInflater(MaxMessageSize, resetPerMessage: true);
            var position = 0;
            var ok = true;
            foreach (var cut in cuts)
            {
                ok = inflater.Append(input.Slice(position, cut));
                position += cut;
                if (!ok)
                    break;
            }

            string outcome;
            if (ok && inflater.Finish(out var message))
            {
                Invariant.Check(message.Length <= MaxMessageSize, "an inflated message stays within the size bound");
                var reference = Reference(input, message.Length + 1);
                Invariant.Check(reference is not null && reference.AsSpan().SequenceEqual(message), "the inflated bytes are DeflateStream's");
                outcome = $"message {Convert.ToHexString(message)}";
            }
            else
            {
                outcome = $"failed {inflater.Failure}";
            }

            whole ??= outcome;
            // Pieces can only see more output before the error than the whole: Corrupt whole, TooBig cut.
            if (whole == s_corrupt && outcome == s_tooBig)
                Invariant.Check(bothTooBigAndCorrupt ??= InflatesPastBoundBeforeCorruption(input), $"a message that fails as {whole} fed whole and {outcome} fed in pieces is both too big and corrupt");
            else
                Invariant.Equal(whole, outcome, "inflate outcome");
        }
    }

    private static readonly string s_tooBig = $"failed {WsInflateFailure.TooBig}";
    private static readonly string s_corrupt = $"failed {WsInflateFailure.Corrupt}";

    // Whether DeflateStream, given the payload a byte at a time (so each zlib call sees one byte and
    // returns what it inflated before any corruption), makes more than the bound and then finds the
    // data invalid (read on up to 1 MiB; an input that never turns invalid by then is not both).
    private static bool InflatesPastBoundBeforeCorruption(ReadOnlySpan<byte> payload)
    {
        using var deflate = new DeflateStream(new ByteAtATime([.. payload, 0, 0, 0xFF, 0xFF]), CompressionMode.Decompress);
        var output = new byte[64 * 1024];
        long length = 0;
        try
        {
            int read;
            while (length < 1024 * 1024 && (read = deflate.Read(output, 0, output.Length)) > 0)
                length += read;
            return false;
        }
        catch (InvalidDataException)
        {
            return length > MaxMessageSize;
        }
    }

    // What DeflateStream inflates from the payload and the sync marker RFC 7692 strips, at most
    // limit bytes; null if it finds the data corrupt.
    private static byte[]? Reference(ReadOnlySpan<byte> payload, int limit)
    {
        try
        {
            using var deflate = new DeflateStream(new MemoryStream(payload.ToArray().Concat(new byte[] { 0, 0, 0xFF, 0xFF }).ToArray()), CompressionMode.Decompress);
            var output = new byte[limit];
            var length = 0;
            int read;
            while (length < limit && (read = deflate.Read(output, length, limit - length)) > 0)
                length += read;
            return output.AsSpan(0, length).ToArray();
        }
        catch (InvalidDataException)
        {
            return null;
        }
    }

    /// <summary>A read-only stream that hands out one byte per read.</summary>
    private sealed class ByteAtATime(byte[] bytes) : MemoryStream(bytes, writable: false)
    {
        public override int Read(byte[] buffer, int offset, int count) => base.Read(buffer, offset, Math.Min(count, 1));

        public override int Read(Span<byte> buffer) => base.Read(buffer.Slice(0, Math.Min(buffer.Length, 1)));
    }
}
