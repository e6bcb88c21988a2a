using System;
using System.Buffers.Binary;
using System.IO;
using System.Threading;

namespace NetServer.MicroBenchmarks;

/// <summary>
/// Length-prefixed frames (a 4-byte little-endian length, then the payload) parsed as
/// examples/FramedEcho does: whole frames are consumed, a partial one is left in the receive
/// buffer. Counts frames and payload bytes; with <see cref="Echo"/> each frame is sent back
/// whole through the writer seam (<c>StartSend</c>), as FramedEcho does.
/// </summary>
internal sealed class FrameParser : StreamProtocol
{
    public const int PrefixSize = 4;
    public const int MaxFrame = 60_000;

    private long _target;

    public bool Echo { get; init; }

    public long Frames { get; private set; }

    public long PayloadBytes { get; private set; }

    /// <summary>Set once <see cref="Frames"/> reaches <see cref="Target"/>: for a caller waiting on another thread.</summary>
    public ManualResetEventSlim? Arrived { get; init; }

    public long Target
    {
        get => Volatile.Read(ref _target);
        set => Volatile.Write(ref _target, value);
    }

    // protected internal, not protected as in FramedEcho: this assembly sees NetServer's internals
    // (InternalsVisibleTo), so the override keeps both, and FramingBenchmarks.Steps may call it.
    protected internal override int OnReceived(ReadOnlySpan<byte> data)
    {
        var consumed = 0;
        while (data.Length - consumed >= PrefixSize)
        {
            var length = BinaryPrimitives.ReadInt32LittleEndian(data[consumed..]);
            if (length is < 0 or > MaxFrame)
                throw new InvalidDataException($"Frame length {length} at offset {consumed}: the frame stream is out of step.");
            if (data.Length - consumed - PrefixSize < length)
                break; // the partial frame stays retained until the rest arrives
            var payload = data.Slice(consumed + PrefixSize, length);
            if (Echo)
                Send(payload);
            Frames++;
            PayloadBytes += length;
            consumed += PrefixSize + length;
        }

        if (Arrived is { } arrived && Frames >= Target)
            arrived.Set();
        return consumed;
    }

    private void Send(ReadOnlySpan<byte> payload)
    {
        using var frame = Connection!.StartSend(PrefixSize + payload.Length);
        BinaryPrimitives.WriteInt32LittleEndian(frame.GetSpan(PrefixSize), payload.Length);
        frame.Advance(PrefixSize);
        frame.Write(payload);
        frame.Commit();
    }
}
