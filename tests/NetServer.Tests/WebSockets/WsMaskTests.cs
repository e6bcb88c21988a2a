using System;
using System.Collections.Generic;
using System.Linq;
using NetServer.Tests.Infrastructure;
using NetServer.WebSockets;
using Xunit;

namespace NetServer.Tests.WebSockets;

/// <summary>
/// Payload masking against a byte-at-a-time reference: every length up to past the widest vector
/// block boundaries, every key offset, unaligned starts, in place and copied, and payloads masked
/// in pieces whose offsets chain.
/// </summary>
public sealed class WsMaskTests
{
    private static byte[] Naive(ReadOnlySpan<byte> data, uint key, int offset)
    {
        var result = new byte[data.Length];
        for (var i = 0; i < data.Length; i++)
            result[i] = (byte)(data[i] ^ (byte)(key >> (8 * ((offset + i) & 3))));
        return result;
    }

    private static byte[] RandomBytes(Random random, int length)
    {
        var bytes = new byte[length];
        random.NextBytes(bytes);
        return bytes;
    }

    [Fact]
    public void Apply_matches_the_byte_loop_for_every_length_offset_and_start()
    {
        var random = new Random(1);
        for (var length = 0; length <= 300; length++)
        {
            for (var offset = 0; offset < 4; offset++)
            {
                var key = (uint)random.NextInt64(0, 1L << 32);
                var start = random.Next(0, 8); // unaligned starts inside a larger array
                var buffer = RandomBytes(random, start + length + 8);
                var original = buffer.ToArray();
                var expected = Naive(original.AsSpan(start, length), key, offset);

                var next = WsMask.Apply(buffer.AsSpan(start, length), key, offset);

                Assert.Equal((offset + length) & 3, next);
                Assert.Equal(expected, buffer.AsSpan(start, length).ToArray());
                Assert.Equal(original.AsSpan(0, start).ToArray(), buffer.AsSpan(0, start).ToArray());
                Assert.Equal(original.AsSpan(start + length).ToArray(), buffer.AsSpan(start + length).ToArray());
            }
        }
    }

    [Fact]
    public void CopyMasked_matches_the_byte_loop_into_another_buffer_and_in_place()
    {
        var random = new Random(2);
        for (var length = 0; length <= 300; length++)
        {
            for (var offset = 0; offset < 4; offset++)
            {
                var key = (uint)random.NextInt64(0, 1L << 32);
                var sourceStart = random.Next(0, 8);
                var destinationStart = random.Next(0, 8);
                var source = RandomBytes(random, sourceStart + length);
                var sourceCopy = source.ToArray();
                var expected = Naive(source.AsSpan(sourceStart, length), key, offset);

                // A separate destination, larger than needed: bytes past the copy stay as they were.
                var destination = RandomBytes(random, destinationStart + length + 8);
                var destinationCopy = destination.ToArray();
                var next = WsMask.CopyMasked(source.AsSpan(sourceStart, length), destination.AsSpan(destinationStart), key, offset);
                Assert.Equal((offset + length) & 3, next);
                Assert.Equal(expected, destination.AsSpan(destinationStart, length).ToArray());
                Assert.Equal(sourceCopy, source);
                Assert.Equal(destinationCopy.AsSpan(0, destinationStart).ToArray(), destination.AsSpan(0, destinationStart).ToArray());
                Assert.Equal(destinationCopy.AsSpan(destinationStart + length).ToArray(), destination.AsSpan(destinationStart + length).ToArray());

                // The same memory as source and destination.
                next = WsMask.CopyMasked(source.AsSpan(sourceStart, length), source.AsSpan(sourceStart, length), key, offset);
                Assert.Equal((offset + length) & 3, next);
                Assert.Equal(expected, source.AsSpan(sourceStart, length).ToArray());
            }
        }
    }

    [Theory]
    [InlineData(1)]
    [InlineData(2)]
    [InlineData(3)]
    public void A_payload_masked_in_random_pieces_equals_it_masked_whole(int seed)
    {
        var random = new Random(seed);
        var payload = RandomBytes(random, 5000);
        var key = (uint)random.NextInt64(0, 1L << 32);
        var whole = payload.ToArray();
        Assert.Equal(5000 & 3, WsMask.Apply(whole, key, 0));

        var applied = payload.ToArray();
        var copied = new byte[payload.Length];
        int applyOffset = 0, copyOffset = 0;
        for (var at = 0; at < payload.Length;)
        {
            var piece = Math.Min(payload.Length - at, random.Next(4) == 0 ? random.Next(1, 300) : random.Next(0, 9));
            applyOffset = WsMask.Apply(applied.AsSpan(at, piece), key, applyOffset);
            copyOffset = WsMask.CopyMasked(payload.AsSpan(at, piece), copied.AsSpan(at), key, copyOffset);
            at += piece;
        }

        Assert.Equal(whole, applied);
        Assert.Equal(whole, copied);
        Assert.Equal(5000 & 3, applyOffset);
        Assert.Equal(5000 & 3, copyOffset);
    }

    [Fact]
    public void Masking_twice_gives_the_payload_back()
    {
        var random = new Random(4);
        var payload = RandomBytes(random, 70_000);
        var masked = payload.ToArray();
        WsMask.Apply(masked, 0xDEADBEEF, 3);
        Assert.NotEqual(payload, masked);
        WsMask.Apply(masked, 0xDEADBEEF, 3);
        Assert.Equal(payload, masked);
    }

    [Fact]
    public void A_bad_offset_or_a_short_destination_is_an_argument_error()
    {
        var data = new byte[8];
        Assert.Throws<ArgumentOutOfRangeException>(() => WsMask.Apply(data, 1, 4));
        Assert.Throws<ArgumentOutOfRangeException>(() => WsMask.Apply(data, 1, -1));
        Assert.Throws<ArgumentOutOfRangeException>(() => WsMask.CopyMasked(data, new byte[7], 1, 0));
        Assert.Throws<ArgumentOutOfRangeException>(() => WsMask.CopyMasked(data, new byte[8], 1, 4));
    }

    [Fact]
    public void New_keys_look_random()
    {
        var keys = new HashSet<uint>();
        uint any = 0, all = uint.MaxValue;
        for (var i = 0; i < 1000; i++)
        {
            var key = WsMask.NewKey();
            keys.Add(key);
            any |= key;
            all &= key;
        }

        // 1000 random 32-bit keys collide with odds of about 1 in 10,000; every bit is both set and clear somewhere.
        Assert.InRange(keys.Count, 998, 1000);
        Assert.Equal(uint.MaxValue, any);
        Assert.Equal(0u, all);
    }

    [Fact]
    public void New_keys_allocate_nothing_after_warm_up()
    {
        uint sum = 0;
        var allocated = Allocations.Least(() => sum += WsMask.NewKey(), roundsPerWindow: 10_000);

        Assert.Equal(0, allocated);
        GC.KeepAlive(sum);
    }
}
