using System.IO;

namespace NetServer.Streams;

/// <summary>
/// Receiving over a secure layer's stream: the same loop as over the socket (retained input,
/// pause and resume, read sizes, the peer's end), reading through the layer instead.
/// </summary>
internal sealed partial class Connection
{
    private const int WriteLeftToReader = 1;
    private const int ReaderDone = 2;


    private int _closeNotified;    // the peer ended the stream with close_notify (not a bare end of its socket)
    private int _readerEnd;        // 0, WriteLeftToReader or ReaderDone: see StreamWriteFailed

    private async Task StreamReceiveLoopAsync(Stream stream)
    {
        var waitFirst = false;
        var parked = false;
        try
        {
            // A blocking receive that timed out left its read pending, or bytes not yet handed out: they come first.
            if (!await TakeOverBlockingReadAsync().ConfigureAwait(false) || !RedeliverRetained())
                return;

            // Every read goes through the gate (no allocation, no lock across it): between reads,
            // or while a read waits for bytes, the layer's shutdown may run.
            var gate = _gate!;
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
                    // A zero-byte read waits for data without holding a receive buffer (SslStream
                    // supports it), so an idle secure connection holds no buffer of ours either.
                    gate.EnterRead();
                    try
                    {
                        await StreamIO.ReadAsync(stream, new ArraySegment<byte>(Array.Empty<byte>())).ConfigureAwait(false);
                    }
                    finally
                    {
                        gate.ExitRead();
                    }

                    waitFirst = false;
                    continue; // a pause may have come while waiting
                }

                if (!TryGetWritableSpace(out var free))
                    break;
                int received;
                gate.EnterRead();
                try
                {
                    received = await StreamIO.ReadAsync(stream, free).ConfigureAwait(false);
                }
                finally
                {
                    gate.ExitRead();
                }

                if (received == 0 && !gate.HasTransportEnded)
                    Volatile.Write(ref _closeNotified, 1); // the layer's end came before the socket's

                var next = Delivered(received, free.Count);
                if (next == ReadNext.Stop)
                    break;
                waitFirst = next == ReadNext.Wait;
            }
        }
        catch (Exception e)
        {
            _receiveBuffer.Consume(_receiveBuffer.Length);
            _receiveBuffer.Release();
            StreamFailed(e);
        }
        finally
        {
            if (!parked)
            {
                if (Interlocked.Exchange(ref _readerEnd, ReaderDone) == WriteLeftToReader)
                    EndAfterLostPeer();
                Volatile.Write(ref _receiving, 0);
            }

            ReleaseReference();
        }
    }

    /// <summary>
    /// Whether the end of a connection whose write found the peer gone is left to the receive loop
    /// (see <see cref="StreamWriteFailed"/>): not once the loop has ended, nor without a bound on the
    /// wait (a loop paused by the application or by the send backlog reads nothing meanwhile).
    /// </summary>
    private bool LeaveEndToReader()
    {
        var timeout = _owner.OptionDisconnectTimeout;
        if (timeout == Timeout.InfiniteTimeSpan)
            return false;
        var previous = Interlocked.CompareExchange(ref _readerEnd, WriteLeftToReader, 0);
        if (previous == ReaderDone)
            return false;
        if (previous == 0)
            StartLostPeerTimer(timeout); // a paused loop reads nothing: bound the wait
        return true;
    }

    /// <summary>
    /// The receive loop has read everything the peer sent before it went (or the wait for it ran
    /// out): after its close_notify the peer's close was an ordinary one (it wanted nothing more;
    /// TLS 1.2 even tells the receiver of a close_notify to drop its pending writes), else the
    /// connection was reset. What is still queued is dropped.
    /// </summary>
    private void EndAfterLostPeer()
    {
        StopLostPeerTimer();
        Abort(Volatile.Read(ref _closeNotified) != 0 ? DisconnectReason.PeerClosed : DisconnectReason.ConnectionReset);
    }

    /// <summary>
    /// A stream read or write failed. Ordinary ends (the peer left, we closed) close quietly;
    /// anything else (a corrupt record, a TLS alert) is reported through OnError, and the exception
    /// is kept in <see cref="Exception"/> so its message is not lost.
    /// </summary>
    private void StreamFailed(Exception exception)
    {
        var error = SocketErrors.FromException(exception);
        if (IsSocketClosed || SocketErrors.IsDisconnect(error))
        {
            Abort(SocketErrors.ToReason(error));
            return;
        }

        // While closing, the application is done with the connection: no OnError, the close's
        // reason stays, but the exception is kept (a peer's alert, a record that fails to decrypt).
        if (!IsOpen)
        {
            Interlocked.CompareExchange(ref _exception, exception, null);
            Abort(SocketErrors.ToReason(error));
            return;
        }

        Interlocked.CompareExchange(ref _exception, exception, null);
        Fail(error);
    }
}
