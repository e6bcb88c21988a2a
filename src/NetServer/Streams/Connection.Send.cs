using System.Buffers;

namespace NetServer.Streams;

/// <summary>How a send that finds the queue idle gets its bytes to the kernel.</summary>
internal enum SendMode
{
    /// <summary>At once, from the caller's thread, without copying (the default); gathered inside the connection's own hooks.</summary>
    Direct,

    /// <summary>Queued; a flusher on the thread pool sends them (multicast).</summary>
    Scheduled,
}

/// <summary>What a send attempt did with the bytes.</summary>
internal enum SendStatus
{
    /// <summary>The bytes are queued or already handed to the kernel.</summary>
    Accepted,

    /// <summary>The send limit refused them; nothing was queued.</summary>
    Full,

    /// <summary>The caller is parked in the waiter it passed in.</summary>
    Waiting,

    /// <summary>The connection no longer takes sends.</summary>
    Closed,
}

/// <summary>
/// The send side. Any thread may send; the bytes of one send are never split by another's.
/// When nothing is queued, the sender's own thread hands its bytes straight to the kernel with a
/// non-blocking send, without copying them; inside one of the connection's own hooks it only
/// queues them instead, and everything the hook sends goes out in one write when it returns (see
/// <see cref="CallbackScope"/>). Otherwise the bytes are appended to the queue and the one active
/// <em>flusher</em> (the thread that found the queue idle, or the completion of its async send)
/// gathers whatever has accumulated into each send. Hooks of the send side (OnSent, OnEmpty)
/// run only on the flusher, so a send made from those hooks only queues: there is no recursion.
/// </summary>
internal sealed partial class Connection
{
    /// <summary>A hook's gathered sends go out once this many bytes wait, without waiting for the hook to return.</summary>
    internal const int GatherLimit = 64 * 1024;

    private readonly object _sendLock = new();
    private readonly SendQueue _queue;
    private WaiterQueue? _waiters;      // parked senders, in arrival order (under the send lock)
    private WaiterQueue? _flushWaiters; // callers waiting for a watermark, in watermark order
    private bool _flushing;
    private bool _corked;      // the flusher role is held by a hook gathering its sends (under the send lock)
    private bool _emptyRaised;
    private long _bytesPending;
    private long _bytesSending;
    private long _queuedTotal;
    private long _sentTotal;

    /// <summary>Where an admitted send's bytes go.</summary>
    private enum Route
    {
        /// <summary>Appended behind a flusher that is already at work.</summary>
        Queued,

        /// <summary>Appended; this hook now holds the flusher role and sends when it returns.</summary>
        Corked,

        /// <summary>Appended; the gathered bytes reached <see cref="GatherLimit"/>: flush now.</summary>
        FlushNow,

        /// <summary>Appended; a flusher on the thread pool sends it.</summary>
        Scheduled,

        /// <summary>This thread is the flusher: send straight from the caller's bytes.</summary>
        Direct,
    }

    /// <summary>Bytes accepted and not yet handed to the kernel (queued and in flight).</summary>
    public long BytesPending => Volatile.Read(ref _bytesPending);

    /// <summary>Bytes inside an asynchronous socket send right now.</summary>
    public long BytesSending => Volatile.Read(ref _bytesSending);

    // --- Entry points ---

    /// <summary>
    /// Sends <paramref name="data"/> (or <paramref name="shared"/>, which then must be the same bytes),
    /// or queues it, or refuses it. With a <paramref name="waiter"/>, a refusal parks the waiter instead.
    /// <paramref name="watermark"/> is the queue position just after these bytes.
    /// </summary>
    public SendStatus Send(ReadOnlySpan<byte> data, SharedBuffer? shared, SendWaiter? waiter, out long watermark) =>
        Send(data, shared, waiter, SendMode.Direct, out watermark);

    /// <summary>
    /// As <see cref="Send(ReadOnlySpan{byte}, SharedBuffer?, SendWaiter?, out long)"/>; with
    /// <see cref="SendMode.Scheduled"/> an idle queue is not sent from the caller's thread: the bytes
    /// are queued and a flusher is started on the thread pool. A multicast uses this, so one thread
    /// does not make a syscall per session per message, and messages that pile up while the flusher
    /// is scheduled go out together.
    /// </summary>
    /// <paramref name="pastLimit"/>: admitted past the send limit too (a frame a protocol must not lose), though never ahead of parked senders.
    public SendStatus Send(ReadOnlySpan<byte> data, SharedBuffer? shared, SendWaiter? waiter, SendMode mode, out long watermark, bool pastLimit = false)
    {
        if (data.IsEmpty)
            return EmptySend(out watermark);

        Route route;
        lock (_sendLock)
        {
            var status = AdmitLocked(data.Length, waiter, mode, out route, out watermark, pastLimit);
            if (status != SendStatus.Accepted)
                return status;
            if (route != Route.Direct)
                Append(data, shared);
        }

        if (route == Route.Direct)
            return SendDirect(data, shared) ? SendStatus.Accepted : SendStatus.Closed;
        AfterAppend(route);
        return SendStatus.Accepted;
    }

    /// <summary>Sends the parts of <paramref name="data"/> as one unit (never interleaved with another send).</summary>
    public SendStatus Send(in ReadOnlySequence<byte> data)
    {
        if (data.IsSingleSegment)
            return Send(data.First.Span, null, null, SendMode.Direct, out _);
        if (data.Length == 0)
            return EmptySend(out _); // empty parts: nothing to send, and no empty gathered send

        Route route;
        lock (_sendLock)
        {
            var status = AdmitLocked(data.Length, null, SendMode.Direct, out route, out _);
            if (status != SendStatus.Accepted)
                return status;
            if (route != Route.Direct)
            {
                foreach (var part in data)
                    _queue.AppendCopy(part.Span, CopyChunkSize());
            }
        }

        if (route == Route.Direct)
            return SendDirect(data) ? SendStatus.Accepted : SendStatus.Closed;
        AfterAppend(route);
        return SendStatus.Accepted;
    }

    /// <summary>
    /// Sends a <see cref="SendWriter"/>'s message as one unit: its chunks are linked into the queue
    /// (or sent from) as they are, except a small message into a busy queue, which is copied into
    /// the queue's current chunk. The writer keeps the chunks the queue did not take.
    /// <paramref name="pastLimit"/>: admitted past the send limit too, though never ahead of parked senders.
    /// </summary>
    public SendStatus SendWritten(SendWriter writer, bool pastLimit = false)
    {
        var length = writer.WrittenCount;
        Route route;
        lock (_sendLock)
        {
            var status = AdmitLocked(length, null, SendMode.Direct, out route, out _, pastLimit);
            if (status != SendStatus.Accepted)
                return status;
            if (route != Route.Direct)
                AppendWritten(writer);
        }

        if (route == Route.Direct)
            return SendDirect(writer) ? SendStatus.Accepted : SendStatus.Closed;
        AfterAppend(route);
        return SendStatus.Accepted;
    }

    private SendStatus EmptySend(out long watermark)
    {
        lock (_sendLock)
        {
            watermark = _queuedTotal;
            return Volatile.Read(ref _state) == StateOpen ? SendStatus.Accepted : SendStatus.Closed;
        }
    }

    /// <summary>
    /// Whether every byte up to <paramref name="watermark"/> has been (or may still be) handed to the
    /// kernel: true with no <paramref name="waiter"/> when they have, true with a waiter to wait on
    /// when they still may be, false when the connection closed before they were.
    /// </summary>
    public bool TryWaitForFlush(long watermark, bool synchronous, out SendWaiter? waiter)
    {
        waiter = null;
        lock (_sendLock)
        {
            if (_sentTotal >= watermark)
                return true;
            if (Volatile.Read(ref _state) >= StateClosed)
                return false;
            waiter = SendWaiter.ForFlush(watermark, synchronous);
            (_flushWaiters ??= new WaiterQueue(_sendLock)).Park(waiter);
            return true;
        }
    }

    /// <summary>Bytes handed to the kernel since the connection started (the watermark of <see cref="TryWaitForFlush"/>).</summary>
    public long SentTotal
    {
        get
        {
            lock (_sendLock)
                return _sentTotal;
        }
    }

    // --- Admission (under the send lock) ---

    /// <summary>
    /// Checks the state and the limit, accounts <paramref name="length"/> bytes and decides their
    /// <paramref name="route"/>; taking the flusher role when the queue is idle.
    /// </summary>
    private SendStatus AdmitLocked(long length, SendWaiter? waiter, SendMode mode, out Route route, out long watermark, bool pastLimit = false)
    {
        route = Route.Queued;
        watermark = 0;
        if (Volatile.Read(ref _state) != StateOpen)
            return SendStatus.Closed;
        if (!HasRoomLocked(length) && !(pastLimit && _waiters?.HasWaiting() != true))
        {
            if (waiter is null)
                return SendStatus.Full;
            (_waiters ??= new WaiterQueue(_sendLock)).Park(waiter);
            return SendStatus.Waiting;
        }

        AccountQueuedLocked(length);
        watermark = _queuedTotal;
        if (CallbackScope.IsAnswering(this))
            _answered = true;
        if (_flushing)
        {
            // Gathered bytes go out at the gather limit, and also when a send comes from outside
            // the gathering hook: that send goes out at once, and takes the gathered bytes along.
            if (_corked && (_queue.PendingBytes + length >= GatherLimit || !CallbackScope.IsGathering(this)))
            {
                _corked = false;
                route = Route.FlushNow;
            }

            return SendStatus.Accepted;
        }

        // The queue is idle: become the flusher.
        if (!TryAddReference())
        {
            AccountQueuedLocked(-length);
            return SendStatus.Closed;
        }

        _flushing = true;
        _emptyRaised = false;
        if (mode == SendMode.Scheduled)
        {
            route = Route.Scheduled;
        }
        else if (length < GatherLimit && CallbackScope.ShouldGather(this))
        {
            _corked = true;
            route = Route.Corked;
        }
        else
        {
            route = Route.Direct;
        }

        return SendStatus.Accepted;
    }

    private void AfterAppend(Route route)
    {
        switch (route)
        {
            case Route.Corked:
                CallbackScope.MarkCorked();
                break;
            case Route.FlushNow:
                FlushLoop();
                break;
            case Route.Scheduled:
                ScheduleFlush();
                break;
        }
    }

    /// <summary>The outermost hook of this connection returned: send what it gathered.</summary>
    public void Uncork()
    {
        lock (_sendLock)
        {
            if (!_corked)
                return; // already flushed at the gather limit
            _corked = false;
        }

        FlushLoop();
    }

    private bool HasRoomLocked(long length)
    {
        // Parked senders go first; a message larger than the limit may go alone into an empty queue.
        if (_waiters?.HasWaiting() == true)
            return false;
        var limit = _owner.EffectiveSendLimit;
        return _bytesPending == 0 || _bytesPending + length <= limit;
    }

    /// <summary>Parked senders (cancelled ones not yet unlinked included), for tests.</summary>
    internal int ParkedSenders
    {
        get
        {
            lock (_sendLock)
                return _waiters?.Length ?? 0;
        }
    }

    /// <summary>Receiving waits while this much is queued (see <see cref="ShouldPark"/>).</summary>
    private void PauseForSendBacklog(long highWater)
    {
        var paused = false;
        lock (_sendLock)
        {
            // Under the send lock, as the resume in CompleteSent: the pause cannot miss the drain.
            if (_bytesPending >= highWater && (Volatile.Read(ref _pause) & PausedBySendBacklog) == 0)
            {
                SetPause(PausedBySendBacklog);
                paused = true;
            }
        }

        if (paused)
        {
            StartStallTimer();
            ReportSendPaused();
        }
    }

    // --- Appending (under the send lock) ---

    /// <summary>
    /// Queues bytes. A shared (multicast) payload is queued by reference, except a small one
    /// into a queue that is already deep: there, copies coalesce into large chunks that go out in
    /// few sends, while references would cost a segment record each (as much memory as the bytes)
    /// and one gathered send per eight of them.
    /// </summary>
    private void Append(ReadOnlySpan<byte> data, SharedBuffer? shared)
    {
        if (shared is not null && (shared.Length > SmallSharedPayload || _bytesPending < DeepQueue))
            _queue.AppendShared(shared);
        else
            _queue.AppendCopy(data, CopyChunkSize());
    }

    /// <summary>A writer's message: a small one is copied into the queue's chunk, a larger one linked as it is.</summary>
    private void AppendWritten(SendWriter writer)
    {
        if (writer.WrittenCount <= SendWriter.SmallMessage && writer.ChunkCount == 1)
        {
            var chunk = writer.Chunk(0, out var count);
            _queue.AppendCopy(new ReadOnlySpan<byte>(chunk, 0, count), CopyChunkSize());
            return;
        }

        for (var i = 0; i < writer.ChunkCount; i++)
        {
            var chunk = writer.Chunk(i, out var count);
            if (count == 0)
                continue;
            _queue.AppendOwned(chunk, count);
            writer.GiveUp(i);
        }
    }

    /// <summary>Shared payloads up to this size are copied into a deep queue (see <see cref="Append"/>).</summary>
    internal const int SmallSharedPayload = 256;

    /// <summary>Queue depth from which small shared payloads are copied (see <see cref="Append"/>).</summary>
    private const int DeepQueue = 64 * 1024;

    /// <summary>
    /// Size of a new copy chunk: OptionSendBufferSize while the queue is short, larger (powers of
    /// two, up to 256 KiB) as it gets deep, so a deep queue is a few large pooled arrays rather than
    /// hundreds of small ones cycling through the shared pool.
    /// </summary>
    private int CopyChunkSize()
    {
        const int MaxChunk = 256 * 1024;
        var size = _owner.OptionSendBufferSize;
        var deep = (int)Math.Min(_bytesPending / 8, MaxChunk);
        if (deep <= size)
            return size;
        var power = size;
        while (power < deep)
            power <<= 1;
        return Math.Min(power, MaxChunk);
    }

    private void AccountQueuedLocked(long length)
    {
        _queuedTotal += length;
        Volatile.Write(ref _bytesPending, _bytesPending + length);
        _owner.CountPending(length);
    }

    private void AccountUnsent(long delta)
    {
        lock (_sendLock)
            Volatile.Write(ref _bytesPending, _bytesPending + delta);
        _owner.CountPending(delta);
    }
}
