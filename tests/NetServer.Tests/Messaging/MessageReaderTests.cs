using System;
using System.Buffers.Binary;
using System.Collections.Generic;
using NetServer.Messaging;
using NetServer.Tests.Infrastructure;
using Xunit;

namespace NetServer.Tests.Messaging;

/// <summary>
/// The pure length-prefix parser, driven the way the engine drives it: unconsumed bytes are kept
/// (at most the retention limit) and handed back in front of the next ones.
/// </summary>
public sealed class MessageReaderTests
{
    private const int Retention = 256;
    private const int Max = 1024 * 1024;

    // Zero-length frames, frames that just fit the retention limit (kept in the caller's buffer)
    // and ones just over it or far over it (reassembled in pooled memory).
    private static readonly int[] s_sizes = [0, 1, 0, 5, 100, Retention - 4, Retention - 3, 0, 3 * Retention, 7, 70_000, 0, 2];

    [Fact]
    public void Frames_fed_byte_by_byte_come_out_whole_and_in_order()
    {
        var stream = Stream(s_sizes, out var expected);
        var driver = new Driver(Max, Retention);
        for (var i = 0; i < stream.Length; i++)
            driver.Feed(stream.AsSpan(i, 1));

        driver.AssertMessages(expected);
        Assert.Equal(0, driver.Reader.AssemblyCapacity);
        Assert.False(driver.Reader.IsAssembling);
    }

    [Theory]
    [InlineData(1)]
    [InlineData(2)]
    [InlineData(3)]
    [InlineData(4)]
    public void Frames_fed_in_random_splits_come_out_whole_and_in_order(int seed)
    {
        var random = new Random(seed);
        var sizes = new List<int>(s_sizes);
        for (var i = 0; i < 200; i++)
            sizes.Add(random.Next(6) == 0 ? random.Next(Retention, 5000) : random.Next(0, 40));
        var stream = Stream(sizes.ToArray(), out var expected);

        var driver = new Driver(Max, Retention);
        for (var offset = 0; offset < stream.Length;)
        {
            var part = Math.Min(stream.Length - offset, random.Next(1, 3 * Retention));
            driver.Feed(stream.AsSpan(offset, part));
            offset += part;
        }

        driver.AssertMessages(expected);
        Assert.Equal(0, driver.Reader.AssemblyCapacity);
    }

    [Fact]
    public void A_frame_that_fits_the_retention_limit_is_left_in_place_and_a_longer_one_is_reassembled()
    {
        var fits = Stream([Retention - MessageReader.HeaderSize], out _);
        var driver = new Driver(Max, Retention);
        foreach (var b in fits)
        {
            driver.Feed([b]);
            Assert.False(driver.Reader.IsAssembling);
        }

        Assert.Single(driver.Messages);

        var longer = Stream([Retention - MessageReader.HeaderSize + 1], out _);
        driver.Feed(longer.AsSpan(0, MessageReader.HeaderSize + 1));
        Assert.True(driver.Reader.IsAssembling);
        Assert.Equal(0, driver.Pending); // consumed into pooled memory, nothing left retained
        driver.Feed(longer.AsSpan(MessageReader.HeaderSize + 1));
        Assert.Equal(2, driver.Messages.Count);
    }

    [Theory]
    [InlineData(-1)]
    [InlineData(int.MinValue)]
    public void A_negative_length_is_refused_before_anything_is_consumed_or_rented(int length)
    {
        var reader = default(MessageReader);
        var header = Header(length);
        Assert.Equal(MessageReadStatus.NeedMoreData, reader.Read(header.AsSpan(0, 3), Max, Retention, out _, out var consumed));
        Assert.Equal(0, consumed);

        var status = reader.Read(header, Max, Retention, out _, out consumed);
        Assert.Equal(MessageReadStatus.InvalidLength, status);
        Assert.Equal(0, consumed);
        Assert.Equal(0, reader.AssemblyCapacity);
        Assert.Contains("negative", reader.Error, StringComparison.Ordinal);
        Assert.Contains(length.ToString(System.Globalization.CultureInfo.InvariantCulture), reader.Error, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData(1000)]
    [InlineData(Max)]
    [InlineData(0)]
    public void The_maximum_length_is_accepted_and_one_more_is_refused_before_anything_is_rented(int max)
    {
        var reader = default(MessageReader);
        var over = Header(max + 1);
        Assert.Equal(MessageReadStatus.InvalidLength, reader.Read(over, max, Retention, out _, out var consumed));
        Assert.Equal(0, consumed);
        Assert.Equal(0, reader.AssemblyCapacity);
        Assert.Contains($"{max + 1} is over the maximum message size ({max} bytes)", reader.Error, StringComparison.Ordinal);

        // A refusal is not a state: the exact maximum still parses (over the retention limit: reassembled).
        var stream = Stream([max], out var expected);
        var driver = new Driver(max, Retention);
        driver.Feed(stream);
        driver.AssertMessages(expected);
    }

    [Fact]
    public void A_huge_announced_length_holds_memory_in_proportion_to_the_bytes_that_arrived_and_Reset_returns_it()
    {
        const int announced = 16 * 1024 * 1024;
        const int sent = 100 * 1024;
        var driver = new Driver(MessageProtocol.DefaultMaxMessageSize, 64 * 1024);
        driver.Feed(Header(announced));
        var chunk = Framing.Pattern(0, 8 * 1024);
        for (var received = 0; received < sent; received += chunk.Length)
        {
            driver.Feed(chunk);
            Assert.True(driver.Reader.IsAssembling);
            var arrived = received + chunk.Length;
            Assert.True(
                driver.Reader.AssemblyCapacity <= Math.Max(MessageReader.FirstAssemblyBlock, 2 * arrived),
                $"{driver.Reader.AssemblyCapacity} bytes held for {arrived} received");
        }

        Assert.True(driver.Reader.AssemblyCapacity >= sent);
        Assert.Empty(driver.Messages);

        driver.Reader.Reset();
        Assert.Equal(0, driver.Reader.AssemblyCapacity);
        Assert.False(driver.Reader.IsAssembling);

        // After Reset (a new connection) the reader starts from a header again.
        var fresh = new Driver(Max, Retention) { Reader = driver.Reader };
        var stream = Stream([3, 400], out var expected);
        fresh.Feed(stream);
        fresh.AssertMessages(expected);
    }

    [Fact]
    public void Reset_in_the_middle_of_a_reassembly_and_after_a_delivered_one_leaves_nothing_held()
    {
        var stream = Stream([5000], out _);
        var driver = new Driver(Max, Retention);
        driver.Feed(stream.AsSpan(0, 3000));
        Assert.True(driver.Reader.AssemblyCapacity > 0);
        driver.Reader.Reset();
        Assert.Equal(0, driver.Reader.AssemblyCapacity);

        // A delivered reassembled message is held until the next Read (or ReleaseMessage): the span stays valid in the callback.
        var reader = default(MessageReader);
        Assert.Equal(MessageReadStatus.NeedMoreData, reader.Read(stream.AsSpan(0, 1000), Max, Retention, out _, out var consumed));
        Assert.Equal(1000, consumed);
        Assert.Equal(MessageReadStatus.Message, reader.Read(stream.AsSpan(1000), Max, Retention, out var message, out _));
        Assert.Equal(5000, message.Length);
        Assert.Equal(-1, Framing.FindPatternMismatch(message, 5000));
        Assert.True(reader.AssemblyCapacity > 0);
        reader.ReleaseMessage();
        Assert.Equal(0, reader.AssemblyCapacity);

        // Reset while a reassembled message is handed out (the protocol replaced inside OnMessage):
        // its memory stays with the handler until ReleaseMessage, never back in the pool under it.
        Assert.Equal(MessageReadStatus.NeedMoreData, reader.Read(stream.AsSpan(0, 1000), Max, Retention, out _, out _));
        Assert.Equal(MessageReadStatus.Message, reader.Read(stream.AsSpan(1000), Max, Retention, out _, out _));
        reader.Reset();
        Assert.True(reader.AssemblyCapacity > 0);
        reader.ReleaseMessage();
        Assert.Equal(0, reader.AssemblyCapacity);
    }

    private static byte[] Header(int length)
    {
        var header = new byte[MessageReader.HeaderSize];
        BinaryPrimitives.WriteInt32LittleEndian(header, length);
        return header;
    }

    /// <summary>The frames of <paramref name="sizes"/> back to back, each payload the pattern from its size.</summary>
    private static byte[] Stream(int[] sizes, out List<byte[]> payloads)
    {
        payloads = [];
        var stream = new List<byte>();
        foreach (var size in sizes)
        {
            var payload = Framing.Pattern(size, size);
            payloads.Add(payload);
            stream.AddRange(Header(size));
            stream.AddRange(payload);
        }

        return stream.ToArray();
    }

    /// <summary>The engine's side: keeps what the reader did not consume (never more than the retention limit) and calls again.</summary>
    private sealed class Driver(int max, int retention)
    {
        private readonly List<byte> _retained = [];

        public MessageReader Reader;

        public List<byte[]> Messages { get; } = [];

        public int Pending => _retained.Count;

        public void Feed(ReadOnlySpan<byte> data)
        {
            _retained.AddRange(data.ToArray());
            var buffer = _retained.ToArray();
            var offset = 0;
            while (true)
            {
                var status = Reader.Read(buffer.AsSpan(offset), max, retention, out var message, out var consumed);
                offset += consumed;
                Assert.NotEqual(MessageReadStatus.InvalidLength, status);
                if (status == MessageReadStatus.NeedMoreData)
                    break;
                Messages.Add(message.ToArray());
            }

            _retained.RemoveRange(0, offset);
            Assert.True(_retained.Count <= retention, $"{_retained.Count} bytes left unconsumed, over the retention limit {retention}");
        }

        public void AssertMessages(List<byte[]> expected)
        {
            Assert.Equal(expected.Count, Messages.Count);
            for (var i = 0; i < expected.Count; i++)
                Assert.True(expected[i].AsSpan().SequenceEqual(Messages[i]), $"message {i} ({expected[i].Length} bytes) differs");
        }
    }
}
