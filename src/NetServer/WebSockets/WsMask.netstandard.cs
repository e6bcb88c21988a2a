using System.Runtime.InteropServices;

namespace NetServer.WebSockets;

// netstandard: no System.Runtime.Intrinsics; 8 bytes at a time through unaligned ulong reads.
internal static partial class WsMask
{
    private static void Xor(ReadOnlySpan<byte> source, Span<byte> destination, uint key)
    {
        var pattern = Pattern(key);
        var i = 0;
        for (; i <= source.Length - sizeof(ulong); i += sizeof(ulong))
        {
            var value = MemoryMarshal.Read<ulong>(source.Slice(i)) ^ pattern;
            MemoryMarshal.Write(destination.Slice(i), ref value);
        }

        XorBytes(source, destination, i, key);
    }
}
