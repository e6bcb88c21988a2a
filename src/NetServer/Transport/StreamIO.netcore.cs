using System.IO;

namespace NetServer.Transport;

/// <summary>Stream reads and writes on pooled arrays, through the Memory overloads (no Task per call).</summary>
internal static class StreamIO
{
    public static ValueTask<int> ReadAsync(Stream stream, ArraySegment<byte> buffer) => stream.ReadAsync(buffer.AsMemory());

    public static ValueTask WriteAsync(Stream stream, ArraySegment<byte> buffer) => stream.WriteAsync(buffer.AsMemory());
}
