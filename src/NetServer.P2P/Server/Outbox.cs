using System;
using System.Buffers;
using System.Collections.Generic;
using System.Diagnostics;
using System.Threading;
using NetServer.P2P.Wire;

namespace NetServer.P2P.Server;

/// <summary>
/// The frames routed to one peer that wait to go out together: appended by the senders' receive
/// hooks and handed to the peer's connection as one send when the sender's read was delivered
/// (<see cref="SendGathered"/>, from the sender's thread), by a flush scheduled on the thread pool
/// when appended outside a relay session's delivery, or at once when the buffer fills. Without it
/// every routed message would find the addressee's queue idle and go out alone, a TLS record and a
/// system call each: the engine gathers the sends a connection makes in its own hooks, not those
/// made to another connection.
/// </summary>
/// <remarks>
/// Bounded: two pooled buffers of <see cref="Capacity"/> bytes at most, one filling while the other
/// is sent. Under steady traffic they alternate, so nothing is rented per flush (the pool's
/// per-thread caches do not help here: buffers are rented on the receiving threads and given back
/// on the pool's); a flush that finds nothing appended meanwhile gives both back, so an idle peer
/// holds none.
/// </remarks>
internal sealed class Outbox
#if NET
    : IThreadPoolWorkItem
#endif
{
    /// <summary>The most bytes gathered before they are sent without waiting for the flush.</summary>
    public const int Capacity = 64 * 1024;

#if !NET
    private static readonly WaitCallback s_flush = static state => ((Outbox)state!).Execute();
#endif

    private readonly object _lock = new();      // the buffer
    private readonly object _sendLock = new();  // taking and sending, so gathered bytes leave in the order they came
    private readonly RelaySession _session;
    private byte[]? _buffer;
    private byte[]? _spare;
    private int _length;
    private bool _scheduled;

    // The outboxes frames were appended to during the read a relay session is delivering on this
    // thread (null: none is): sent when its messages were delivered (SendGathered), from the
    // thread that routed them, instead of by a flush on the thread pool each.
    [ThreadStatic]
    private static List<Outbox>? t_gathering;

    [ThreadStatic]
    private static List<Outbox>? t_spareList;

    public Outbox(RelaySession session) => _session = session;

    // The most outboxes one read sends from its own thread; the rest of a wide fan-out (a room, everyone)
    // is flushed on the thread pool, as before, so that one read does not hold its thread (an I/O loop's,
    // with every connection on it) for hundreds of TLS sends.
    private const int SentInline = 16;

    /// <summary>Appends on this thread are gathered until <see cref="SendGathered"/> (a relay session delivers a read here).</summary>
    public static void Gather()
    {
        if (t_gathering is not null)
            return;
        t_gathering = t_spareList ?? [];
        t_spareList = null;
    }

    /// <summary>Sends what this thread's routing appended since <see cref="Gather"/>: one send per outbox.</summary>
    public static void SendGathered()
    {
        if (t_gathering is not { } gathered)
            return;
        t_gathering = null; // from here on appends (a flush's own hooks) are scheduled as usual
        var next = 0;
        try
        {
            while (next < gathered.Count)
            {
                var outbox = gathered[next++];
                if (next <= SentInline)
                    outbox.Flush();
                else
                    outbox.Schedule();
            }
        }
        finally
        {
            // A flush that threw: the outboxes after it still hold frames and are marked scheduled.
            while (next < gathered.Count)
                gathered[next++].Schedule();
            gathered.Clear();
            t_spareList = gathered;
        }
    }

    /// <summary>Bytes gathered and not yet handed to the connection.</summary>
    public int Length => Volatile.Read(ref _length);

    /// <summary>Adds <paramref name="frame"/>; false when the connection is gone.</summary>
    public bool Append(ReadOnlySpan<byte> frame)
    {
        if (frame.Length > Capacity)
            return SendLarge(frame);
        while (true)
        {
            lock (_lock)
            {
                if (RoomLocked(frame.Length) is { } buffer)
                {
                    frame.CopyTo(buffer.AsSpan(_length));
                    AppendedLocked(frame.Length);
                    return true;
                }
            }

            // Full: send what is gathered now, then take this frame into a fresh buffer.
            if (!Flush())
                return false;
        }
    }

    /// <summary>
    /// Adds the frame of a routed envelope laid out as clients write it, its From replaced in
    /// <paramref name="range"/> (<see cref="EnvelopeRewriter.RangeOf"/>, never
    /// <see cref="EnvelopeRewriter.NoRange"/>: copies only, no walk of the fields under the lock),
    /// straight into the buffer. <paramref name="frameSize"/> is the most it can take, at most
    /// <see cref="Capacity"/>.
    /// </summary>
    /// <returns>The frame's length; 0 when the connection is gone.</returns>
    public int AppendRouted(ReadOnlySpan<byte> envelope, ReadOnlySpan<byte> fromField, (int Start, int End) range, int frameSize)
    {
        Debug.Assert(range != EnvelopeRewriter.NoRange && frameSize <= Capacity);
        while (true)
        {
            lock (_lock)
            {
                if (RoomLocked(frameSize) is { } buffer)
                {
                    var length = EnvelopeRewriter.WriteFrame(envelope, fromField, buffer.AsSpan(_length, frameSize), range);
                    AppendedLocked(length);
                    return length;
                }
            }

            if (!Flush())
                return 0;
        }
    }

    /// <summary>The buffer when <paramref name="count"/> more bytes fit behind what it holds (taken when none is); null when they do not.</summary>
    private byte[]? RoomLocked(int count) => _length + count <= Capacity ? _buffer ??= TakeSpareLocked() : null;

    /// <summary>Counts <paramref name="count"/> bytes written behind the gathered ones and makes sure they will be sent.</summary>
    private void AppendedLocked(int count)
    {
        Volatile.Write(ref _length, _length + count);
        if (_scheduled)
            return;
        _scheduled = true;
        if (t_gathering is { } gathered)
            gathered.Add(this);
        else
            Schedule();
    }

    /// <summary>The scheduled flush.</summary>
    public void Execute() => Flush();

    private bool Flush()
    {
        lock (_sendLock)
        {
            byte[]? buffer;
            int length;
            lock (_lock)
            {
                buffer = _buffer;
                length = _length;
                _buffer = null;
                Volatile.Write(ref _length, 0);
                _scheduled = false;
            }

            if (buffer is null)
                return true;
            try
            {
                return length == 0 || Send(buffer.AsSpan(0, length));
            }
            finally
            {
                Recycle(buffer);
            }
        }
    }

    private byte[] TakeSpareLocked()
    {
        var spare = _spare;
        _spare = null;
        return spare ?? ArrayPool<byte>.Shared.Rent(Capacity);
    }

    /// <summary>A sent buffer becomes the spare while frames keep coming; when none came meanwhile, both go back to the pool.</summary>
    private void Recycle(byte[] sent)
    {
        byte[]? idle = null;
        lock (_lock)
        {
            if (_buffer is null)
            {
                idle = _spare;
                _spare = null;
            }
            else if (_spare is null)
            {
                _spare = sent;
                return;
            }
        }

        ArrayPool<byte>.Shared.Return(sent);
        if (idle is not null)
            ArrayPool<byte>.Shared.Return(idle);
    }

    private bool SendLarge(ReadOnlySpan<byte> frame)
    {
        lock (_sendLock)
        {
            // What was gathered before goes first.
            byte[]? buffer;
            int length;
            lock (_lock)
            {
                buffer = _buffer;
                length = _length;
                _buffer = null;
                Volatile.Write(ref _length, 0);
            }

            try
            {
                if (buffer is not null && length > 0 && !Send(buffer.AsSpan(0, length)))
                    return false;
            }
            finally
            {
                if (buffer is not null)
                    Recycle(buffer);
            }

            return Send(frame);
        }
    }

    /// <summary>
    /// Hands gathered frames to the connection. Routed frames were admitted under the destination
    /// limit, so a refusal means the peer lets even the relay's reserve fill (it does not read): it
    /// is disconnected rather than silently miss frames in the middle of its stream. The close
    /// returns at once (this may run under the relay's view lock, which the departure needs).
    /// </summary>
    private bool Send(ReadOnlySpan<byte> frames)
    {
        var connection = _session.Connection;
        if (connection is null)
            return false;
        if (connection.SendAsync(frames))
            return true;
        if (connection.IsConnected)
            connection.DisconnectOnProtocolError("The peer does not read: its send queue passed the relay's destination limit and control reserve.");
        return false;
    }

    private void Schedule()
    {
#if NET
        ThreadPool.UnsafeQueueUserWorkItem(this, preferLocal: false);
#else
        ThreadPool.UnsafeQueueUserWorkItem(s_flush, this); // netstandard2.1 has no IThreadPoolWorkItem: a small work item per flush
#endif
    }
}
