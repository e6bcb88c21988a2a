using System.IO.Compression;

namespace NetServer.WebSockets;

// net10.0 and netstandard2.1: the payload goes to DeflateStream as a span, without a copy.
internal sealed partial class WsDeflater
{
    private static void WritePayload(DeflateStream stream, ReadOnlySpan<byte> payload) => stream.Write(payload);
}
