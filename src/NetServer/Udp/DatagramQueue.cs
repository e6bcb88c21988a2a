using System.Collections.Generic;

namespace NetServer.Udp;

/// <summary>One datagram waiting to be sent: a pooled copy of its bytes and where it goes.</summary>
internal readonly struct QueuedDatagram(EndPoint target, byte[] array, int count, SendWaiter? completion)
{
    public EndPoint Target { get; } = target;

    /// <summary>The pooled copy (the queue's own; returned when the datagram is done).</summary>
    public byte[] Array { get; } = array;

    public int Count { get; } = count;

    /// <summary>A blocking <c>Send</c> waiting for this datagram's outcome, if any.</summary>
    public SendWaiter? Completion { get; } = completion;
}

/// <summary>
/// The datagrams a UDP socket has accepted and not yet handed to the kernel, in order. Each is a
/// copy in an array rented from the pool, so the caller may reuse its buffer at once. The channel
/// bounds the queue (bytes plus <see cref="Overhead"/> per datagram) under its send lock; this type
/// only keeps the order and the ownership of the copies.
/// </summary>
/// <remarks>Not thread-safe: the channel's send lock (or its single flusher) serialises access.</remarks>
internal sealed class DatagramQueue(BufferPool pool)
{
    /// <summary>
    /// What a queued datagram costs against the send limit besides its bytes (its record and the
    /// pool's rounding), so a queue of tiny datagrams stays bounded in memory too.
    /// </summary>
    public const int Overhead = 64;

    private readonly BufferPool _pool = pool;
    private readonly Queue<QueuedDatagram> _items = new();
    private bool _grown; // held more than SmallCapacity records since the last trim

    public int Count => _items.Count;

    /// <summary>A datagram holding a pooled copy of <paramref name="data"/>.</summary>
    public QueuedDatagram Copy(EndPoint target, ReadOnlySpan<byte> data, SendWaiter? completion)
    {
        var array = data.IsEmpty ? System.Array.Empty<byte>() : _pool.Rent(data.Length);
        data.CopyTo(array);
        return new QueuedDatagram(target, array, data.Length, completion);
    }

    public void Enqueue(QueuedDatagram datagram)
    {
        _items.Enqueue(datagram);
        if (_items.Count > SmallCapacity)
            _grown = true;
    }

    public bool TryDequeue(out QueuedDatagram datagram)
    {
        if (_items.Count == 0)
        {
            datagram = default;
            return false;
        }

        datagram = _items.Dequeue();
        return true;
    }

    /// <summary>Gives a datagram's copy back to the pool.</summary>
    public void Recycle(in QueuedDatagram datagram)
    {
        if (datagram.Array.Length != 0)
            _pool.Return(datagram.Array);
    }

    /// <summary>
    /// Frees the queue's own storage once it is empty after a deep backlog, so an idle socket holds no
    /// large record array; a small one is kept, so ordinary bursts do not reallocate it.
    /// </summary>
    public void TrimIfEmpty()
    {
        if (_grown && _items.Count == 0)
        {
            _items.TrimExcess();
            _grown = false;
        }
    }

    private const int SmallCapacity = 64;
}
