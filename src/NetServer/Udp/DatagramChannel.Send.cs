
namespace NetServer.Udp;

/// <summary>What a datagram send did.</summary>
internal enum DatagramSendStatus
{
    /// <summary>The kernel took the datagram before the call returned.</summary>
    Sent,

    /// <summary>The datagram is queued (or its send is pending); it goes out unless the socket closes first.</summary>
    Queued,

    /// <summary>The send limit refused it; nothing was queued.</summary>
    Full,

    /// <summary>The caller is parked in the room waiter it passed in.</summary>
    Waiting,

    /// <summary>The send failed at once; OnError has reported why.</summary>
    Failed,

    /// <summary>The socket is closed.</summary>
    Closed,
}

/// <summary>
/// The send side. Any thread may send; a send never fails because another is in flight. When
/// nothing is queued, the sender's own thread hands its datagram to the kernel (with
/// <c>OptionDedicatedThread</c>, by a blocking call straight from the caller's bytes). Otherwise the
/// datagram is copied into the bounded queue and the one active <em>flusher</em> (the thread that
/// found the queue idle, the completion of its pending send, or, after 64 datagrams in a row, a
/// thread-pool work item it hands the role to) sends it in turn. OnSent and the
/// OnError of a failed datagram run only on the flusher, so a send made from them only queues:
/// there is no recursion. A datagram that fails (a bad endpoint, too large, unreachable) is
/// reported and dropped; the next one goes on.
/// </summary>
internal sealed partial class DatagramChannel
{
    /// <summary>Datagrams one run of the flusher sends in a row before it hands the role to a thread-pool work item (so no thread, the dedicated receive thread included, is kept sending for good).</summary>
    private const int FlushBurst = 64;

    private static readonly Action<object?> s_flushLoop = static state => ((DatagramChannel)state!).FlushLoop();

    private readonly object _sendLock = new();
    private readonly DatagramQueue _queue;
    private readonly WaiterQueue _waiters; // senders parked for room, in arrival order
    private bool _flushing;
    private long _bytesPending;
    private int _datagramsPending;
    private long _bytesSending;

    /// <summary>Bytes accepted and not yet handed to the kernel (queued and in flight).</summary>
    public long BytesPending => Volatile.Read(ref _bytesPending);

    /// <summary>Bytes inside a pending socket send right now.</summary>
    public long BytesSending => Volatile.Read(ref _bytesSending);

    /// <summary>Waiter records the parked-sender queue holds (tests: a sender that gave up leaves none behind).</summary>
    internal int ParkedLength
    {
        get
        {
            lock (_sendLock)
                return _waiters.Length;
        }
    }

    /// <summary>
    /// Sends <paramref name="data"/> to <paramref name="target"/> as one datagram, or queues it, or
    /// refuses it. With a <paramref name="roomWaiter"/>, a refusal parks the waiter instead. A
    /// <paramref name="completion"/> is finished with the outcome once a queued datagram is done.
    /// </summary>
    public DatagramSendStatus Send(EndPoint target, ReadOnlySpan<byte> data, SendWaiter? roomWaiter, SendWaiter? completion)
    {
        lock (_sendLock)
        {
            if (!IsOpen)
                return DatagramSendStatus.Closed;
            if (!HasRoomLocked(data.Length))
            {
                if (roomWaiter is null)
                    return DatagramSendStatus.Full;
                _waiters.Park(roomWaiter);
                return DatagramSendStatus.Waiting;
            }

            AccountLocked(data.Length, 1);
            if (_flushing)
            {
                _queue.Enqueue(_queue.Copy(target, data, completion));
                return DatagramSendStatus.Queued;
            }

            // The queue is idle: become the flusher.
            if (!TryAddReference())
            {
                AccountLocked(-data.Length, -1);
                return DatagramSendStatus.Closed;
            }

            _flushing = true;
        }

        if (_registration is not null)
            return SendOnLoop(target, data, completion);

        if (_dedicatedThread)
        {
            // Blocking calls: the kernel takes the caller's bytes before the call returns.
            var taken = Settle(target, data.Length, _transport.Send(data, target), completion);
            FlushLoop();
            return taken ? DatagramSendStatus.Sent : DatagramSendStatus.Failed;
        }

        // The asynchronous call takes memory that may outlive this call (a send the kernel cannot take
        // at once completes later), so the direct send goes from a pooled copy.
        var datagram = _queue.Copy(target, data, completion);
        var send = _transport.SendAsync(datagram.Array, datagram.Count, target);
        if (!send.IsCompleted)
        {
            _ = AwaitSendAsync(send, datagram);
            return DatagramSendStatus.Queued;
        }

        var sent = Done(datagram, send.Result); // completed: Result does not block
        FlushLoop();
        return sent ? DatagramSendStatus.Sent : DatagramSendStatus.Failed;
    }

    private bool HasRoomLocked(int length)
    {
        // Parked senders go first.
        if (_waiters.HasWaiting())
            return false;
        var limit = _owner.EffectiveSendLimit;
        var cost = _bytesPending + ((long)_datagramsPending * DatagramQueue.Overhead);
        return _datagramsPending == 0 || cost + length + DatagramQueue.Overhead <= limit;
    }

    private void AccountLocked(long bytes, int datagrams)
    {
        Volatile.Write(ref _bytesPending, _bytesPending + bytes);
        _datagramsPending += datagrams;
    }

    // --- Flusher ---

    /// <summary>
    /// Runs while this thread holds the flusher role: sends queued datagrams in order and gives the
    /// role up when the queue is empty (or hands it to the completion of a pending send).
    /// </summary>
    private void FlushLoop()
    {
        var burst = 0;
        while (TakeNext(out var datagram))
        {
            if (_dedicatedThread)
            {
                Done(datagram, _transport.Send(datagram.Array.AsSpan(0, datagram.Count), datagram.Target));
            }
            else
            {
                var send = _transport.SendAsync(datagram.Array, datagram.Count, datagram.Target);
                if (!send.IsCompleted)
                {
                    _ = AwaitSendAsync(send, datagram);
                    return;
                }

                Done(datagram, send.Result); // completed: Result does not block
            }

            if (++burst == FlushBurst)
            {
                // The kernel rarely makes a UDP sender wait (never on loopback), so senders that
                // refill the queue as fast as it drains would keep this thread for good: on a small
                // machine a pool thread starves the pool's other work, this socket's receives among
                // it, and the dedicated receive thread (which took the role by answering a datagram)
                // would never receive again. The flusher role moves on to a work item at the back of
                // the pool's queue instead.
                ThreadPoolScheduler.Schedule(s_flushLoop, this);
                return;
            }
        }
    }

    /// <summary>The next datagram to send; or, with none (or the socket closed), gives up the flusher role and returns false.</summary>
    private bool TakeNext(out QueuedDatagram datagram)
    {
        lock (_sendLock)
        {
            if (IsOpen && _queue.TryDequeue(out datagram))
                return true;
            _flushing = false;
            _queue.TrimIfEmpty();
        }

        datagram = default;
        ReleaseReference(); // Finish drops whatever a close left queued
        return false;
    }

    /// <summary>A send the kernel could not take at once: its completion continues the flusher's loop.</summary>
    private async Task AwaitSendAsync(ValueTask<SocketResult> send, QueuedDatagram datagram)
    {
        Volatile.Write(ref _bytesSending, datagram.Count);
        var result = await send.ConfigureAwait(false);
        Volatile.Write(ref _bytesSending, 0);
        Done(datagram, result);
        FlushLoop();
    }

    /// <summary>Settles a queued datagram the flusher tried to send (see <see cref="Settle"/>) and frees its copy.</summary>
    private bool Done(QueuedDatagram datagram, SocketResult result)
    {
        _queue.Recycle(datagram);
        return Settle(datagram.Target, datagram.Count, result, datagram.Completion);
    }

    /// <summary>
    /// Settles a datagram the flusher tried to send: its room, statistics, OnSent or OnError, the
    /// waiting blocking sender. Returns whether the kernel took it.
    /// </summary>
    private bool Settle(EndPoint target, int count, SocketResult result, SendWaiter? completion)
    {
        lock (_sendLock)
        {
            AccountLocked(-count, -1);
            ReleaseRoomWaitersLocked();
        }

        var sent = result.IsSuccess;
        if (sent)
        {
            _owner.CountSent(result.BytesTransferred);
            RaiseSent(target, result.BytesTransferred);
        }
        else if (IsOpen && !IsSocketGone(result.Error))
        {
            RaiseError(result.Error);
        }

        if (completion is not null && completion.TryClaim())
            completion.Finish(sent);
        return sent;
    }

    /// <summary>Queues the datagrams of parked senders that now fit, in arrival order.</summary>
    private void ReleaseRoomWaitersLocked()
    {
        while (_waiters.Peek() is { } waiter)
        {
            if (_datagramsPending != 0 && _bytesPending + ((long)_datagramsPending * DatagramQueue.Overhead) + waiter.Length + DatagramQueue.Overhead > _owner.EffectiveSendLimit)
                return;
            if (!_waiters.TryTake(waiter))
                continue; // cancelled meanwhile
            AccountLocked(waiter.Length, 1);
            _queue.Enqueue(_queue.Copy(waiter.Target!, waiter.Data.Span, completion: null));
            waiter.Finish(true);
        }
    }

    private void FailRoomWaiters()
    {
        lock (_sendLock)
            _waiters.FailAll();
    }

    /// <summary>Drops what a close left queued (the flusher is gone): copies back to the pool, blocking senders told.</summary>
    private void DropQueue()
    {
        lock (_sendLock)
        {
            while (_queue.TryDequeue(out var datagram))
                DropLocked(datagram);

            _queue.TrimIfEmpty();
        }

        FailRoomWaiters();
    }

    /// <summary>Drops a datagram that will not be sent: its copy back to the pool, its room freed, a blocking sender told.</summary>
    private void DropLocked(in QueuedDatagram datagram)
    {
        _queue.Recycle(datagram);
        AccountLocked(-datagram.Count, -1);
        if (datagram.Completion is { } completion && completion.TryClaim())
            completion.Finish(false);
    }

    private void RaiseSent(EndPoint target, int sent)
    {
        CallbackScope.Enter();
        try
        {
            _owner.InvokeSent(target, sent);
        }
        catch (Exception e)
        {
            _owner.ReportHandlerFailure(e);
        }
        finally
        {
            CallbackScope.Exit();
        }
    }
}
