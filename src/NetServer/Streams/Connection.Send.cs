using System;
using System.Collections.Generic;
using System.Net.Sockets;
using System.Threading;
using NetServer.Buffers;
using NetServer.Internal;
using NetServer.Transport;

namespace NetServer.Streams;

/// <summary>How a send that finds the queue idle gets its bytes to the kernel.</summary>
internal enum SendMode
{
    /// <summary>At once, from the caller's thread, without copying (the default).</summary>
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
/// non-blocking send, without copying them. Otherwise the bytes are appended to the queue and the
/// one active <em>flusher</em> (the thread that found the queue idle, or the completion of its async
/// send) gathers whatever has accumulated into each send. Hooks of the send side (OnSent, OnEmpty)
/// run only on the flusher, so a send made from those hooks only queues: there is no recursion.
/// </summary>
internal sealed partial class Connection
{
    private static readonly Action<object?> s_asyncSendCompleted = static state => ((Connection)state!).OnAsyncSendCompleted();

    [ThreadStatic]
    private static List<ArraySegment<byte>>? t_gather;

    private readonly object _sendLock = new();
    private readonly SendQueue _queue;
    private Queue<SendWaiter>? _waiters;      // parked senders, in arrival order
    private Queue<SendWaiter>? _flushWaiters; // callers waiting for a watermark, in watermark order
    private bool _flushing;
    private bool _emptyRaised;
    private long _bytesPending;
    private long _bytesSending;
    private long _queuedTotal;
    private long _sentTotal;
    private SocketAwaitableEventArgs? _asyncSender;

    /// <summary>Bytes accepted and not yet handed to the kernel (queued and in flight).</summary>
    public long BytesPending => Volatile.Read(ref _bytesPending);

    /// <summary>Bytes inside an asynchronous socket send right now.</summary>
    public long BytesSending => Volatile.Read(ref _bytesSending);

    [ThreadStatic]
    private static byte[]? t_staging;

    private static List<ArraySegment<byte>> Gather => t_gather ??= new List<ArraySegment<byte>>(SendQueue.MaxGather);

    private static byte[] Staging => t_staging ??= new byte[SendQueue.StagingSize];

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
    public SendStatus Send(ReadOnlySpan<byte> data, SharedBuffer? shared, SendWaiter? waiter, SendMode mode, out long watermark)
    {
        watermark = 0;
        lock (_sendLock)
        {
            if (Volatile.Read(ref _state) != StateOpen)
                return SendStatus.Closed;
            if (data.IsEmpty)
            {
                watermark = _queuedTotal;
                return SendStatus.Accepted;
            }

            if (!HasRoomLocked(data.Length))
            {
                if (waiter is null)
                    return SendStatus.Full;
                (_waiters ??= new Queue<SendWaiter>()).Enqueue(waiter);
                return SendStatus.Waiting;
            }

            AccountQueuedLocked(data.Length);
            watermark = _queuedTotal;
            if (_flushing)
            {
                Append(data, shared);
                return SendStatus.Accepted;
            }

            // The queue is idle: become the flusher.
            if (!TryAddReference())
            {
                AccountUnsent(-data.Length);
                return SendStatus.Closed;
            }

            _flushing = true;
            _emptyRaised = false;
            if (mode == SendMode.Scheduled)
            {
                Append(data, shared);
                ScheduleFlush();
                return SendStatus.Accepted;
            }
        }

        return SendDirect(data, shared) ? SendStatus.Accepted : SendStatus.Closed;
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
            (_flushWaiters ??= new Queue<SendWaiter>()).Enqueue(waiter);
            return true;
        }
    }

    private bool HasRoomLocked(int length)
    {
        // Parked senders go first; a message larger than the limit may go alone into an empty queue.
        if (_waiters is { Count: > 0 } && HasParkedSender())
            return false;
        var limit = _owner.EffectiveSendLimit;
        return _bytesPending == 0 || _bytesPending + length <= limit;
    }

    private bool HasParkedSender()
    {
        foreach (var waiter in _waiters!)
        {
            if (!waiter.IsClaimed)
                return true;
        }

        return false;
    }

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


    private void AccountQueuedLocked(int length)
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

    // --- Flusher ---

    /// <summary>
    /// The flusher's first move: a non-blocking send straight from the caller's bytes. Returns false
    /// if the socket failed before taking any of them.
    /// </summary>
    private bool SendDirect(ReadOnlySpan<byte> data, SharedBuffer? shared)
    {
        if (_layer is not null)
        {
            // A stream write may outlive the caller's span: the bytes go in flight as a copy (or by reference when shared).
            if (shared is not null)
                _queue.AddInflightShared(shared, 0);
            else
                _queue.AddInflightCopy(data);
            FlushLoop();
            return true;
        }

        var sent = SocketIO.TrySend(_socket, data, out var error);
        if (error is not (SocketError.Success or SocketError.WouldBlock))
        {
            AccountUnsent(-data.Length);
            StopFlushing(error);
            return false;
        }

        if (sent < data.Length)
        {
            // The kernel buffer is full: keep the rest (by reference when shared) for an async send.
            if (shared is not null)
                _queue.AddInflightShared(shared, sent);
            else
                _queue.AddInflightCopy(data.Slice(sent));
        }

        if (sent > 0)
            CompleteSent(sent);
        FlushLoop();
        return true;
    }

    /// <summary>
    /// Runs while this thread holds the flusher role: sends what is in flight, takes more from the
    /// queue, raises OnSent/OnEmpty, and gives the role up when the queue is empty (or hands it to
    /// the completion of an async send when the kernel buffer is full).
    /// </summary>
    private void FlushLoop()
    {
        if (_stream is { } stream)
        {
            StreamFlushLoop(stream);
            return;
        }

        while (true)
        {
            if (Volatile.Read(ref _state) >= StateClosed)
            {
                StopFlushing(SocketError.OperationAborted);
                return;
            }

            if (!_queue.HasInflight && !TakeMore())
                return;

            int total, sent;
            SocketError error;
            if (_queue.InflightSegments == 1)
            {
                ref var first = ref _queue.FirstInflight;
                total = first.Count;
                sent = SocketIO.TrySend(_socket, first.Array, first.Offset, first.Count, out error);
            }
            else if (_queue.InflightSegments > SendQueue.MaxGather && _queue.CanStage)
            {
                // Many small segments (multicast messages): copy them into one staging buffer of
                // this thread so that one send takes them all, instead of one send per eight.
                var staging = Staging;
                total = _queue.Stage(staging);
                sent = SocketIO.TrySend(_socket, staging, 0, total, out error);
            }
            else
            {
                var gather = Gather;
                total = _queue.Gather(gather);
                sent = SocketIO.TrySend(_socket, gather, out error);
                gather.Clear();
            }

            if (error is not (SocketError.Success or SocketError.WouldBlock))
            {
                StopFlushing(error);
                return;
            }

            if (sent > 0)
            {
                _queue.ConsumeInflight(sent);
                CompleteSent(sent); // OnSent runs here and may close the connection
            }

            if (sent < total)
            {
                if (Volatile.Read(ref _state) >= StateClosed)
                {
                    StopFlushing(SocketError.OperationAborted);
                    return;
                }

                if (!SendInflightAsync())
                    return; // The async send's completion continues the loop.
            }
        }
    }

    /// <summary>
    /// Called with nothing in flight. Moves the queue in flight and returns true, or, when the queue
    /// is empty, raises OnEmpty once and gives up the flusher role (returning false).
    /// </summary>
    private bool TakeMore()
    {
        bool raiseEmpty;
        SocketAwaitableEventArgs? sender = null;
        lock (_sendLock)
        {
            if (_queue.HasPending)
            {
                _queue.MovePendingToInflight();
                _emptyRaised = false;
                return true;
            }

            raiseEmpty = !_emptyRaised && Volatile.Read(ref _state) == StateOpen;
            if (!raiseEmpty)
            {
                // Take the async sender before giving up the role: the next flusher must not find it.
                sender = _asyncSender;
                _asyncSender = null;
                _flushing = false;
                _emptyRaised = false;
                _queue.ReleaseSpares(); // an idle connection holds no send memory
            }
        }

        if (raiseEmpty)
        {
            _emptyRaised = true;
            RaiseEmpty();

            // OnEmpty may have queued more; look again before giving up the role.
            return TakeMore();
        }

        if (sender is not null)
            SocketArgsPool.Return(sender);
        if (Volatile.Read(ref _state) == StateClosing)
            QueueDrained();
        ReleaseReference();
        return false;
    }

    /// <summary>
    /// Starts an async send of what is in flight. Returns true if it completed at once (the loop goes
    /// on), false if it is pending (its completion resumes the loop on an I/O thread).
    /// </summary>
    private bool SendInflightAsync()
    {
        var sender = _asyncSender ??= SocketArgsPool.Rent();
        bool pending;
        SocketResult result;
        if (_queue.InflightSegments == 1)
        {
            ref var first = ref _queue.FirstInflight;
            Volatile.Write(ref _bytesSending, first.Count);
            pending = sender.StartSend(_socket, first.Array, first.Offset, first.Count, s_asyncSendCompleted, this, out result);
        }
        else
        {
            var gather = Gather;
            Volatile.Write(ref _bytesSending, _queue.Gather(gather));
            pending = sender.StartSend(_socket, gather, s_asyncSendCompleted, this, out result);
            gather.Clear();
        }

        return !pending && AsyncSendDone(result);
    }

    private void OnAsyncSendCompleted()
    {
        if (AsyncSendDone(_asyncSender!.TakeResult()))
            FlushLoop();
    }

    /// <summary>Accounts a finished async send; returns false if it failed (the role is already given up).</summary>
    private bool AsyncSendDone(SocketResult result)
    {
        Volatile.Write(ref _bytesSending, 0);
        if (!result.IsSuccess)
        {
            StopFlushing(result.Error);
            return false;
        }

        if (result.BytesTransferred > 0)
        {
            _queue.ConsumeInflight(result.BytesTransferred);
            CompleteSent(result.BytesTransferred);
        }

        return true;
    }

    /// <summary>Bookkeeping after the kernel took <paramref name="sent"/> bytes; wakes waiters; raises OnSent.</summary>
    private void CompleteSent(int sent)
    {
        long pending;
        lock (_sendLock)
        {
            _sentTotal += sent;
            _queue.RecycleFinished();
            pending = _bytesPending - sent;
            Volatile.Write(ref _bytesPending, pending);
            if (_waiters is { Count: > 0 } || _flushWaiters is { Count: > 0 })
                ReleaseWaitersLocked();
            pending = _bytesPending;
        }

        _owner.CountSent(sent);
        _owner.CountPending(-sent);
        RaiseSent(sent, pending);
    }

    /// <summary>Releases flush waiters that are satisfied, and parked senders that now fit, in arrival order.</summary>
    private void ReleaseWaitersLocked()
    {
        var flushWaiters = _flushWaiters;
        while (flushWaiters is { Count: > 0 } && flushWaiters.Peek().Watermark <= _sentTotal)
        {
            var waiter = flushWaiters.Dequeue();
            if (waiter.TryClaim())
                waiter.Finish(true);
        }

        var waiters = _waiters;
        while (waiters is { Count: > 0 })
        {
            var waiter = waiters.Peek();
            if (waiter.IsClaimed)
            {
                waiters.Dequeue(); // cancelled while parked
                continue;
            }

            // Wake a parked sender only once an eighth of the limit is free besides its own bytes
            // (or the queue is empty): under sustained pressure each wake-up is then followed by
            // many sends rather than one, while the memory moving per cycle stays small enough for
            // the pooled chunks to be reused instead of reallocated.
            var limit = _owner.EffectiveSendLimit;
            if (_bytesPending != 0 && _bytesPending + waiter.Length > limit - (limit / 8))
                return;
            waiters.Dequeue();
            if (!waiter.TryClaim())
                continue;
            AccountQueuedLocked(waiter.Length);
            Append(waiter.Data.Span, waiter.Shared);
            waiter.Watermark = _queuedTotal;
            waiter.Finish(true);
        }
    }

    /// <summary>Fails parked senders (a graceful close refuses new bytes) and reports whether the queue is idle and empty.</summary>
    private bool FailRoomWaitersAndCheckDrained()
    {
        lock (_sendLock)
        {
            Fail(_waiters);
            return !_flushing && !_queue.HasPending && !_queue.HasInflight;
        }
    }

    /// <summary>Whether sends are queued or in flight.</summary>
    private bool HasQueuedBytes()
    {
        lock (_sendLock)
            return _queue.HasPending || _queue.HasInflight;
    }

    private void FailAllWaiters()
    {
        lock (_sendLock)
        {
            Fail(_waiters);
            Fail(_flushWaiters);
        }
    }

    private static void Fail(Queue<SendWaiter>? waiters)
    {
        while (waiters is { Count: > 0 })
        {
            var waiter = waiters.Dequeue();
            if (waiter.TryClaim())
                waiter.Finish(false);
        }
    }

    /// <summary>Gives up the flusher role after a send error or a close; the queue is released when the connection finishes.</summary>
    private void StopFlushing(SocketError error)
    {
        // Close while still the flusher, so no other sender starts flushing on the failed socket.
        Volatile.Write(ref _bytesSending, 0);
        Fail(error);
        lock (_sendLock)
            _flushing = false;
        ReleaseReference();
    }

    /// <summary>Returns the async sender of a finished connection (no flusher is left to use it).</summary>
    private void ReturnAsyncSender()
    {
        var sender = _asyncSender;
        if (sender is not null)
        {
            _asyncSender = null;
            SocketArgsPool.Return(sender);
        }
    }

    private void RaiseSent(long sent, long pending)
    {
        CallbackScope.Enter();
        try
        {
            _owner.InvokeSent(sent, pending);
        }
        catch (Exception e)
        {
            HandlerFailed(e);
        }
        finally
        {
            CallbackScope.Exit();
        }
    }

    private void RaiseEmpty()
    {
        CallbackScope.Enter();
        try
        {
            _owner.InvokeEmpty();
        }
        catch (Exception e)
        {
            HandlerFailed(e);
        }
        finally
        {
            CallbackScope.Exit();
        }
    }
}
