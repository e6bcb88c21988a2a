
namespace NetServer.Udp;

/// <summary>
/// The receive side: one loop per socket, so OnReceived never runs concurrently with itself, and
/// one OnReceived per datagram. The loop receives while someone wants it to: each
/// <c>ReceiveAsync()</c> asks for one more datagram (asking again before it came changes nothing),
/// or <c>OptionAutoReceive</c> asks for all of them. A <c>ReceiveAsync()</c> made inside
/// OnReceived only raises the wish; the running loop takes the next datagram when the hook
/// returns, so no rate of datagrams can deepen the stack. The loop is an async one on the thread
/// pool, or, with <c>OptionDedicatedThread</c>, a thread of the socket's own making blocking calls.
/// </summary>
internal sealed partial class DatagramChannel
{
    private static readonly Action<object?> s_receiveLoop = static state => _ = ((DatagramChannel)state!).ReceiveLoopAsync();

    /// <summary>Errors in a row after which the loop pauses briefly, so a socket that fails every call cannot spin.</summary>
    private const int ErrorsBeforePause = 16;

    private static readonly TimeSpan s_errorPause = TimeSpan.FromMilliseconds(10);

    private readonly object _wishLock = new(); // the dedicated thread waits on it for a wish
    private int _receiveWanted;
    private int _receiving;

    /// <summary>
    /// Asks for the next datagram (the compatible <c>ReceiveAsync()</c>, and <c>OptionAutoReceive</c>
    /// at start). Starts the loop unless it runs already (on the thread pool, or its dedicated thread);
    /// never runs a hook on the caller's thread.
    /// </summary>
    public void RequestReceive()
    {
        Volatile.Write(ref _receiveWanted, 1);
        if (_dedicatedThread)
        {
            lock (_wishLock)
                Monitor.Pulse(_wishLock);
        }

        if (!IsOpen || Interlocked.CompareExchange(ref _receiving, 1, 0) != 0)
            return;
        if (!TryAddReference())
        {
            Volatile.Write(ref _receiving, 0);
            return;
        }

        if (_registration is not null)
            StartLoopReceive();
        else if (_dedicatedThread)
            new Thread(static state => ((DatagramChannel)state!).ReceiveThreadLoop()) { IsBackground = true, Name = "NetServer UDP receive" }.Start(this);
        else
            ThreadPoolScheduler.Schedule(s_receiveLoop, this);
    }

    /// <summary>Whether someone wants a datagram (always, with <c>OptionAutoReceive</c>).</summary>
    private bool IsReceiveWanted() => _owner.OptionAutoReceive || Volatile.Read(ref _receiveWanted) != 0;

    /// <summary>What a receive loop does after handling one receive.</summary>
    private enum ReceiveNext
    {
        /// <summary>A datagram was delivered.</summary>
        Delivered,

        /// <summary>A datagram failed (reported); count it towards the pause.</summary>
        Failed,

        /// <summary>The socket is closed: leave the loop.</summary>
        Stop,
    }

    /// <summary>
    /// Handles the outcome of one receive into <paramref name="buffer"/>, whatever the loop: an
    /// error reported (or the end of a closed socket), a datagram too large for <paramref name="limit"/>
    /// reported as MessageSize, or statistics and OnReceived.
    /// </summary>
    private ReceiveNext Handle(SocketError error, int received, EndPoint? source, byte[] buffer, int limit)
    {
        if (error == SocketError.Success && received <= limit)
        {
            // The wish is used up by a delivery, not by the receive call: a ReceiveAsync() made while
            // the call waits asks for the same datagram, one made in OnReceived for the next.
            Volatile.Write(ref _receiveWanted, 0);
            _owner.CountReceived(received);
            if (!RaiseReceived(source!, buffer, received))
                Volatile.Write(ref _receiveWanted, 1); // a secure peer dropped it unopened: the wish still waits for a datagram
            return ReceiveNext.Delivered;
        }

        if (!IsOpen)
            return ReceiveNext.Stop;
        if (error == SocketError.Success)
        {
            RaiseError(SocketError.MessageSize); // the datagram filled the buffer one byte past the limit: cut by the kernel
            return ReceiveNext.Failed;
        }

        if (IsSocketGone(error))
        {
            // The socket was closed under the channel (not through Stop or Disconnect): end it.
            Close();
            return ReceiveNext.Stop;
        }

        RaiseError(error);
        return ReceiveNext.Failed;
    }

    private async Task ReceiveLoopAsync()
    {
        // One more byte than the largest datagram delivered: a datagram that fills it was truncated by the kernel.
        var limit = _owner.OptionMaxDatagramSize;
        var buffer = _pool.Rent(limit + 1);
        var errors = 0;
        try
        {
            while (IsOpen && IsReceiveWanted())
            {
                var result = await _transport.ReceiveAsync(buffer, limit + 1).ConfigureAwait(false);
                var next = Handle(result.Error, result.BytesTransferred, result.IsSuccess ? _transport.Source : null, buffer, limit);
                if (next == ReceiveNext.Stop)
                    break;
                errors = next == ReceiveNext.Failed ? errors + 1 : 0;
                if (errors >= ErrorsBeforePause)
                {
                    errors = 0;
                    await Task.Delay(s_errorPause).ConfigureAwait(false);
                }
            }
        }
        finally
        {
            _pool.Return(buffer);
            Volatile.Write(ref _receiving, 0);
            ReleaseReference();
        }

        // A wish raised while the loop was leaving found it still running: start again for it.
        if (Volatile.Read(ref _receiveWanted) != 0 && IsOpen)
            RequestReceive();
    }

    /// <summary>
    /// The dedicated thread: blocking receives for as long as the socket is open, waiting (holding
    /// no buffer) while nobody wants a datagram. Closing the socket wakes a blocked receive.
    /// </summary>
    private void ReceiveThreadLoop()
    {
        var limit = _owner.OptionMaxDatagramSize;
        byte[]? buffer = null;
        var errors = 0;
        try
        {
            while (IsOpen)
            {
                if (!IsReceiveWanted())
                {
                    if (buffer is not null)
                    {
                        _pool.Return(buffer);
                        buffer = null;
                    }

                    WaitForWish(Timeout.InfiniteTimeSpan);
                    continue;
                }

                buffer ??= _pool.Rent(limit + 1);
                var received = _transport.Receive(buffer, 0, limit + 1, out var source, out var error);
                var next = Handle(error, received, source, buffer, limit);
                if (next == ReceiveNext.Stop)
                    break;
                errors = next == ReceiveNext.Failed ? errors + 1 : 0;
                if (errors >= ErrorsBeforePause)
                {
                    errors = 0;
                    WaitForWish(s_errorPause); // a pause that a close ends early
                }
            }
        }
        finally
        {
            if (buffer is not null)
                _pool.Return(buffer);
            Volatile.Write(ref _receiving, 0);
            ReleaseReference();
        }
    }

    /// <summary>The dedicated thread waits for a wish (or a close, which pulses too), at most <paramref name="timeout"/>.</summary>
    private void WaitForWish(TimeSpan timeout)
    {
        lock (_wishLock)
        {
            if (IsOpen && (timeout != Timeout.InfiniteTimeSpan || Volatile.Read(ref _receiveWanted) == 0))
                Monitor.Wait(_wishLock, timeout);
        }
    }

    /// <summary>Wakes a dedicated thread that waits for a wish, so it sees the close.</summary>
    private void WakeReceiveThread()
    {
        if (!_dedicatedThread)
            return;
        lock (_wishLock)
            Monitor.PulseAll(_wishLock);
    }

    /// <summary>Errors that mean the socket itself is gone, not that one datagram failed.</summary>
    private static bool IsSocketGone(SocketError error) =>
        error is SocketError.OperationAborted or SocketError.NotSocket or SocketError.Shutdown or SocketError.Interrupted;

    /// <summary>
    /// The compatible blocking receive: one datagram into the caller's buffer (waiting as the
    /// socket's <c>ReceiveTimeout</c> says), OnReceived on the caller's thread. Not while the receive
    /// loop runs: the two would race for the same datagrams.
    /// </summary>
    /// <returns>The datagram's size (a datagram larger than <paramref name="count"/> is cut to it, as the socket does); 0 on timeout or error.</returns>
    public int ReceiveBlocking(byte[] buffer, int offset, int count, out EndPoint? source)
    {
        source = null;
        if (Interlocked.CompareExchange(ref _receiving, 1, 0) != 0)
            ThrowHelper.ThrowInvalidOperation("Receive() cannot be used while ReceiveAsync(), OptionAutoReceive or OptionDedicatedThread keeps receiving; handle datagrams in OnReceived instead.");
        if (!TryAddReference())
        {
            Volatile.Write(ref _receiving, 0);
            return 0;
        }

        try
        {
            if (!IsOpen)
                return 0;
            var received = _transport.Receive(buffer, offset, count, out source, out var error);
            if (error != SocketError.Success)
            {
                if (IsOpen && error is not (SocketError.TimedOut or SocketError.WouldBlock) && !IsSocketGone(error))
                    RaiseError(error);
                return 0;
            }

            _owner.CountReceived(received);
            RaiseReceived(source!, buffer, received, offset);
            return received;
        }
        finally
        {
            Volatile.Write(ref _receiving, 0);
            ReleaseReference();
            if (Volatile.Read(ref _receiveWanted) != 0 && IsOpen)
                RequestReceive();
        }
    }

    /// <summary>
    /// Runs OnReceived; a hook that throws is reported through OnError(Exception) and receiving goes
    /// on. False when no hook ran: a secure peer dropped the datagram (it did not open).
    /// </summary>
    private bool RaiseReceived(EndPoint source, byte[] buffer, int count, int offset = 0)
    {
        CallbackScope.Enter();
        try
        {
            return _owner.InvokeReceived(source, buffer, offset, count);
        }
        catch (Exception e)
        {
            _owner.ReportHandlerFailure(e);
            return true;
        }
        finally
        {
            CallbackScope.Exit();
        }
    }
}
