using System.IO;

namespace NetServer.Transport;

/// <summary>Stream reads and writes on pooled arrays (netstandard2.0 has only the array overloads).</summary>
internal static class StreamIO
{
    public static ValueTask<int> ReadAsync(Stream stream, ArraySegment<byte> buffer) =>
        new(stream.ReadAsync(buffer.Array!, buffer.Offset, buffer.Count));

    public static ValueTask WriteAsync(Stream stream, ArraySegment<byte> buffer) =>
        new(stream.WriteAsync(buffer.Array!, buffer.Offset, buffer.Count));
}
