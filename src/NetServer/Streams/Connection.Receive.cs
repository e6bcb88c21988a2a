using System.IO;

namespace NetServer.Streams;

/// <summary>
/// The receive side: one loop per connection, so OnReceived never runs concurrently with itself
/// and bytes arrive in order. An idle connection waits with a zero-byte receive and holds no
/// buffer; a busy one reads straight into a pooled buffer that grows (doubling, up to the
/// receive limit) while reads fill it and shrinks back when they stop doing so.
/// </summary>
/// <remarks>
/// <para><b>Retained input.</b> The handler (a protocol) says how many of the delivered bytes it
/// consumed; the rest stays in the receive buffer and is delivered again, in front of the next
/// bytes read. The buffer never grows past the receive limit: input that would need more (a frame
/// larger than the limit) closes the connection with <see cref="DisconnectReason.ReceiveBufferFull"/>.</para>
/// <para><b>Pause and resume.</b> While paused, by the application or because too much waits in
/// the send queue (see <see cref="StreamConnection.OptionSendHighWaterMark"/>), the loop reads
/// nothing: it parks, holding no thread, and TCP flow control slows the peer down. Bytes read
/// just before a pause stay retained and are delivered on resume, first.</para>
/// </remarks>
internal sealed partial class Connection
{
    /// <summary>Largest read when no receive limit is set.</summary>
    internal const int DefaultMaxReadSize = 64 * 1024;

    private const int PausedByApplication = 1;
    private const int PausedBySendBacklog = 2;

    private readonly PooledBuffer _receiveBuffer;
    private SocketAwaitableEventArgs? _receiver;
    private volatile bool _reads; // a receive loop runs (or will): it can read the peer's end of stream
    private int _receiving;       // a loop runs (or the blocking receive): only one reads at a time
    private int _pause;           // PausedBy* flags; the send-backlog flag changes only under the send lock
    private int _readSize;        // 0 until the first loop starts
    private int _minReadSize;
    private int _resumes;         // resumes of an application pause (see HeldForResume)
    private int _resumesSeen;     // _resumes when the last delivery began
    private bool _deliveryTook;   // the last delivery consumed bytes
    private volatile bool _answered; // the last delivery's hook queued sends on this connection

    /// <summary>
    /// Starts the receive loop; does nothing if it already runs or the socket is closed. During a
    /// graceful close it still starts: it reads (and discards) until the peer ends its side.
    /// </summary>
    public void StartReceiving()
    {
        _reads = true;
        if (MayReceive())
            TryStartLoop();
    }

    /// <summary>True while the application or the send backlog holds receiving.</summary>
    public bool IsReceivePaused => Volatile.Read(ref _pause) != 0;

    /// <summary>Stops reading after the current delivery until <see cref="ResumeReceiving"/>.</summary>
    public void PauseReceiving() => SetPause(PausedByApplication);

    /// <summary>Reads again; retained bytes are delivered first (on the thread pool, not on the caller's thread).</summary>
    public void ResumeReceiving()
    {
        if ((Volatile.Read(ref _pause) & PausedByApplication) != 0)
            Interlocked.Increment(ref _resumes); // before the flag: a loop that sees the flag clear also sees this
        if (ClearPause(PausedByApplication) == 0)
            ResumeLoopLater();
    }

    private static readonly Action<object?> s_resumeLoop = static state => ((Connection)state!).ResumeLoop();

    /// <summary>
    /// Restarts a parked loop from the thread pool: a resume comes from the flusher (the send
    /// backlog drained) or from the application, and the loop's first delivery must not run
    /// OnReceived inside that caller (under its locks, or inside another connection's hook).
    /// </summary>
    private void ResumeLoopLater()
    {
        if (_reads && Volatile.Read(ref _receiving) == 0)
            ScheduleResume();
    }

    private void ResumeLoop()
    {
        if (MayReceive())
            TryStartLoop();
    }

    /// <summary>A graceful close must read the peer's end even if receiving is paused.</summary>
    private void ResumeForClose()
    {
        if (_reads && MayReceive())
            TryStartLoop();
    }

    private void SetPause(int flag)
    {
        int current;
        do
        {
            current = Volatile.Read(ref _pause);
        }
        while (Interlocked.CompareExchange(ref _pause, current | flag, current) != current);
    }

    /// <summary>Clears <paramref name="flag"/>; returns the flags left.</summary>
    private int ClearPause(int flag)
    {
        int current;
        do
        {
            current = Volatile.Read(ref _pause);
        }
        while (Interlocked.CompareExchange(ref _pause, current & ~flag, current) != current);
        return current & ~flag;
    }

    private void TryStartLoop()
    {
        if (IsOpen && Volatile.Read(ref _pause) != 0)
            return; // the resume starts it
        if (Interlocked.CompareExchange(ref _receiving, 1, 0) != 0)
            return; // it runs (a parking loop re-checks the pause after letting go)
        if (!IsReadable || !TryAddReference())
        {
            Volatile.Write(ref _receiving, 0);
            return;
        }

        if (_readSize == 0)
            ConfigureReadSize();
        if (!StartsOnItsLoop())
            RunReceiveLoop(); // else the loop runs it (and with it the first OnReceived), not this thread
    }

    private void RunReceiveLoop() => _ = _stream is { } stream ? StreamReceiveLoopAsync(stream) : ReceiveLoopAsync();

    /// <summary>Open or gracefully closing: the receive loop keeps reading (delivering only while open).</summary>
    private bool IsReadable => Volatile.Read(ref _state) < StateClosed;

    private void ConfigureReadSize()
    {
        var size = Math.Max(1, _owner.OptionReceiveBufferSize);
        var max = _owner.ReceiveRetentionLimit;
        _minReadSize = Math.Min(size, max);
        _readSize = _minReadSize;
        _receiveBuffer.Limit = max;
    }

    private async Task ReceiveLoopAsync()
    {
        // Read at once: a new connection often has data waiting. While a graceful close is under
        // way the loop goes on reading, and discards, until the peer ends its side.
        var waitFirst = false;
        var parked = false;
        try
        {
            if (!RedeliverRetained())
                return;
            while (IsReadable)
            {
                if (ShouldPark())
                {
                    if (!ParkOrGoOn(ref parked))
                        return;
                    continue;
                }

                if (waitFirst && HeldForResume())
                {
                    waitFirst = false;
                    if (!RedeliverRetained())
                        break;
                    continue;
                }

                if (waitFirst)
                {
                    var waited = _poll is { } poll
                        ? await poll.WaitReadableAsync().ConfigureAwait(false)
                        : await (_receiver ??= new SocketAwaitableEventArgs()).WaitForDataAsync(_socket).ConfigureAwait(false);
                    if (!waited.IsSuccess)
                    {
                        Fail(waited.Error);
                        break;
                    }

                    waitFirst = false;
                    continue; // a pause may have come while waiting
                }

                if (_poll is { } polled && polled.ShouldYield())
                {
                    await polled.YieldReaderAsync().ConfigureAwait(false);
                    continue; // a pause or a close may have come meanwhile
                }

                if (!TryGetWritableSpace(out var free))
                    break;
                var received = SocketIO.TryReceive(_socket, free.Array!, free.Offset, free.Count, out var error);
                if (error == SocketError.WouldBlock)
                {
                    _receiveBuffer.Release();
                    waitFirst = true;
                    continue;
                }

                if (error != SocketError.Success)
                {
                    Fail(error);
                    break;
                }

                var next = Delivered(received, free.Count);
                if (next == ReadNext.Stop)
                    break;
                waitFirst = next == ReadNext.Wait;
            }
        }
        finally
        {
            if (!parked)
                Volatile.Write(ref _receiving, 0);
            ReleaseReference();
        }
    }

    /// <summary>What a receive loop does after a read.</summary>
    private enum ReadNext
    {
        /// <summary>The connection is ending: leave the loop.</summary>
        Stop,

        /// <summary>The read filled the buffer (or a pause came): look again at once.</summary>
        Read,

        /// <summary>The transport is probably drained: wait for data (holding no buffer) before reading.</summary>
        Wait,
    }

    /// <summary>
    /// The free space to read into: behind the retained bytes, at most the read size, never past
    /// the limit. False (the connection is closed) when retained input already fills the limit.
    /// </summary>
    private bool TryGetWritableSpace(out ArraySegment<byte> free)
    {
        var room = _receiveBuffer.Limit - _receiveBuffer.Length;
        if (room > 0 && _receiveBuffer.TryGetWritable(Math.Min(_readSize, room), out free))
            return true;
        free = default;
        return InputTooLarge();
    }

    /// <summary>
    /// Handles a read of <paramref name="received"/> bytes into the space <see cref="TryGetWritableSpace"/>
    /// offered (<paramref name="offered"/> bytes), whatever the transport: the peer's end of stream,
    /// statistics, delivery (unless paused), the read size.
    /// </summary>
    private ReadNext Delivered(int received, int offered)
    {
        if (received == 0)
        {
            // The peer finished sending: flush what we still owe it, then close.
            _receiveBuffer.Consume(_receiveBuffer.Length);
            _receiveBuffer.Release();
            Interlocked.Exchange(ref _peerEnded, 1);
            if (!Close(DisconnectReason.PeerClosed))
                PeerEnded(); // already closing: this was the end the close waited for
            return ReadNext.Stop;
        }

        _owner.CountReceived(received);
        NoteActivity();
        _receiveBuffer.Advance(received);
        if (!IsOpen)
            _receiveBuffer.Consume(_receiveBuffer.Length); // closing: read only to find the peer's end
        else if (Volatile.Read(ref _pause) != 0)
            return ReadNext.Read; // kept for the resume; the loop parks
        else if (!Deliver())
            return ReadNext.Stop;

        if (!AdaptReadSize(received, offered))
            return ReadNext.Read;
        _receiveBuffer.Release(); // only when nothing is retained
        return ReadNext.Wait;
    }

    /// <summary>
    /// Hands the buffered bytes to the handler; keeps what it did not consume. A protocol switch
    /// inside the handler (an upgrade) hands the rest to the new protocol at once. Returns false
    /// when the connection is ending.
    /// </summary>
    private bool Deliver()
    {
        _answered = false; // set by a send the hook makes on this connection (see AdmitLocked)
        while (true)
        {
            var protocol = _owner.Protocol;
            _resumesSeen = Volatile.Read(ref _resumes);
            var bytes = _receiveBuffer.WrittenSegment;
            var consumed = RaiseReceived(bytes.Array!, bytes.Offset, bytes.Count);
            if (consumed < 0)
                return false;
            _deliveryTook = consumed > 0;
            _receiveBuffer.Consume(consumed);
            if (!IsOpen)
            {
                _receiveBuffer.Consume(_receiveBuffer.Length);
                return true;
            }

            if (_receiveBuffer.Length == 0 || Volatile.Read(ref _pause) != 0)
                return true;
            if (ReferenceEquals(protocol, _owner.Protocol))
                return _receiveBuffer.Length < _receiveBuffer.Limit || InputTooLarge();
        }
    }

    /// <summary>The handler needs more input at once than the receive limit allows: close with a clear reason.</summary>
    private bool InputTooLarge()
    {
        var limit = _receiveBuffer.Limit;
        _receiveBuffer.Consume(_receiveBuffer.Length);
        RaiseError(SocketError.MessageSize);
        Abort(DisconnectReason.ReceiveBufferFull, new InvalidDataException(
            $"The protocol consumed none of {limit} buffered bytes: its next unit of input is larger than the receive limit (OptionReceiveBufferLimit = {limit} bytes)."));
        return false;
    }

    /// <summary>
    /// Before a loop waits for data: whether the retained bytes were held for a resume that came
    /// while this loop still ran (so it scheduled nothing): the hook paused, took what it could,
    /// and was resumed from another thread (an HTTP answer from a pool thread) during the delivery
    /// or before the loop looked at the pause again. Those bytes need another delivery, not more
    /// input: the peer may have sent everything already. A delivery that took nothing does not
    /// count, so a hook that resumes itself cannot make the loop spin.
    /// </summary>
    private bool HeldForResume() =>
        _receiveBuffer.Length != 0 && _deliveryTook && Volatile.Read(ref _resumes) != _resumesSeen;

    /// <summary>Delivers retained bytes before reading again (after a resume); false when the connection is ending.</summary>
    private bool RedeliverRetained() => _receiveBuffer.Length == 0 || !IsOpen || Volatile.Read(ref _pause) != 0 || Deliver();

    /// <summary>
    /// Whether the loop must stop reading now: paused by the application, or too much waits to be
    /// sent while the connection answers what it receives. Only a connection whose receive hook
    /// queued sends (an echo, a request/response protocol) pauses for its send backlog: pausing one
    /// whose backlog comes from elsewhere (a client streaming an upload while it reads the replies)
    /// would stop it reading the very replies its peer waits to send, and both would wait forever.
    /// </summary>
    private bool ShouldPark()
    {
        if (!IsOpen)
            return false; // a closing connection reads on to find the peer's end
        var highWater = _owner.EffectiveHighWaterMark;
        if (_answered && highWater > 0 && Volatile.Read(ref _bytesPending) >= highWater)
            PauseForSendBacklog(highWater);
        return Volatile.Read(ref _pause) != 0;
    }

    /// <summary>
    /// Lets go of the loop while paused. Returns true when the loop must end (the resume starts a
    /// new one), false when a resume came meanwhile and this loop may go on.
    /// </summary>
    private bool Park()
    {
        _receiveBuffer.Release(); // only when nothing is retained
        Volatile.Write(ref _receiving, 0);
        Interlocked.MemoryBarrier();
        if (IsOpen && Volatile.Read(ref _pause) != 0)
            return true;
        return Interlocked.CompareExchange(ref _receiving, 1, 0) != 0;
    }

    /// <summary>
    /// Parks the loop (see <see cref="Park"/>); false when it must end, true when a resume came
    /// meanwhile and the retained bytes were delivered again, so it goes on.
    /// </summary>
    private bool ParkOrGoOn(ref bool parked)
    {
        parked = Park();
        return !parked && RedeliverRetained();
    }

    /// <summary>
    /// Grows the next read after one that filled the buffer, shrinks it after one that used a
    /// quarter or less. Returns whether the socket is probably drained (wait before reading again).
    /// </summary>
    private bool AdaptReadSize(int received, int offered)
    {
        if (received >= offered)
        {
            if (_readSize < _receiveBuffer.Limit)
                _readSize = (int)Math.Min((long)_readSize * 2, _receiveBuffer.Limit);
            return false;
        }

        if (received <= _readSize / 4 && _readSize > _minReadSize)
            _readSize = Math.Max(_readSize / 2, _minReadSize);
        return true;
    }
}
