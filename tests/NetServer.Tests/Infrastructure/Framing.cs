using System;
using System.Buffers.Binary;
using System.Collections.Generic;
using System.Net.Sockets;
using System.Threading;
using System.Threading.Tasks;
using Xunit;

namespace NetServer.Tests.Infrastructure;

/// <summary>
/// Test data whose every byte says where it belongs: a pseudo-random stream keyed by absolute
/// position (so a lost, repeated or reordered chunk shows up), and length-prefixed frames that
/// name their sender and sequence number (so interleaved or torn sends show up).
/// </summary>
internal static class Framing
{
    /// <summary>Bytes before a frame's payload: the payload length (int32, little endian).</summary>
    public const int PrefixSize = 4;

    /// <summary>The smallest payload: sender id and sequence number (two int32).</summary>
    public const int MinPayload = 8;

    /// <summary>The byte of the pattern stream at <paramref name="position"/>.</summary>
    public static byte PatternByte(long position) => (byte)(((ulong)position + 1) * 0x9E3779B97F4A7C15UL >> 56);

    /// <summary>Fills <paramref name="destination"/> with the pattern stream from <paramref name="start"/>.</summary>
    public static void FillPattern(Span<byte> destination, long start)
    {
        for (var i = 0; i < destination.Length; i++)
            destination[i] = PatternByte(start + i);
    }

    /// <summary>The pattern stream from <paramref name="start"/>, <paramref name="length"/> bytes long.</summary>
    public static byte[] Pattern(long start, int length)
    {
        var data = new byte[length];
        FillPattern(data, start);
        return data;
    }

    /// <summary>Index of the first byte of <paramref name="data"/> that is not the pattern from <paramref name="start"/>, or -1.</summary>
    public static int FindPatternMismatch(ReadOnlySpan<byte> data, long start)
    {
        for (var i = 0; i < data.Length; i++)
        {
            if (data[i] != PatternByte(start + i))
                return i;
        }

        return -1;
    }

    /// <summary>The filler byte at <paramref name="index"/> of a frame's payload (after sender and sequence).</summary>
    public static byte FillerByte(int sender, int sequence, int index) => (byte)((sender * 31) + (sequence * 7) + index);

    /// <summary>Writes one frame (prefix and payload) at the start of <paramref name="destination"/>; returns its total size.</summary>
    public static int WriteFrame(Span<byte> destination, int sender, int sequence, int payloadLength)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(payloadLength, MinPayload);
        BinaryPrimitives.WriteInt32LittleEndian(destination, payloadLength);
        BinaryPrimitives.WriteInt32LittleEndian(destination[4..], sender);
        BinaryPrimitives.WriteInt32LittleEndian(destination[8..], sequence);
        var filler = destination.Slice(PrefixSize + MinPayload, payloadLength - MinPayload);
        for (var i = 0; i < filler.Length; i++)
            filler[i] = FillerByte(sender, sequence, i);
        return PrefixSize + payloadLength;
    }

    /// <summary>A new array holding one frame.</summary>
    public static byte[] Frame(int sender, int sequence, int payloadLength)
    {
        var frame = new byte[PrefixSize + payloadLength];
        WriteFrame(frame, sender, sequence, payloadLength);
        return frame;
    }
}

/// <summary>
/// Parses a byte stream of frames fed in arbitrary pieces and checks each one: a sane length,
/// a filler that matches its sender and sequence. Not thread-safe: feed it from one receiver.
/// </summary>
internal sealed class FrameReader
{
    private readonly int _maxPayload;
    private readonly List<byte> _partial = [];

    public FrameReader(int maxPayload) => _maxPayload = maxPayload;

    /// <summary>Sequence numbers received from each sender, in arrival order.</summary>
    public Dictionary<int, List<int>> Sequences { get; } = [];

    /// <summary>Frames parsed so far.</summary>
    public long Frames { get; private set; }

    /// <summary>Bytes fed so far.</summary>
    public long Bytes { get; private set; }

    /// <summary>The first problem found (a torn or corrupted frame); null while the stream is clean.</summary>
    public string? Error { get; private set; }

    public void Feed(ReadOnlySpan<byte> data)
    {
        Bytes += data.Length;
        if (Error is not null)
            return;

        // Reassemble in a list: simple and plenty fast for a few MB of test data.
        foreach (var b in data)
            _partial.Add(b);

        var consumed = 0;
        var span = System.Runtime.InteropServices.CollectionsMarshal.AsSpan(_partial);
        while (span.Length - consumed >= Framing.PrefixSize)
        {
            var length = BinaryPrimitives.ReadInt32LittleEndian(span[consumed..]);
            if (length < Framing.MinPayload || length > _maxPayload)
            {
                Error = $"Frame {Frames} has an impossible length {length} (a send was torn or interleaved).";
                return;
            }

            if (span.Length - consumed < Framing.PrefixSize + length)
                break;

            var payload = span.Slice(consumed + Framing.PrefixSize, length);
            var sender = BinaryPrimitives.ReadInt32LittleEndian(payload);
            var sequence = BinaryPrimitives.ReadInt32LittleEndian(payload[4..]);
            var filler = payload[Framing.MinPayload..];
            for (var i = 0; i < filler.Length; i++)
            {
                if (filler[i] != Framing.FillerByte(sender, sequence, i))
                {
                    Error = $"Frame {Frames} (sender {sender}, sequence {sequence}, {length} bytes) is corrupted at payload byte {Framing.MinPayload + i}.";
                    return;
                }
            }

            if (!Sequences.TryGetValue(sender, out var list))
                Sequences[sender] = list = [];
            list.Add(sequence);
            Frames++;
            consumed += Framing.PrefixSize + length;
        }

        _partial.RemoveRange(0, consumed);
    }
}

/// <summary>Small conveniences over <see cref="ServerHarness"/> shared by the engine tests.</summary>
internal static class HarnessExtensions
{
    /// <summary>Connects a raw peer and waits until its session has run OnConnected; connect peers one at a time.</summary>
    public static async Task<(Socket Peer, StreamSession Session, Probe Probe)> ConnectPeerAsync(this ServerHarness harness)
    {
        var known = new HashSet<Guid>(harness.Probe.Sessions.Keys);
        var peer = await harness.ConnectRawAsync();
        Guid id = default;
        await Wait.UntilAsync(
            () =>
            {
                foreach (var (key, probe) in harness.Probe.Sessions)
                {
                    if (!known.Contains(key) && (harness.Probe.Secure ? probe.HandshakedSignal : probe.ConnectedSignal).Task.IsCompleted)
                    {
                        id = key;
                        return true;
                    }
                }

                return false;
            },
            "the new session to connect");
        var session = harness.FindSession(id) ?? throw new InvalidOperationException("The new session disconnected at once.");
        return (peer, session, harness.Probe.Sessions[id]);
    }

    /// <summary>
    /// Sends the pattern stream from <paramref name="start"/> in <paramref name="chunkSize"/> pieces
    /// with the non-waiting <c>SendAsync</c> until the send limit refuses one (the peer must not be
    /// reading); returns the position after the last accepted byte.
    /// </summary>
    public static long FillUntilRefused(StreamConnection connection, long start = 0, int chunkSize = 16 * 1024)
    {
        var chunk = new byte[chunkSize];
        var position = start;
        for (var i = 0; i < 100_000; i++)
        {
            Framing.FillPattern(chunk, position);
            if (!connection.SendAsync(chunk))
                return position;
            position += chunkSize;
        }

        Assert.Fail("The send limit never refused a send.");
        return position;
    }

    /// <summary>
    /// Fills the send queue of <paramref name="connection"/> (whose peer does not read) until it is
    /// full and stays full: fills, waits for the kernel to stop taking bytes, then tops up.
    /// </summary>
    public static async Task<long> FillToTheLimitAsync(StreamConnection connection, long start = 0, int chunkSize = 16 * 1024)
    {
        var position = start;
        for (var round = 0; round < 100; round++)
        {
            position = FillUntilRefused(connection, position, chunkSize);

            // The kernel may still take what was queued (TCP grows its buffers, a zero window is
            // probed with back-off): fill again until it has taken nothing for half a second.
            if (await WaitUntilStableAsync(() => connection.BytesPending, "the send queue", TimeSpan.FromMilliseconds(500), allowZero: true) > 0)
                return FillUntilRefused(connection, position, chunkSize);
        }

        Assert.Fail("The kernel kept taking everything queued: the peer must be reading.");
        return position;
    }

    /// <summary>Runs a blocking call on a thread of its own, so it cannot starve the thread pool the engine needs.</summary>
    public static Task<T> RunBlocking<T>(Func<T> call) =>
        Task.Factory.StartNew(call, CancellationToken.None, TaskCreationOptions.LongRunning, TaskScheduler.Default);

    /// <summary>Waits until <paramref name="value"/> is positive (or 0 too, with <paramref name="allowZero"/>) and has not changed for <paramref name="quiet"/>.</summary>
    public static async Task<long> WaitUntilStableAsync(Func<long> value, string what, TimeSpan? quiet = null, bool allowZero = false)
    {
        var still = quiet ?? TimeSpan.FromMilliseconds(200);
        var limit = DateTime.UtcNow + Wait.Default;
        var last = value();
        var since = DateTime.UtcNow;
        while (true)
        {
            await Task.Delay(20);
            var now = value();
            if (now != last || (now <= 0 && !allowZero))
            {
                last = now;
                since = DateTime.UtcNow;
            }
            else if (DateTime.UtcNow - since >= still)
            {
                return now;
            }

            if (DateTime.UtcNow > limit)
                Assert.Fail($"Timed out waiting for {what} to settle (last value {last}).");
        }
    }
}
