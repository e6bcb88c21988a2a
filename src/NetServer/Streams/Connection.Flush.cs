using System.Buffers;
using System.Collections.Generic;
using System.Runtime.InteropServices;

namespace NetServer.Streams;

/// <summary>
/// The flusher: the one thread at a time that hands queued bytes to the kernel (or to the secure
/// layer), raises OnSent and OnEmpty, releases parked senders as room appears, and gives the role
/// up when the queue is empty (or hands it to the completion of an async send when the kernel
/// buffer is full).
/// </summary>
internal sealed partial class Connection
{
    private static readonly Action<object?> s_asyncSendCompleted = static state => ((Connection)state!).OnAsyncSendCompleted();

    [ThreadStatic]
    private static List<ArraySegment<byte>>? t_gather;

    [ThreadStatic]
    private static byte[]? t_staging;

    private SocketAwaitableEventArgs? _asyncSender;

    private static List<ArraySegment<byte>> Gather => t_gather ??= new List<ArraySegment<byte>>(SendQueue.MaxGather);

    private static byte[] Staging => t_staging ??= new byte[SendQueue.StagingSize];


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
    /// The flusher's first move for a multi-part send: one gathered non-blocking send of the parts
    /// (array-backed, up to <see cref="SendQueue.MaxGather"/> of them), the unsent rest copied in
    /// flight. Returns false if the socket failed before taking any of them.
    /// </summary>
    private bool SendDirect(in ReadOnlySequence<byte> data)
    {
        var length = (int)Math.Min(data.Length, int.MaxValue);
        var sent = 0;
        if (_layer is null && TryGatherParts(data, out var gather))
        {
            sent = SocketIO.TrySend(_socket, gather, out var error);
            gather.Clear();
            if (error is not (SocketError.Success or SocketError.WouldBlock))
            {
                AccountUnsent(-length);
                StopFlushing(error);
                return false;
            }
        }

        if (sent < length)
        {
            // The kernel buffer is full (or the parts cannot be gathered, or a layer writes them):
            // the rest goes in flight as one pooled copy.
            _queue.AddInflightCopy(data.Slice(sent));
        }

        if (sent > 0)
            CompleteSent(sent);
        FlushLoop();
        return true;
    }

    /// <summary>The parts of <paramref name="data"/> as array segments, if they are arrays and few enough to gather.</summary>
    private static bool TryGatherParts(in ReadOnlySequence<byte> data, out List<ArraySegment<byte>> gather)
    {
        gather = Gather;
        gather.Clear();
        foreach (var part in data)
        {
            if (part.IsEmpty)
                continue;
            if (gather.Count == SendQueue.MaxGather || !MemoryMarshal.TryGetArray(part, out var segment))
            {
                gather.Clear();
                return false;
            }

            gather.Add(segment);
        }

        return gather.Count != 0;
    }

    /// <summary>
    /// The flusher's first move for a writer's message: its chunks go in flight as they are (no
    /// copy; the queue returns them to the pool once sent) and the loop sends them.
    /// </summary>
    private bool SendDirect(SendWriter writer)
    {
        for (var i = 0; i < writer.ChunkCount; i++)
        {
            var chunk = writer.Chunk(i, out var count);
            if (count == 0)
                continue;
            _queue.AddInflightOwned(chunk, count);
            writer.GiveUp(i);
        }

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

        var rounds = 0;
        while (HasMoreToFlush())
        {
            if (YieldFlush(++rounds))
                return; // the loop's queue continues it
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

                if (_poll is not null)
                {
                    if (WaitWritable(total - sent))
                        return; // The loop continues the flush once the socket can take more.
                    continue;
                }

                if (!SendInflightAsync())
                    return; // The async send's completion continues the loop.
            }
        }
    }

    /// <summary>
    /// At the top of each round of a flush loop: false once the flusher role is given up (the
    /// connection closed, or the queue is empty), true with bytes in flight to send.
    /// </summary>
    private bool HasMoreToFlush()
    {
        if (Volatile.Read(ref _state) >= StateClosed)
        {
            StopFlushing(SocketError.OperationAborted);
            return false;
        }

        return _queue.HasInflight || TakeMore();
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
        var resume = false;
        lock (_sendLock)
        {
            _sentTotal += sent;
            _queue.RecycleFinished();
            pending = _bytesPending - sent;
            Volatile.Write(ref _bytesPending, pending);
            if (_waiters is { Length: > 0 } || _flushWaiters is { Length: > 0 })
                ReleaseWaitersLocked();
            pending = _bytesPending;

            // Receiving held for the send backlog resumes once it drained below the low-water mark.
            if ((Volatile.Read(ref _pause) & PausedBySendBacklog) != 0 && pending <= _owner.EffectiveLowWaterMark)
                resume = ClearPause(PausedBySendBacklog) == 0;
        }

        _owner.CountSent(sent);
        _owner.CountPending(-sent);
        NoteActivity();
        NoteSendProgress();
        if (resume)
            ResumeLoopLater();
        RaiseSent(sent, pending);
    }

    /// <summary>Releases flush waiters that are satisfied, and parked senders that now fit, in arrival order.</summary>
    private void ReleaseWaitersLocked()
    {
        while (_flushWaiters?.Peek() is { } flushed && flushed.Watermark <= _sentTotal)
        {
            if (_flushWaiters.TryTake(flushed))
                flushed.Finish(true);
        }

        while (_waiters?.Peek() is { } waiter)
        {
            // Wake a parked sender only once an eighth of the limit is free besides its own bytes
            // (or the queue is empty): under sustained pressure each wake-up is then followed by
            // many sends rather than one, while the memory moving per cycle stays small enough for
            // the pooled chunks to be reused instead of reallocated.
            var limit = _owner.EffectiveSendLimit;
            if (_bytesPending != 0 && _bytesPending + waiter.Length > limit - (limit / 8))
                return;
            if (!_waiters.TryTake(waiter))
                continue; // its cancellation won
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
            _waiters?.FailAll();
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
            _waiters?.FailAll();
            _flushWaiters?.FailAll();
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
}
