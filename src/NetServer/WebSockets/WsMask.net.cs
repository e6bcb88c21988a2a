using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Runtime.Intrinsics;

namespace NetServer.WebSockets;

// net10.0: the widest vector the machine accelerates, then narrower ones and a ulong for the rest.
// Every width is a multiple of 4, so one pattern serves all blocks.
internal static partial class WsMask
{
    private static void Xor(ReadOnlySpan<byte> source, Span<byte> destination, uint key)
    {
        ref var from = ref MemoryMarshal.GetReference(source);
        ref var to = ref MemoryMarshal.GetReference(destination);
        var length = (nuint)source.Length;
        var pattern = Pattern(key);
        nuint i = 0;

        if (Vector512.IsHardwareAccelerated && length >= (nuint)Vector512<byte>.Count)
        {
            var mask = Vector512.Create(pattern).AsByte();
            for (; i + (nuint)Vector512<byte>.Count <= length; i += (nuint)Vector512<byte>.Count)
                (Vector512.LoadUnsafe(ref from, i) ^ mask).StoreUnsafe(ref to, i);
        }

        if (Vector256.IsHardwareAccelerated && length - i >= (nuint)Vector256<byte>.Count)
        {
            var mask = Vector256.Create(pattern).AsByte();
            for (; i + (nuint)Vector256<byte>.Count <= length; i += (nuint)Vector256<byte>.Count)
                (Vector256.LoadUnsafe(ref from, i) ^ mask).StoreUnsafe(ref to, i);
        }

        if (Vector128.IsHardwareAccelerated && length - i >= (nuint)Vector128<byte>.Count)
        {
            var mask = Vector128.Create(pattern).AsByte();
            for (; i + (nuint)Vector128<byte>.Count <= length; i += (nuint)Vector128<byte>.Count)
                (Vector128.LoadUnsafe(ref from, i) ^ mask).StoreUnsafe(ref to, i);
        }

        for (; i + sizeof(ulong) <= length; i += sizeof(ulong))
        {
            var value = Unsafe.ReadUnaligned<ulong>(ref Unsafe.Add(ref from, i)) ^ pattern;
            Unsafe.WriteUnaligned(ref Unsafe.Add(ref to, i), value);
        }

        XorBytes(source, destination, (int)i, key);
    }
}
