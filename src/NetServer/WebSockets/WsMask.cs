using System.Buffers.Binary;

namespace NetServer.WebSockets;

/// <summary>
/// The payload masking of RFC 6455 5.3: every byte XORed with the key byte at its position modulo
/// 4. A payload may be masked in pieces (it arrives in several reads): the offset returned by one
/// call is the <c>maskOffset</c> of the next.
/// </summary>
/// <remarks>
/// The key is rotated once so that its first byte lines up with the first byte of the span; from
/// there the pattern repeats every 4 bytes, so it is spread over a ulong or a vector and XORed a
/// block at a time (vectors on net10.0, 8 bytes at a time on netstandard), the last few bytes one by
/// one. The per-target files hold the block loops and the random source of the keys.
/// </remarks>
internal static partial class WsMask
{
    // Random bytes drawn per call to the system generator: 64 keys. One draw costs about as much
    // whether it fills 4 bytes or 256 (close to 1 us measured on Linux, a system call), so a key
    // taken from a per-thread buffer costs a small fraction of that.
    private const int KeyBufferSize = 256;

    [ThreadStatic]
    private static byte[]? t_keys;

    [ThreadStatic]
    private static int t_keysUsed;

    /// <summary>
    /// XORs <paramref name="data"/> in place with <paramref name="maskKey"/>, starting at key byte
    /// <paramref name="maskOffset"/>. Masking and unmasking are the same operation.
    /// </summary>
    /// <param name="data">The bytes to mask or unmask.</param>
    /// <param name="maskKey">The key as <see cref="WsFrameHeader.MaskKey"/> describes it.</param>
    /// <param name="maskOffset">The key byte for <c>data[0]</c>, 0 to 3: the payload bytes already masked, modulo 4.</param>
    /// <returns>The key byte for the byte after <paramref name="data"/>: <c>(maskOffset + data.Length) &amp; 3</c>.</returns>
    public static int Apply(Span<byte> data, uint maskKey, int maskOffset)
    {
        var key = Rotate(maskKey, maskOffset);
        Xor(data, data, key);
        return (maskOffset + data.Length) & 3;
    }

    /// <summary>
    /// Writes <paramref name="source"/> XORed with <paramref name="maskKey"/> to
    /// <paramref name="destination"/> (the copy and the mask in one pass), starting at key byte
    /// <paramref name="maskOffset"/>.
    /// </summary>
    /// <param name="source">The bytes to mask or unmask.</param>
    /// <param name="destination">At least as long as <paramref name="source"/>; either the same memory or not overlapping it.</param>
    /// <param name="maskKey">The key as <see cref="WsFrameHeader.MaskKey"/> describes it.</param>
    /// <param name="maskOffset">The key byte for <c>source[0]</c>, 0 to 3.</param>
    /// <returns>The key byte for the byte after <paramref name="source"/>.</returns>
    public static int CopyMasked(ReadOnlySpan<byte> source, Span<byte> destination, uint maskKey, int maskOffset)
    {
        if (destination.Length < source.Length)
            ThrowHelper.ThrowArgumentOutOfRange(nameof(destination), "The destination is shorter than the source.");
        var key = Rotate(maskKey, maskOffset);
        Xor(source, destination.Slice(0, source.Length), key);
        return (maskOffset + source.Length) & 3;
    }

    /// <summary>
    /// A new mask key from a cryptographic source, one per frame: RFC 6455 10.3 asks that the
    /// peer's application cannot predict it. Allocates nothing once the thread's buffer exists.
    /// </summary>
    public static uint NewKey()
    {
        var keys = t_keys;
        var used = t_keysUsed;
        if (keys is null || used > keys.Length - sizeof(uint))
        {
            keys = t_keys ??= new byte[KeyBufferSize];
            FillRandom(keys);
            used = 0;
        }

        t_keysUsed = used + sizeof(uint);
        return BinaryPrimitives.ReadUInt32LittleEndian(keys.AsSpan(used));
    }

    // The key turned so that its byte maskOffset comes first (byte i of a key is bits 8i..8i+7).
    private static uint Rotate(uint maskKey, int maskOffset)
    {
        if ((uint)maskOffset > 3)
            ThrowHelper.ThrowArgumentOutOfRange(nameof(maskOffset), "The mask offset is 0 to 3.");
        var shift = maskOffset * 8;
        return (maskKey >> shift) | (maskKey << (32 - shift)); // a shift by 32 is a shift by 0 in C#
    }

    // The key repeated twice, laid out so that a native-order ulong load of 8 payload bytes lines up
    // with key bytes 0, 1, 2, 3, 0, 1, 2, 3.
    private static ulong Pattern(uint key)
    {
        var pattern = key | ((ulong)key << 32);
        return BitConverter.IsLittleEndian ? pattern : BinaryPrimitives.ReverseEndianness(pattern);
    }

    // The bytes from start on, one at a time; start is a multiple of 4 (the key is back at byte 0).
    private static void XorBytes(ReadOnlySpan<byte> source, Span<byte> destination, int start, uint key)
    {
        for (var i = start; i < source.Length; i++)
            destination[i] = (byte)(source[i] ^ (key >> (8 * (i & 3))));
    }
}
