
namespace NetServer.Streams;

/// <summary>
/// The close protocol: a graceful close flushes what is queued, ends our side, reads (and
/// discards) until the peer ends its side, then closes; an abort closes at once. The first reason
/// recorded wins.
/// </summary>
internal sealed partial class Connection
{
    private int _queueDrained; // a graceful close has sent everything queued
    private int _sideEnded;    // ... and ended our side (over TLS: after close_notify)
    private int _peerEnded;    // the peer's end of stream (or an error) has been read

    /// <summary>
    /// Graceful close: stop delivering received bytes and refuse new sends, send what is already
    /// queued, end our side, and read (discarding) until the peer ends its side, then close. The
    /// whole close takes at most <see cref="StreamConnection.OptionDisconnectTimeout"/>. Closing only
    /// once the peer is done keeps the kernel from resetting the connection under bytes we sent
    /// and it has not read yet, which would happen if we closed with its bytes unread.
    /// Returns false if the connection was already closing.
    /// </summary>
    public bool Close(DisconnectReason reason, Exception? exception = null) => BeginClose(reason, graceful: true, exception);

    /// <summary>Closes the socket now; queued bytes are dropped. Returns false if already closed.</summary>
    public bool Abort(DisconnectReason reason, Exception? exception = null) => BeginClose(reason, graceful: false, exception);

    /// <summary>The graceful close ran out of time: queued bytes are dropped and the reason says so.</summary>
    private void LingerExpired() => BeginClose(DisconnectReason.TimedOut, graceful: false, exception: null, lingerExpired: true);

    /// <param name="reason">Why; the first reason recorded wins.</param>
    /// <param name="graceful">Flush what is queued before closing.</param>
    /// <param name="exception">The hook exception behind a <see cref="DisconnectReason.HandlerException"/>.</param>
    /// <param name="lingerExpired">
    /// The graceful close ran out of time: only then is the earlier reason replaced (by
    /// <see cref="DisconnectReason.TimedOut"/>), because queued bytes are now dropped.
    /// </param>
    private bool BeginClose(DisconnectReason reason, bool graceful, Exception? exception, bool lingerExpired = false)
    {
        // Hold the connection from before the state changes until OnDisconnecting has run and the
        // reason is recorded: once the state says closing, the loops may finish the close at once,
        // and OnDisconnected must neither overtake OnDisconnecting nor miss the reason.
        if (!TryAddReference())
            return false;

        int previous;
        do
        {
            previous = Volatile.Read(ref _state);
            if (previous >= StateClosed || (previous == StateClosing && graceful) || (lingerExpired && previous != StateClosing))
            {
                ReleaseReference();
                return false;
            }
        }
        while (Interlocked.CompareExchange(ref _state, graceful ? StateClosing : StateClosed, previous) != previous);

        if (lingerExpired && Volatile.Read(ref _queueDrained) == 0)
            Volatile.Write(ref _reason, (int)reason); // queued bytes are being dropped: say so
        else if (Interlocked.CompareExchange(ref _reason, (int)reason, (int)DisconnectReason.None) == (int)DisconnectReason.PeerClosed
            && reason == DisconnectReason.ConnectionReset && previous == StateClosing && Volatile.Read(ref _queueDrained) == 0)
        {
            // An end of stream followed by a reset while we still flush was a reset all along: the
            // kernel hands a reset's error to one call only (send or receive, whichever asks
            // first), and the other sees a plain end of stream. What we still owed is lost: say so.
            Interlocked.CompareExchange(ref _reason, (int)DisconnectReason.ConnectionReset, (int)DisconnectReason.PeerClosed);
        }
        if (exception is not null)
            Interlocked.CompareExchange(ref _exception, exception, null);

        try
        {
            if (previous == StateOpen)
                RaiseDisconnecting();

            if (!graceful)
            {
                CloseSocket();
            }
            else if (_layer is not null && !IsSecured && !HasQueuedBytes())
            {
                // Before the handshake succeeds nothing has reached the peer; with nothing queued
                // for it either, closing the socket abandons the handshake at once. (With bytes
                // queued, the handshake goes on, raising no hook, so they still go out as over
                // TCP.) Read after the state changed: a handshake that succeeded before that saw
                // the close and raised no OnHandshaked, and then this close flushes as usual.
                CompleteGracefulClose();
            }
            else
            {
                // A receive loop parked by a pause must read again: the close waits for the peer's end.
                ResumeForClose();
                if (FailRoomWaitersAndCheckDrained())
                    QueueDrained();

                // Still waiting for the queue or for the peer: bound the wait.
                var timeout = _owner.OptionDisconnectTimeout;
                if (Volatile.Read(ref _state) == StateClosing && timeout != Timeout.InfiniteTimeSpan)
                    StartLingerTimer(timeout);
            }
        }
        finally
        {
            ReleaseReference();
        }

        return true;
    }

    /// <summary>
    /// A graceful close has sent everything queued (called by the flusher giving up its role, or by
    /// <see cref="BeginClose"/> when nothing was queued): end our side, then close once the peer has
    /// ended its side too, at once if no receive loop is there to read it.
    /// </summary>
    private void QueueDrained()
    {
        if (Interlocked.Exchange(ref _queueDrained, 1) != 0 || Volatile.Read(ref _state) != StateClosing)
            return;
        if (_stream is not null)
        {
            StartLayerShutdown(); // ends the layer's side first (TLS close_notify), then continues below
            return;
        }

        EndOurSide();
    }

    /// <summary>Shuts down the socket's send side; closes at once if the peer's side has ended too (or nobody reads it).</summary>
    private void EndOurSide()
    {
        try
        {
            _socket.Shutdown(SocketShutdown.Send);
        }
        catch (SocketException)
        {
            // The peer already reset the connection: the close below finds nothing left to end.
        }
        catch (ObjectDisposedException)
        {
            // Closed meanwhile by an abort, which also finished the close.
        }

        Interlocked.Exchange(ref _sideEnded, 1);
        if (Volatile.Read(ref _peerEnded) != 0 || !_reads)
            CompleteGracefulClose();
    }

    /// <summary>The receive loop read the peer's end of stream (or an error): close if our side is done too.</summary>
    private void PeerEnded()
    {
        Interlocked.Exchange(ref _peerEnded, 1);
        if (Volatile.Read(ref _sideEnded) != 0)
            CompleteGracefulClose();
    }

    /// <summary>Closing → Closed (whoever gets here first).</summary>
    private void CompleteGracefulClose()
    {
        if (Interlocked.CompareExchange(ref _state, StateClosed, StateClosing) == StateClosing)
            CloseSocket();
    }

    /// <summary>Shuts the socket down and closes it; releases the reference the open socket held.</summary>
    private void CloseSocket()
    {
        try
        {
            _socket.Shutdown(SocketShutdown.Both);
        }
        catch (SocketException)
        {
            // Expected when the peer already reset the connection: there is nothing left to shut down.
        }
        catch (ObjectDisposedException)
        {
            // A socket closed by the runtime under us is already as closed as it gets.
        }

        Unpin();
        _socket.Dispose();
        FailAllWaiters();
        ReleaseReference();
    }
}
