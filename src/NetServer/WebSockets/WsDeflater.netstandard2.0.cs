using System.IO.Compression;

namespace NetServer.WebSockets;

// netstandard2.0: Stream takes arrays only, so the payload is staged through a pooled chunk.
internal sealed partial class WsDeflater
{
    private const int StagingChunk = 16 * 1024;

    private void WritePayload(DeflateStream stream, ReadOnlySpan<byte> payload)
    {
        var chunk = _pool.Rent(Math.Min(payload.Length, StagingChunk));
        try
        {
            while (!payload.IsEmpty)
            {
                var count = Math.Min(chunk.Length, payload.Length);
                payload.Slice(0, count).CopyTo(chunk);
                stream.Write(chunk, 0, count);
                payload = payload.Slice(count);
            }
        }
        finally
        {
            _pool.Return(chunk);
        }
    }
}
