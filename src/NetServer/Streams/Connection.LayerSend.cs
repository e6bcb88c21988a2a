using System.IO;
using System.Runtime.CompilerServices;

namespace NetServer.Streams;

/// <summary>
/// Sending over a secure layer's stream, and ending the layer's side when a graceful close has
/// sent everything (TLS close_notify, through the <see cref="Tls.ReadGate"/>).
/// </summary>
internal sealed partial class Connection
{
    /// <summary>
    /// The flusher's loop for a secure connection: one stream write per in-flight segment, or one
    /// for a staged run of small ones (each write becomes at least one TLS record, so many small
    /// multicast messages are copied together first). A write that completes at once continues the
    /// loop here; one that is pending continues it from its completion.
    /// </summary>
    private void StreamFlushLoop(Stream stream)
    {
        while (HasMoreToFlush())
        {
            byte[]? staging = null;
            ArraySegment<byte> chunk;
            if (_queue.InflightSegments > 1 && _queue.CanStage)
            {
                staging = _pool.Rent(SendQueue.StagingSize);
                chunk = new ArraySegment<byte>(staging, 0, _queue.Stage(staging));
            }
            else
            {
                // Large segments go in slices, so OnSent, BytesPending and parked senders move as the peer reads.
                ref var first = ref _queue.FirstInflight;
                chunk = new ArraySegment<byte>(first.Array, first.Offset, Math.Min(first.Count, MaxStreamWrite));
            }

            Volatile.Write(ref _bytesSending, chunk.Count);
            ValueTask write;
            try
            {
                write = StreamIO.WriteAsync(stream, chunk);
            }
            catch (Exception e)
            {
                StreamWriteFailed(e, staging);
                return;
            }

            if (!write.IsCompleted)
            {
                // Pending: continue from its completion through one delegate made per connection,
                // not an async state machine per pending write.
                _pendingWrite = write.ConfigureAwait(false).GetAwaiter();
                _pendingWriteCount = chunk.Count;
                _pendingWriteStaging = staging;
                _pendingWrite.UnsafeOnCompleted(_writeCompleted ??= OnStreamWriteCompleted);
                return;
            }

            if (!StreamWriteDone(write.ConfigureAwait(false).GetAwaiter(), chunk.Count, staging))
                return;
        }
    }

    /// <summary>Largest single stream write (four TLS records).</summary>
    private const int MaxStreamWrite = 64 * 1024;

    // The write in progress while the flusher waits for it (flusher only).
    private ConfiguredValueTaskAwaitable.ConfiguredValueTaskAwaiter _pendingWrite;
    private int _pendingWriteCount;
    private byte[]? _pendingWriteStaging;
    private Action? _writeCompleted;

    private void OnStreamWriteCompleted()
    {
        var write = _pendingWrite;
        var staging = _pendingWriteStaging;
        _pendingWrite = default;
        _pendingWriteStaging = null;
        if (StreamWriteDone(write, _pendingWriteCount, staging) && _stream is { } stream)
            StreamFlushLoop(stream);
    }

    /// <summary>Accounts a finished write; false if it failed (the flusher role is then given up).</summary>
    private bool StreamWriteDone(ConfiguredValueTaskAwaitable.ConfiguredValueTaskAwaiter write, int count, byte[]? staging)
    {
        try
        {
            write.GetResult(); // a completed write: consumes it (its result or exception), never blocks
        }
        catch (Exception e)
        {
            StreamWriteFailed(e, staging);
            return false;
        }

        if (staging is not null)
            _pool.Return(staging);
        Volatile.Write(ref _bytesSending, 0);
        _queue.ConsumeInflight(count);
        CompleteSent(count); // OnSent runs here and may close the connection
        return true;
    }

    /// <remarks>
    /// A write that finds the peer gone (reset, broken pipe) may have overtaken the peer's last
    /// words: a peer that sends close_notify and closes its socket at once (NetCoreServer's
    /// SslClient does) resets the connection when our bytes reach it, while its close_notify still
    /// waits in our socket, ahead of the reset, for the receive loop. So while the connection is
    /// open and a receive loop runs or is to run, the loop decides how it ended
    /// (<see cref="EndAfterLostPeer"/>): the write only gives up the flusher role. A close_notify
    /// read before the write failed makes it the peer's ordinary close too.
    /// </remarks>
    private void StreamWriteFailed(Exception exception, byte[]? staging)
    {
        if (staging is not null)
            _pool.Return(staging);
        Volatile.Write(ref _bytesSending, 0);
        var error = SocketErrors.FromException(exception);
        if (SocketErrors.IsDisconnect(error))
        {
            if (IsOpen && _reads && LeaveEndToReader())
            {
                lock (_sendLock)
                    _flushing = false;
                ReleaseReference();
                return;
            }

            if (Volatile.Read(ref _closeNotified) != 0)
                Abort(DisconnectReason.PeerClosed);
        }
        else if (!IsSocketClosed)
        {
            Interlocked.CompareExchange(ref _exception, exception, null);
        }

        StopFlushing(error);
    }

    // --- Closing over the stream ---

    private static readonly Action<object> s_shutdownLayer = static state => ((Connection)state).ShutdownLayer();

    private static readonly Action<Task, object?> s_layerShutDown = static (written, state) => ((Connection)state!).LayerShutDown(written);

    /// <summary>
    /// A graceful close has sent everything queued: end the layer's side (TLS close_notify), then
    /// the socket's. The layer's shutdown must not run while a read decrypts (see
    /// <see cref="NetServer.Tls.ReadGate"/>): the gate runs it now, or as soon as the read waits for bytes or ends.
    /// </summary>
    private void StartLayerShutdown()
    {
        if (!TryAddReference())
            return;
        _gate!.Run(s_shutdownLayer, this); // the reference is released once the layer's end is written
    }

    /// <summary>
    /// Runs inside the gate, maybe on a reader's thread: only starts the shutdown (OpenSSL's part
    /// runs in this call) and leaves the rest to the thread pool, off the gate and the reader.
    /// </summary>
    private void ShutdownLayer()
    {
        Task written;
        try
        {
            written = _layer!.ShutdownAsync(_stream!);
        }
        catch (Exception e)
        {
            written = Task.FromException(e); // as if the write had failed: see LayerShutDown
        }

        written.ContinueWith(s_layerShutDown, this, CancellationToken.None, TaskContinuationOptions.None, TaskScheduler.Default);
    }

    private void LayerShutDown(Task written)
    {
        try
        {
            // A peer that is gone cannot be told more (the socket is closed below, or already):
            // a failed close_notify changes nothing, and the failure is observed here.
            _ = written.Exception;
            EndOurSide();
        }
        finally
        {
            ReleaseReference();
        }
    }
}
