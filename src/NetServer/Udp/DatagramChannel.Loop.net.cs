using System.Runtime.InteropServices;
using NetServer.Service;

namespace NetServer.Udp;

/// <summary>
/// The socket on a loop of an <see cref="IoService"/> (Linux): the loop's poller reports it
/// readable (edge-triggered), the receiver takes what waits in batches of <c>recvmmsg</c> until one
/// comes back short, and the hooks run on the loop thread (or, with hooks on the thread pool, the
/// receiver runs there). A send made by the hooks of a received batch waits for the end of the batch,
/// and what they sent leaves in one <c>sendmmsg</c> (an echo's answers, together); a send from
/// anywhere else finds the queue idle and goes out at once from its own thread, as in the default
/// mode, or is queued behind the flusher. The flusher drains the queue in batches of
/// <c>sendmmsg</c>; a send the kernel cannot take (EAGAIN) waits for the poller to report the
/// socket writable.
/// </summary>
internal sealed partial class DatagramChannel : IPollOwner, ILoopWork
{
    /// <summary>Bytes of receive buffers one socket holds for its batches (a batch has at least one datagram, at most <see cref="MaxBatch"/>).</summary>
    private const int ReceiveBatchBytes = 512 * 1024;

    /// <summary>Datagrams in one <c>recvmmsg</c> or <c>sendmmsg</c> at most.</summary>
    private const int MaxBatch = 32;

    private static readonly Action<object?> s_loopFlush = static state => ((DatagramChannel)state!).LoopFlush();

    private DatagramBatch? _receiveBatch;
    private DatagramBatch? _sendBatch;
    private QueuedDatagram[]? _sending; // the front of the line: taken from the queue for the next sendmmsg, oldest first
    private GCHandle[]? _pins;
    private int _sendingCount;
    private int _deliveringThread; // the receiver's thread while it runs the hooks of a batch: its sends flush after the batch
    private bool _flushAfterBatch;
    private FlushWork? _flushWork;

    /// <summary>Registers the socket with the next loop of the peer's service, unless it has no service, keeps a dedicated thread, or the loop does not poll sockets.</summary>
    private PollRegistration? PinToLoop(UdpPeer owner, Socket socket)
    {
        if (_dedicatedThread || owner.LoopService is not { } service)
            return null;
        var registration = service.NextLoop().Register(socket, this, owner.OptionHooksOnLoop);
        if (registration is null)
            return null;
        _flushWork = new FlushWork(this);
        _sendBatch = new DatagramBatch(MaxBatch);
        _sending = new QueuedDatagram[MaxBatch];
        _pins = new GCHandle[MaxBatch];
        _receiveBatch = new DatagramBatch(Math.Clamp(ReceiveBatchBytes / (owner.OptionMaxDatagramSize + 1), 1, MaxBatch));
        return registration;
    }

    /// <summary>
    /// The loop stopped (its service stopped): the socket closes, as a Stop or Disconnect would; while
    /// the owner is still opening the channel, when it has finished (see <see cref="FinishOpening"/>).
    /// </summary>
    void IPollOwner.Abandon()
    {
        if (Interlocked.CompareExchange(ref _opened, AbandonedWhileOpening, Opening) == Opened)
            Close();
    }

    /// <summary>The receiver starts on the loop thread (hooks on the loop) or on the thread pool.</summary>
    private void StartLoopReceive()
    {
        if (!_registration!.Inline || !_registration.Loop.Post(this))
            ThreadPoolScheduler.Schedule(static state => ((ILoopWork)state!).Execute(), this);
    }

    void ILoopWork.Execute() => _ = LoopReceiveAsync();

    private async Task LoopReceiveAsync()
    {
        var registration = _registration!;
        var batch = _receiveBatch!;
        var limit = _owner.OptionMaxDatagramSize;

        // Slots of one more byte than the largest datagram delivered (a datagram that fills one was cut
        // by the kernel), in one pooled buffer held while datagrams are wanted, as in the other modes.
        // One slot without OptionAutoReceive: a batch would take datagrams nobody asked for yet.
        var slots = _owner.OptionAutoReceive ? batch.Capacity : 1;
        var buffer = _pool.Rent(slots * (limit + 1));
        var pin = GCHandle.Alloc(buffer, GCHandleType.Pinned);
        SetReceiveSlots(batch, pin, slots, limit + 1);
        var errors = 0;
        try
        {
            while (IsOpen && IsReceiveWanted())
            {
                var wanted = _owner.OptionAutoReceive ? slots : 1;
                var count = batch.Receive(registration.Handle, wanted, out var errno);
                if (count < 0 && errno == Errno.WouldBlock)
                {
                    if ((await registration.WaitReadableAsync().ConfigureAwait(false)).Error != SocketError.Success)
                        break; // unregistered: the socket is closing
                    continue;
                }

                var next = count < 0
                    ? (errno == Errno.Interrupted ? ReceiveNext.Delivered : Handle(Errno.ToSocketError(errno), 0, null, buffer, limit))
                    : Deliver(batch, count, buffer, limit);
                if (next == ReceiveNext.Stop)
                    break;
                errors = next == ReceiveNext.Failed ? errors + 1 : 0;
                if (errors >= ErrorsBeforePause)
                {
                    errors = 0;
                    await Task.Delay(s_errorPause).ConfigureAwait(false);
                    if (registration.Inline)
                        await registration.YieldReaderAsync().ConfigureAwait(false); // back to the loop thread
                }
                else if (count >= 0 && count < wanted)
                {
                    // Short: the socket held no more (edge-triggered, the next datagram signals anew).
                    if ((await registration.WaitReadableAsync().ConfigureAwait(false)).Error != SocketError.Success)
                        break;
                }
                else if (registration.ShouldYield())
                {
                    await registration.YieldReaderAsync().ConfigureAwait(false); // a flooded socket lets the loop go round
                }
            }
        }
        finally
        {
            pin.Free();
            _pool.Return(buffer);
            Volatile.Write(ref _receiving, 0);
            ReleaseReference();
        }

        if (Volatile.Read(ref _receiveWanted) != 0 && IsOpen)
            RequestReceive();
    }

    private static unsafe void SetReceiveSlots(DatagramBatch batch, GCHandle pin, int slots, int slot)
    {
        var start = (byte*)pin.AddrOfPinnedObject();
        for (var i = 0; i < slots; i++)
            batch.SetData(i, start + (i * slot), slot);
    }

    /// <summary>Runs the hooks of a received batch, then sends in one batch what they sent. Failed when the last datagram failed (too large).</summary>
    private ReceiveNext Deliver(DatagramBatch batch, int count, byte[] buffer, int limit)
    {
        var next = ReceiveNext.Delivered;
        Volatile.Write(ref _deliveringThread, Environment.CurrentManagedThreadId);
        try
        {
            // A hook that stopped or disconnected the socket ends the batch: no datagram reaches the hooks after that.
            // Each datagram is handed over at offset 0, as the other modes do: code ported from
            // NetCoreServer echoes with SendAsync(endpoint, buffer, 0, size). The hooks of the ones
            // before it have returned, and nothing keeps a received buffer past its hook.
            for (var i = 0; i < count && next != ReceiveNext.Stop && IsOpen; i++)
            {
                var length = batch.LengthAt(i);
                if (i != 0)
                    buffer.AsSpan(i * (limit + 1), length).CopyTo(buffer);
                next = Handle(SocketError.Success, length, _transport.SourceOf(batch.AddressAt(i)), buffer, limit);
            }
        }
        finally
        {
            Volatile.Write(ref _deliveringThread, 0);

            // Even when the batch ended in an exception: the flusher role a hook's send took is held until this flush.
            if (_flushAfterBatch)
            {
                _flushAfterBatch = false;
                LoopFlush();
            }
        }

        return next;
    }

    // --- Sending ---

    /// <summary>
    /// The caller became the flusher (the queue was idle). Inside the hooks of a received batch the
    /// datagram waits at the front of the line and leaves with the batch's other answers; elsewhere it
    /// goes out at once from the caller's bytes, and the caller then sends what was queued meanwhile.
    /// </summary>
    private unsafe DatagramSendStatus SendOnLoop(EndPoint target, ReadOnlySpan<byte> data, SendWaiter? completion)
    {
        if (Volatile.Read(ref _deliveringThread) == Environment.CurrentManagedThreadId)
        {
            _sending![0] = _queue.Copy(target, data, completion);
            _sendingCount = 1;
            _flushAfterBatch = true;
            return DatagramSendStatus.Queued;
        }

        var sent = -1;
        var errno = 0;
        if (_transport.TargetOf(target) is { } address)
        {
            var batch = _sendBatch!;
            batch.SetAddress(0, address.Buffer.Span.Slice(0, address.Size));
            fixed (byte* bytes = data)
            {
                batch.SetData(0, bytes, data.Length);
                sent = batch.Send(_registration!.Handle, 0, 1, out errno);
            }
        }

        if (sent < 0 && errno is Errno.WouldBlock or Errno.Interrupted)
        {
            // No room in the kernel: the datagram waits at the front of the line for the writable signal.
            _sending![0] = _queue.Copy(target, data, completion);
            _sendingCount = 1;
            LoopFlush();
            return DatagramSendStatus.Queued;
        }

        var result = sent < 0
            ? new SocketResult(0, errno == 0 ? SocketError.AddressFamilyNotSupported : Errno.ToSocketError(errno))
            : new SocketResult(data.Length, SocketError.Success);
        var taken = Settle(target, data.Length, result, completion);
        LoopFlush();
        return taken ? DatagramSendStatus.Sent : DatagramSendStatus.Failed;
    }

    private void PostFlush()
    {
        if (!_registration!.Inline || !_registration.Loop.Post(_flushWork!))
            ThreadPoolScheduler.Schedule(s_loopFlush, this);
    }

    /// <summary>
    /// The flusher: sends the queue in batches until it is empty (then gives the role up), the kernel
    /// has no room (the poller's writable signal goes on), or <see cref="FlushBurst"/> datagrams went
    /// (the rest follows in work queued behind the loop's other work).
    /// </summary>
    private void LoopFlush()
    {
        var batch = _sendBatch!;
        Volatile.Write(ref _bytesSending, 0);
        var sent = 0;
        var errno = 0;
        while (TakeSending())
        {
            var ready = PrepareSending(batch);
            var taken = ready == 0 ? 0 : SendPinned(batch, ready, out errno);
            if (ready == 0)
            {
                sent++; // the first datagram failed before the call (its address family): it counts toward the burst
            }
            else if (taken > 0)
            {
                for (var i = 0; i < taken; i++)
                    Done(_sending![i], new SocketResult(batch.LengthAt(i), SocketError.Success));
                RemoveSending(taken);
                sent += taken;
            }
            else if (errno == Errno.WouldBlock)
            {
                Volatile.Write(ref _bytesSending, BytesOfSending());
                if (_registration!.WaitWritable(s_loopFlush, this))
                    return; // the role stays with the writable signal
                Volatile.Write(ref _bytesSending, 0);
            }
            else if (errno != Errno.Interrupted)
            {
                // sendmmsg reports an error only for its first datagram: that one is dropped, the next go on.
                Done(_sending![0], new SocketResult(0, Errno.ToSocketError(errno)));
                RemoveSending(1);
                sent++;
            }

            if (sent >= FlushBurst)
            {
                PostFlush();
                return;
            }
        }
    }

    /// <summary>Fills the sending batch from the queue; false (the role given up) when there is nothing to send or the socket closed.</summary>
    private bool TakeSending()
    {
        lock (_sendLock)
        {
            if (IsOpen)
            {
                while (_sendingCount < MaxBatch && _queue.TryDequeue(out var datagram))
                    _sending![_sendingCount++] = datagram;
                if (_sendingCount != 0)
                    return true;
            }

            _flushing = false;
            _queue.TrimIfEmpty();
        }

        ReleaseReference(); // Finish drops what a close left behind
        return false;
    }

    /// <summary>Sets the batch's slots from the oldest datagrams on: how many are ready (a datagram with no usable address ends the run; first in line, it fails now).</summary>
    private int PrepareSending(DatagramBatch batch)
    {
        for (var i = 0; i < _sendingCount; i++)
        {
            if (_transport.TargetOf(_sending![i].Target) is not { } address)
            {
                if (i != 0)
                    return i;
                Done(_sending[0], new SocketResult(0, SocketError.AddressFamilyNotSupported));
                RemoveSending(1);
                return 0;
            }

            batch.SetAddress(i, address.Buffer.Span.Slice(0, address.Size));
        }

        return _sendingCount;
    }

    /// <summary>One sendmmsg of the first <paramref name="count"/> datagrams, their pooled copies pinned for the call.</summary>
    private unsafe int SendPinned(DatagramBatch batch, int count, out int errno)
    {
        var pins = _pins!;
        try
        {
            for (var i = 0; i < count; i++)
            {
                var datagram = _sending![i];
                if (datagram.Count == 0)
                {
                    batch.SetData(i, null, 0);
                    continue;
                }

                pins[i] = GCHandle.Alloc(datagram.Array, GCHandleType.Pinned);
                batch.SetData(i, (byte*)pins[i].AddrOfPinnedObject(), datagram.Count);
            }

            return batch.Send(_registration!.Handle, 0, count, out errno);
        }
        finally
        {
            for (var i = 0; i < count; i++)
            {
                if (pins[i].IsAllocated)
                    pins[i].Free();
            }
        }
    }

    /// <summary>The bytes of the datagrams that wait for the kernel's room (<see cref="BytesSending"/>).</summary>
    private long BytesOfSending()
    {
        long bytes = 0;
        for (var i = 0; i < _sendingCount; i++)
            bytes += _sending![i].Count;
        return bytes;
    }

    private void RemoveSending(int count)
    {
        _sendingCount -= count;
        Array.Copy(_sending!, count, _sending!, 0, _sendingCount);
        Array.Clear(_sending!, _sendingCount, count);
    }

    /// <summary>At Finish: frees the batches and drops what the flusher had taken from the queue.</summary>
    private void FreeLoopResources()
    {
        lock (_sendLock)
        {
            for (var i = 0; i < _sendingCount; i++)
                DropLocked(_sending![i]);

            _sendingCount = 0;
        }

        _receiveBatch?.Dispose();
        _receiveBatch = null;
        _sendBatch?.Dispose();
        _sendBatch = null;
    }

    /// <summary>The flush as loop work, made once per socket (a post allocates nothing).</summary>
    private sealed class FlushWork(DatagramChannel channel) : ILoopWork
    {
        public void Execute() => channel.LoopFlush();
    }
}
