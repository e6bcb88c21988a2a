using System;
using System.Buffers.Binary;
using System.Collections.Concurrent;
using System.Threading;
using NetServer.Tests.Infrastructure;

namespace NetServer.Tests.Streams;

/// <summary>
/// Length-prefixed frames (Framing's wire shape: an int32 LE payload length, then the payload)
/// parsed in place from retained input. Each frame is checked and handed to <see cref="Frame"/>;
/// the protocol counts the calls where it left a partial frame behind.
/// </summary>
internal sealed class FrameProtocol : StreamProtocol
{
    private long _frames;
    private long _partialCalls;
    private long _maxDelivered;

    /// <summary>Called with each whole frame (prefix included), in order.</summary>
    public Action<FrameProtocol, ReadOnlySpan<byte>>? Frame { get; set; }

    /// <summary>Frames parsed.</summary>
    public long Frames => Interlocked.Read(ref _frames);

    /// <summary>Calls that returned less than they were given (retained input was used).</summary>
    public long PartialCalls => Interlocked.Read(ref _partialCalls);

    /// <summary>The most bytes one call was handed.</summary>
    public long MaxDelivered => Interlocked.Read(ref _maxDelivered);

    /// <summary>The first malformed frame, if any.</summary>
    public string? Error { get; private set; }

    public ConcurrentQueue<string> Events { get; } = new();

    protected internal override int OnReceived(ReadOnlySpan<byte> data)
    {
        if (data.Length > _maxDelivered)
            Interlocked.Exchange(ref _maxDelivered, data.Length);
        var consumed = 0;
        while (data.Length - consumed >= Framing.PrefixSize)
        {
            var length = BinaryPrimitives.ReadInt32LittleEndian(data[consumed..]);
            if (length < 0)
            {
                Error ??= $"negative length {length}";
                Connection!.Disconnect();
                return data.Length;
            }

            if (data.Length - consumed - Framing.PrefixSize < length)
                break;
            var frame = data.Slice(consumed, Framing.PrefixSize + length);
            consumed += frame.Length;
            Interlocked.Increment(ref _frames);
            Frame?.Invoke(this, frame);
            if (Connection is not { } connection || connection.IsReceivingPaused)
                return consumed; // detached (switched) or paused by the handler: the rest is not ours to parse now
        }

        if (consumed < data.Length)
            Interlocked.Increment(ref _partialCalls);
        return consumed;
    }

    protected internal override void OnAttached() => Events.Enqueue("attached");

    protected internal override void OnConnected() => Events.Enqueue("connected");

    protected internal override void OnDisconnected(DisconnectReason reason) => Events.Enqueue("disconnected:" + reason);

    protected internal override void OnDetached() => Events.Enqueue("detached");
}

/// <summary>Consumes lines ending in '\n'; hands each to <see cref="Line"/>.</summary>
internal sealed class LineProtocol : StreamProtocol
{
    public Action<LineProtocol, string>? Line { get; set; }

    protected internal override int OnReceived(ReadOnlySpan<byte> data)
    {
        var consumed = 0;
        while (true)
        {
            var end = data[consumed..].IndexOf((byte)'\n');
            if (end < 0)
                return consumed;
            var line = System.Text.Encoding.ASCII.GetString(data.Slice(consumed, end));
            consumed += end + 1;
            Line?.Invoke(this, line);
            if (Connection is null)
                return consumed; // switched: the rest goes to the new protocol
        }
    }
}

/// <summary>Collects every byte it is given (consuming all), for checking what a protocol switch handed on.</summary>
internal sealed class CollectingProtocol : StreamProtocol
{
    private readonly object _lock = new();
    private readonly System.Collections.Generic.List<byte> _bytes = [];

    public int Calls { get; private set; }

    public byte[] Bytes
    {
        get
        {
            lock (_lock)
                return [.. _bytes];
        }
    }

    protected internal override int OnReceived(ReadOnlySpan<byte> data)
    {
        lock (_lock)
        {
            Calls++;
            foreach (var b in data)
                _bytes.Add(b);
        }

        return data.Length;
    }
}
