using System;
using System.Buffers.Binary;

namespace NetServer.MicroBenchmarks;

/// <summary>
/// A prepared stream of length-prefixed frames and the sizes it arrives in: pseudo-random cuts
/// (fixed seed) at arbitrary points, so frames straddle reads and the receive buffer retains
/// partial frames. Made once, outside the measured code.
/// </summary>
internal sealed class FrameStream
{
    public FrameStream(int frames, int payloadSize, int maxCut, int seed)
    {
        var random = new Random(seed);
        var frameSize = FrameParser.PrefixSize + payloadSize;
        Bytes = new byte[frames * frameSize];
        for (var offset = 0; offset < Bytes.Length; offset += frameSize)
        {
            BinaryPrimitives.WriteInt32LittleEndian(Bytes.AsSpan(offset), payloadSize);
            random.NextBytes(Bytes.AsSpan(offset + FrameParser.PrefixSize, payloadSize));
        }

        var cuts = new int[Bytes.Length]; // at most one cut per byte
        var count = 0;
        for (var left = Bytes.Length; left > 0; count++)
        {
            cuts[count] = Math.Min(random.Next(1, maxCut + 1), left);
            left -= cuts[count];
        }

        Cuts = cuts.AsSpan(0, count).ToArray();
    }

    /// <summary>Whole frames, back to back.</summary>
    public byte[] Bytes { get; }

    /// <summary>The sizes the bytes arrive in, in order; they add up to <c>Bytes.Length</c>.</summary>
    public int[] Cuts { get; }
}
