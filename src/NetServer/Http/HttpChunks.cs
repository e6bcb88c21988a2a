using System.Buffers;
using System.Buffers.Text;

namespace NetServer.Http;

/// <summary>Writes the chunked transfer coding (RFC 9112 section 7.1) for streamed bodies, on both sides.</summary>
internal static class HttpChunks
{
    /// <summary>The last chunk with no trailers: ends a chunked body.</summary>
    public static readonly byte[] LastChunk = "0\r\n\r\n"u8.ToArray();

    /// <summary>Writes <paramref name="data"/> (not empty) as one chunk: its size in hex, CRLF, the bytes, CRLF.</summary>
    public static void WriteChunk(IBufferWriter<byte> writer, ReadOnlySpan<byte> data)
    {
        var span = writer.GetSpan(18);
        Utf8Formatter.TryFormat(data.Length, span, out var digits, new StandardFormat('X'));
        span[digits] = (byte)'\r';
        span[digits + 1] = (byte)'\n';
        writer.Advance(digits + 2);
        writer.Write(data);
        span = writer.GetSpan(2);
        span[0] = (byte)'\r';
        span[1] = (byte)'\n';
        writer.Advance(2);
    }
}
