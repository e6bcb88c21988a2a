using System;
using System.Buffers;
using System.Collections.Generic;
using System.IO;
using System.IO.Compression;
using System.Linq;
using System.Text;
using System.Threading.Tasks;
using NetServer.Tests.Infrastructure;
using NetServer.WebSockets;
using Xunit;

namespace NetServer.Tests.WebSockets;

/// <summary>
/// WsDeflater and WsInflater: the RFC 7692 section 7.2.3 examples, round trips in both context
/// modes, an independent decoder, the zip-bomb bound, corrupt input and per-message allocation.
/// </summary>
public class WsDeflateCodecTests
{
    private static readonly byte[] s_tail = [0x00, 0x00, 0xFF, 0xFF];

    public static TheoryData<int, bool> Sizes()
    {
        var data = new TheoryData<int, bool>();
        foreach (var size in new[] { 0, 1, 125, 64 * 1024, 1024 * 1024 })
        {
            data.Add(size, true);
            data.Add(size, false);
        }

        return data;
    }

    /// <summary>Random bytes (incompressible) or text-like bytes (compressible), reproducibly.</summary>
    private static byte[] Payload(int size, bool compressible, int seed = 1)
    {
        var random = new Random(seed + size);
        var bytes = new byte[size];
        if (!compressible)
        {
            random.NextBytes(bytes);
            return bytes;
        }

        string[] words = ["{\"id\":", "\"name\":", "\"price\":", "true", "false", "null", "websocket ", "deflate ", "}, ", "[1,2,3]"];
        var i = 0;
        while (i < size)
        {
            var word = words[random.Next(words.Length)];
            for (var j = 0; j < word.Length && i < size; j++)
                bytes[i++] = (byte)word[j];
            if (i < size)
                bytes[i++] = (byte)('0' + random.Next(10));
        }

        return bytes;
    }

    private static byte[] Inflate(WsInflater inflater, ReadOnlySpan<byte> compressed)
    {
        Assert.True(inflater.Append(compressed), inflater.Error);
        Assert.True(inflater.Finish(out var message), inflater.Error);
        return message.ToArray();
    }

    /// <summary>An independent decoder: a DeflateStream of its own over the bytes with the marker put back.</summary>
    private static byte[] InflateIndependently(params byte[][] messages)
    {
        var input = new MemoryStream();
        foreach (var message in messages)
        {
            input.Write(message);
            input.Write(s_tail);
        }

        input.Position = 0;
        using var inflate = new DeflateStream(input, CompressionMode.Decompress);
        var output = new MemoryStream();
        inflate.CopyTo(output);
        return output.ToArray();
    }

    // --- RFC 7692 7.2.3 examples ---

    [Fact]
    public void The_rfc_examples_decode()
    {
        using var inflater = new WsInflater(1024, resetPerMessage: false);

        // 7.2.3.1: one compressed block.
        Assert.Equal("Hello", Encoding.ASCII.GetString(Inflate(inflater, [0xf2, 0x48, 0xcd, 0xc9, 0xc9, 0x07, 0x00])));

        // 7.2.3.3: a block with no compression.
        Assert.Equal("Hello", Encoding.ASCII.GetString(Inflate(inflater, [0x00, 0x05, 0x00, 0xfa, 0xff, 0x48, 0x65, 0x6c, 0x6c, 0x6f, 0x00])));

        // 7.2.3.5: two blocks in one message.
        Assert.Equal("Hello", Encoding.ASCII.GetString(Inflate(inflater, [0xf2, 0x48, 0x05, 0x00, 0x00, 0x00, 0xff, 0xff, 0xca, 0xc9, 0xc9, 0x07, 0x00])));

        // 7.2.3.6: an empty message, and an empty payload (the marker alone).
        Assert.Empty(Inflate(inflater, [0x00]));
        Assert.Empty(Inflate(inflater, []));
    }

    [Fact]
    public void The_rfc_context_takeover_example_decodes_with_the_shared_window()
    {
        using var inflater = new WsInflater(1024, resetPerMessage: false);
        Assert.Equal("Hello", Encoding.ASCII.GetString(Inflate(inflater, [0xf2, 0x48, 0xcd, 0xc9, 0xc9, 0x07, 0x00])));

        // 7.2.3.2: the second "Hello" is only a reference into the first one's window.
        Assert.Equal("Hello", Encoding.ASCII.GetString(Inflate(inflater, [0xf2, 0x00, 0x11, 0x00, 0x00])));

        // A reset inflater has no window to refer to.
        using var resetting = new WsInflater(1024, resetPerMessage: true);
        Assert.Equal("Hello", Encoding.ASCII.GetString(Inflate(resetting, [0xf2, 0x48, 0xcd, 0xc9, 0xc9, 0x07, 0x00])));
        Assert.False(resetting.Append([0xf2, 0x00, 0x11, 0x00, 0x00]) && resetting.Finish(out _));
        Assert.Equal(WsInflateFailure.Corrupt, resetting.Failure);
    }

    [Fact]
    public void A_message_ended_with_a_final_block_decodes_and_the_next_starts_afresh()
    {
        using var inflater = new WsInflater(1024, resetPerMessage: false);

        // 7.2.3.4: BFINAL set, then one octet with the header bits of an empty stored block.
        Assert.Equal("Hello", Encoding.ASCII.GetString(Inflate(inflater, [0xf3, 0x48, 0xcd, 0xc9, 0xc9, 0x07, 0x00, 0x00])));
        Assert.False(inflater.HoldsDecompressor);
        Assert.Equal("Hello", Encoding.ASCII.GetString(Inflate(inflater, [0xf2, 0x48, 0xcd, 0xc9, 0xc9, 0x07, 0x00])));
        Assert.Equal("Hello", Encoding.ASCII.GetString(Inflate(inflater, [0xf2, 0x00, 0x11, 0x00, 0x00])));
    }

    [Fact]
    public void A_message_fed_one_byte_at_a_time_decodes()
    {
        using var deflater = new WsDeflater(CompressionLevel.Optimal, resetPerMessage: false);
        using var inflater = new WsInflater(1 << 20, resetPerMessage: false);
        for (var round = 0; round < 3; round++)
        {
            var payload = Payload(5000, compressible: true, seed: round);
            var compressed = deflater.Compress(payload).ToArray();
            foreach (var b in compressed)
                Assert.True(inflater.Append([b]), inflater.Error);
            Assert.True(inflater.Finish(out var message), inflater.Error);
            Assert.Equal(payload, message.ToArray());
        }
    }

    // --- Our compressor ---

    [Fact]
    public void An_empty_message_compresses_to_one_zero_byte_that_both_ends_decode()
    {
        using var deflater = new WsDeflater(CompressionLevel.Fastest, resetPerMessage: false);
        Assert.Equal(new byte[] { 0x00 }, deflater.Compress([]).ToArray());
        Assert.Empty(InflateIndependently([0x00]));

        // Between other messages it leaves the shared window as it was.
        using var inflater = new WsInflater(1024, resetPerMessage: false);
        var sent = new List<byte[]>();
        foreach (var text in new[] { "Hello", "", "Hello", "" })
        {
            var compressed = deflater.Compress(Encoding.ASCII.GetBytes(text)).ToArray();
            sent.Add(compressed);
            Assert.Equal(text, Encoding.ASCII.GetString(Inflate(inflater, compressed)));
        }

        Assert.Equal("HelloHello", Encoding.ASCII.GetString(InflateIndependently(sent.ToArray())));
    }

    [Theory]
    [MemberData(nameof(Sizes))]
    public void A_message_round_trips_and_an_independent_decoder_reads_it(int size, bool compressible)
    {
        foreach (var reset in new[] { false, true })
        {
            using var deflater = new WsDeflater(CompressionLevel.Fastest, reset);
            using var inflater = new WsInflater(2 * 1024 * 1024, reset);
            var payload = Payload(size, compressible);
            var compressed = deflater.Compress(payload).ToArray();
            if (compressible && size >= 64 * 1024)
                Assert.True(compressed.Length < size / 2, $"{size} compressible bytes became {compressed.Length}");
            Assert.False(compressed.AsSpan().EndsWith(s_tail) && size > 0, "the sync-flush marker was left in");
            Assert.Equal(payload, Inflate(inflater, compressed));
            Assert.Equal(payload, InflateIndependently(compressed));
        }
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public void Many_messages_in_a_row_round_trip_in_random_splits(bool reset)
    {
        var random = new Random(reset ? 7 : 8);
        using var deflater = new WsDeflater(CompressionLevel.Fastest, reset);
        using var inflater = new WsInflater(1 << 20, reset);
        var sent = new List<byte[]>();
        var payloads = new List<byte>();
        for (var i = 0; i < 300; i++)
        {
            var size = random.Next(4) switch { 0 => random.Next(0, 10), 1 => random.Next(10, 300), 2 => random.Next(300, 5000), _ => random.Next(5000, 70000) };
            var payload = Payload(size, compressible: random.Next(3) != 0, seed: i);
            var compressed = deflater.Compress(payload).ToArray();
            sent.Add(compressed);
            Assert.Equal(reset, !deflater.HoldsCompressor);

            // The frames of a message may split its payload anywhere.
            var rest = compressed.AsSpan();
            while (!rest.IsEmpty)
            {
                var part = Math.Min(rest.Length, random.Next(1, 2000));
                Assert.True(inflater.Append(rest[..part]), inflater.Error);
                rest = rest[part..];
            }

            Assert.True(inflater.Finish(out var message), inflater.Error);
            Assert.True(payload.AsSpan().SequenceEqual(message), $"message {i} ({size} bytes) differs");
            Assert.Equal(reset, !inflater.HoldsDecompressor);

            // Without context takeover each message stands alone, for any decoder.
            if (reset)
                Assert.Equal(payload, InflateIndependently(compressed));
            payloads.AddRange(payload);
        }

        // Either way the messages, markers put back, are one deflate stream an independent decoder reads.
        Assert.Equal(payloads.ToArray(), InflateIndependently(sent.ToArray()));
    }

    [Fact]
    public void Context_takeover_makes_a_repeated_message_smaller_and_a_reset_does_not()
    {
        var payload = Payload(2000, compressible: false, seed: 3);
        using var keeping = new WsDeflater(CompressionLevel.Fastest, resetPerMessage: false);
        var first = keeping.Compress(payload).ToArray();
        var second = keeping.Compress(payload).ToArray();
        Assert.True(second.Length < first.Length / 10, $"with takeover: {first.Length} then {second.Length} bytes");
        Assert.Equal(payload.Concat(payload), InflateIndependently(first, second));
        Assert.ThrowsAny<InvalidDataException>(() => InflateIndependently(second)); // refers to the first message

        using var resetting = new WsDeflater(CompressionLevel.Fastest, resetPerMessage: true);
        var a = resetting.Compress(payload).ToArray();
        var b = resetting.Compress(payload).ToArray();
        Assert.Equal(a, b);
        Assert.Equal(payload, InflateIndependently(b));
    }

    [Fact]
    public void Compress_into_a_buffer_writer_writes_the_same_bytes()
    {
        using var viaSpan = new WsDeflater(CompressionLevel.Fastest, resetPerMessage: false);
        using var viaWriter = new WsDeflater(CompressionLevel.Fastest, resetPerMessage: false);
        for (var i = 0; i < 5; i++)
        {
            var payload = Payload(3000 * i, compressible: true, seed: i);
            var writer = new ArrayBufferWriter<byte>(1);
            viaWriter.Compress(payload, writer);
            Assert.Equal(viaSpan.Compress(payload).ToArray(), writer.WrittenSpan.ToArray());
        }
    }

    [Theory]
    [InlineData(CompressionLevel.Optimal)]
    [InlineData(CompressionLevel.NoCompression)]
    [InlineData(CompressionLevel.SmallestSize)]
    public void Every_level_round_trips(CompressionLevel level)
    {
        using var deflater = new WsDeflater(level, resetPerMessage: false);
        using var inflater = new WsInflater(1 << 20, resetPerMessage: false);
        for (var i = 0; i < 20; i++)
        {
            var payload = Payload(i * 3000, compressible: i % 2 == 0, seed: i);
            Assert.Equal(payload, Inflate(inflater, deflater.Compress(payload)));
        }
    }

    [Fact]
    public void This_runtime_supports_the_extension()
    {
        Assert.True(WsDeflater.IsSupported);
    }

    // --- Limits and failures ---

    [Fact]
    public async Task A_zip_bomb_fails_as_too_big_without_the_inflater_holding_more_than_the_limit()
    {
        const int Limit = 1024 * 1024;
        byte[] bomb;
        using (var deflater = new WsDeflater(CompressionLevel.Optimal, resetPerMessage: true))
            bomb = deflater.Compress(new byte[16 * 1024 * 1024]).ToArray();
        Assert.True(bomb.Length < 20 * 1024, $"16 MiB of zeros compressed to {bomb.Length} bytes");

        var pool = new LeakCheckingBufferPool();
        using (var inflater = new WsInflater(Limit, resetPerMessage: false, pool))
        {
            var rest = bomb.AsSpan();
            var failed = false;
            while (!rest.IsEmpty && !failed)
            {
                var part = Math.Min(rest.Length, 1024);
                failed = !inflater.Append(rest[..part]);
                rest = rest[part..];
                Assert.True(inflater.Length <= Limit);
                Assert.True(inflater.Capacity <= Limit);
            }

            Assert.True(failed, "16 MiB of output passed a 1 MiB limit");
            Assert.False(rest.IsEmpty, "the bomb was fed whole before it failed");
            Assert.Equal(WsInflateFailure.TooBig, inflater.Failure);
            Assert.Contains("limit", inflater.Error, StringComparison.Ordinal);
            Assert.Equal(0, inflater.Capacity); // the output is given back at once

            // Growing by doubling holds the old array next to the new one for the copy, no more.
            Assert.True(pool.PeakOutstandingBytes <= Limit + (Limit / 2), $"peak {pool.PeakOutstandingBytes} bytes");

            // A failed inflater refuses everything after.
            Assert.False(inflater.Append([0x00]));
            Assert.False(inflater.Finish(out _));
        }

        await pool.AssertAllReturnedAsync();

        // The same bytes under a limit they fit pass.
        using var roomy = new WsInflater(16 * 1024 * 1024, resetPerMessage: false);
        Assert.Equal(16 * 1024 * 1024, Inflate(roomy, bomb).Length);
    }

    [Fact]
    public void A_message_of_exactly_the_limit_passes_and_one_byte_more_fails()
    {
        using var deflater = new WsDeflater(CompressionLevel.Fastest, resetPerMessage: true);
        var exact = deflater.Compress(Payload(1000, compressible: true)).ToArray();
        var over = deflater.Compress(Payload(1001, compressible: true)).ToArray();

        using var inflater = new WsInflater(1000, resetPerMessage: true);
        Assert.Equal(1000, Inflate(inflater, exact).Length);
        var ok = inflater.Append(over) && inflater.Finish(out _);
        Assert.False(ok);
        Assert.Equal(WsInflateFailure.TooBig, inflater.Failure);
    }

    [Theory]
    [InlineData(new byte[] { 0x06 })]                                  // block type 3, which does not exist
    [InlineData(new byte[] { 0x00, 0x05, 0x00, 0x05, 0x00 })]        // stored block whose length check fails
    [InlineData(new byte[] { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff })]
    [InlineData(new byte[] { 0xf2, 0x00, 0x11, 0x00, 0x00 })]        // a reference to a window that is empty
    public void Corrupt_input_fails_cleanly_and_the_inflater_stays_failed(byte[] compressed)
    {
        using var inflater = new WsInflater(1024, resetPerMessage: false);
        var ok = inflater.Append(compressed) && inflater.Finish(out _);
        Assert.False(ok);
        Assert.Equal(WsInflateFailure.Corrupt, inflater.Failure);
        Assert.StartsWith("The compressed message is not valid deflate data", inflater.Error, StringComparison.Ordinal);
        Assert.False(inflater.HoldsDecompressor);
        Assert.False(inflater.Append([0xf2, 0x48, 0xcd, 0xc9, 0xc9, 0x07, 0x00]));
        Assert.False(inflater.Finish(out _));
    }

    [Fact]
    public void A_corrupted_message_in_a_stream_of_good_ones_is_caught()
    {
        using var deflater = new WsDeflater(CompressionLevel.Fastest, resetPerMessage: false);
        using var inflater = new WsInflater(1 << 20, resetPerMessage: false);
        Assert.Equal(Payload(4000, true), Inflate(inflater, deflater.Compress(Payload(4000, true))));
        var bad = deflater.Compress(Payload(4000, true, seed: 9)).ToArray();
        bad[0] |= 0x06; // the first block's type becomes 3, which does not exist
        Assert.False(inflater.Append(bad) && inflater.Finish(out _));
        Assert.Equal(WsInflateFailure.Corrupt, inflater.Failure);
    }

    // --- Memory ---

    [Fact]
    public void A_message_with_context_takeover_allocates_nothing_after_warm_up()
    {
        using var deflater = new WsDeflater(CompressionLevel.Fastest, resetPerMessage: false);
        using var inflater = new WsInflater(1 << 20, resetPerMessage: false);
        var payloads = Enumerable.Range(0, 8).Select(i => Payload(200 + (i * 3000), compressible: true, seed: i)).ToArray();
        var total = 0;
        void Round()
        {
            foreach (var payload in payloads)
            {
                var compressed = deflater.Compress(payload);
                inflater.Append(compressed[..(compressed.Length / 2)]);
                inflater.Append(compressed[(compressed.Length / 2)..]);
                inflater.Finish(out var message);
                total += message.Length;
            }
        }

        var allocated = Allocations.Least(Round, roundsPerWindow: 50, warmUp: 5);
        Assert.True(total > 0);
        Assert.Equal(0, allocated);
    }

    [Fact]
    public async Task Memory_is_given_back_when_idle_and_on_dispose()
    {
        var pool = new LeakCheckingBufferPool();
        var deflater = new WsDeflater(CompressionLevel.Fastest, resetPerMessage: true, pool);
        var inflater = new WsInflater(1 << 20, resetPerMessage: true, pool);
        var payload = Payload(100_000, compressible: true);
        Assert.Equal(payload, Inflate(inflater, deflater.Compress(payload)));
        Assert.True(deflater.ScratchCapacity > 0);
        Assert.True(inflater.Capacity > 0);
        Assert.False(deflater.HoldsCompressor);
        Assert.False(inflater.HoldsDecompressor);

        deflater.ReleaseScratch();
        inflater.Release();
        Assert.Equal(0, deflater.ScratchCapacity);
        Assert.Equal(0, inflater.Capacity);
        Assert.Equal(0, pool.Outstanding);

        // Release in the middle of a message keeps what it inflated so far.
        var compressed = deflater.Compress(payload).ToArray();
        Assert.True(inflater.Append(compressed.AsSpan(0, 100)));
        inflater.Release();
        Assert.True(inflater.Append(compressed.AsSpan(100)));
        Assert.True(inflater.Finish(out var message));
        Assert.Equal(payload, message.ToArray());

        deflater.Dispose();
        inflater.Dispose();
        deflater.Dispose();
        await pool.AssertAllReturnedAsync();
        Assert.Throws<ObjectDisposedException>(() => { deflater.Compress(payload); });
        Assert.Throws<ObjectDisposedException>(() => { inflater.Append(compressed); });
    }
}
