using NetServer.Tls;
using System;
using System.IO;
using System.Net.Sockets;
using System.Threading;
using System.Threading.Tasks;
using NetServer.Buffers;
using NetServer.Internal;
using NetServer.Transport;

namespace NetServer.Streams;

/// <summary>
/// The same engine over a secure layer (TLS). Plain connections and secure ones share the
/// lifecycle, the send queue and its flusher role, limits, statistics and hooks; they differ in
/// two primitives only: how received bytes are read (socket reads vs. stream reads) and how the
/// flusher hands bytes on (non-blocking socket sends vs. stream writes). Until the handshake has
/// produced the stream, the handshake holds the flusher role, so sends only queue, and the receive
/// loop waits.
/// </summary>
internal sealed partial class Connection
{
    private readonly SecureLayer? _layer;
    private readonly ReadGate? _gate; // with a layer: lets its shutdown run only while no read decrypts
    private readonly TaskCompletionSource<bool>? _handshake;
    private Stream? _stream;
    private int _secured;        // the handshake succeeded: the stream carries the application bytes
    private int _receiveWanted;  // someone asked for the receive loop before the handshake finished
    private int _handshakeOutcome; // 0 while it runs, then HandshakeSucceeded or HandshakeFailed

    private const int HandshakeSucceeded = 1;
    private const int HandshakeFailedOutcome = 2;

    /// <summary>True once the handshake of a secure connection has succeeded (always false without a layer).</summary>
    public bool IsSecured => Volatile.Read(ref _secured) != 0;

    /// <summary>True while a secure connection's handshake is still running.</summary>
    public bool IsHandshaking => _layer is not null && !IsSecured && !IsSocketClosed && !IsHandshakeOver;

    private bool IsHandshakeOver => Volatile.Read(ref _handshakeOutcome) != 0;

    /// <summary>The stream of a secure connection once its handshake succeeded.</summary>
    public Stream? SecureStream => IsSecured ? _stream : null;

    /// <summary>
    /// After the connect hooks (the creator still holds the connection): a plain connection is
    /// ready at once: OnEmpty through the flusher, then the receive loop. A secure one runs its
    /// handshake first and does the same once it succeeds. No handshake hook runs once the
    /// connection began to close; a close with nothing queued abandons the handshake (see
    /// <see cref="BeginClose"/>), one with bytes queued lets it finish silently to send them.
    /// </summary>
    public void Open(bool startReceiving)
    {
        if (_layer is null)
        {
            if (IsOpen)
                _owner.InvokeReady();
            FlushLoop(); // as the flusher since the constructor: what the hooks queued, then OnEmpty
            if (startReceiving)
                StartReceiving();
            return;
        }

        if (startReceiving)
            StartReceiving(); // only noted until the handshake succeeds
        _ = HandshakeAsync(_layer);
    }

    /// <summary>
    /// Completes with true once the handshake succeeded (and OnHandshaked has run), false when it
    /// failed or the connection closed first. Plain connections complete at once with true.
    /// </summary>
    public Task<bool> WhenHandshakeDone() => _handshake?.Task ?? Task.FromResult(true);

    /// <summary>
    /// Blocks until the handshake is over (see <see cref="WhenHandshakeDone"/>) and returns whether it
    /// succeeded. It sets no limit of its own: the handshake always ends, by its own timeout, by a
    /// close (Disconnect, Dispose) or by the peer. It waits inside a hook too (a synchronous connect
    /// blocks there anyway): the handshake never needs the waiting thread.
    /// </summary>
    public bool WaitForHandshake()
    {
        if (_handshake is null)
            return true;
        lock (this)
        {
            while (!IsHandshakeOver)
                Monitor.Wait(this);
        }

        return Volatile.Read(ref _handshakeOutcome) == HandshakeSucceeded;
    }

    private async Task HandshakeAsync(SecureLayer layer)
    {
        Exception? failure = null;
        Stream? stream = null;

        // No handshake hook may follow OnDisconnecting; a close that abandoned the handshake (in a
        // connect hook, or in OnHandshaking) closed the socket: then there is no handshake at all.
        if ((IsOpen && !RaiseHandshakeHook(static owner => owner.InvokeHandshaking())) || IsSocketClosed)
        {
            HandshakeOver(false);
            return;
        }

        using (var timeout = new CancellationTokenSource(layer.HandshakeTimeout))
        {
            try
            {
                stream = await layer.AuthenticateAsync(_socket, _gate!, timeout.Token).ConfigureAwait(false);
            }
            catch (OperationCanceledException) when (timeout.IsCancellationRequested)
            {
                failure = new TimeoutException(
                    $"The TLS handshake did not complete within {layer.HandshakeTimeout.TotalSeconds:0.###} s; the connection was closed.");
            }
            catch (Exception e)
            {
                failure = e;
            }
        }

        if (stream is null)
        {
            // A connection closed meanwhile (Stop, Dispose, an abandoning Disconnect, the linger
            // timeout) ended the handshake: not its failure. One that is closing gracefully (to
            // send what it queued) keeps the failure but raises no hook after OnDisconnecting.
            if (!IsSocketClosed)
            {
                failure ??= new IOException("The handshake produced no stream.");
                if (IsOpen)
                    RaiseHandshakeFailed(failure);
                Abort(DisconnectReason.HandshakeFailed, failure);
            }

            HandshakeOver(false);
            return;
        }

        Volatile.Write(ref _stream, stream);
        Interlocked.Exchange(ref _secured, 1);
        if (IsOpen && RaiseHandshakeHook(static owner => owner.InvokeHandshaked()) && IsOpen)
            _owner.InvokeReady();
        HandshakeOver(IsOpen);

        // Same order as a plain connection: OnEmpty through the flusher, then the receive loop.
        // A graceful close begun meanwhile still gets what was queued, then the layer's close.
        FlushLoop();
        if (Interlocked.CompareExchange(ref _receiveWanted, 0, 0) != 0)
            StartReceiving();
    }

    /// <summary>Ends the handshake phase: wakes waiters; on failure gives up the flusher role the handshake held.</summary>
    private void HandshakeOver(bool succeeded)
    {
        lock (this)
        {
            Volatile.Write(ref _handshakeOutcome, succeeded ? HandshakeSucceeded : HandshakeFailedOutcome);
            Monitor.PulseAll(this);
        }

        _handshake!.TrySetResult(succeeded);

        if (!IsSecured)
        {
            lock (_sendLock)
                _flushing = false;
            ReleaseReference();
        }
    }

    /// <summary>
    /// StartReceiving before the handshake succeeded only notes the wish; the handshake starts the
    /// loop. Returns true if the loop may start now.
    /// </summary>
    private bool MayReceive()
    {
        if (_layer is null)
            return true;
        Interlocked.Exchange(ref _receiveWanted, 1);
        return Volatile.Read(ref _secured) != 0; // the handshake re-checks the wish after setting this
    }

    private bool RaiseHandshakeHook(Action<StreamConnection> hook)
    {
        CallbackScope.Enter();
        try
        {
            hook(_owner);
            return true;
        }
        catch (Exception e)
        {
            HandlerFailed(e);
            return false;
        }
        finally
        {
            CallbackScope.Exit();
        }
    }

    private void RaiseHandshakeFailed(Exception failure)
    {
        CallbackScope.Enter();
        try
        {
            _owner.InvokeHandshakeFailed(failure);
        }
        catch (Exception e)
        {
            // The connection is being closed for the handshake failure; keep the hook's own failure visible too.
            Interlocked.CompareExchange(ref _exception, e, null);
        }
        finally
        {
            CallbackScope.Exit();
        }
    }

    // --- Receiving over the stream ---

    private async Task StreamReceiveLoopAsync(Stream stream)
    {
        var waitFirst = false;
        try
        {
            // A blocking receive that timed out left its read pending, or bytes not yet handed out: they come first.
            if (_blockingRead is { } pending)
            {
                _blockingRead = null;
                _blockingOffset = 0;
                _blockingCount = await pending.ConfigureAwait(false);
                if (_blockingCount == 0)
                {
                    Delivered(0, default);
                    return;
                }
            }

            if (_blockingCount > 0)
            {
                var count = _blockingCount;
                _blockingCount = 0;
                _owner.CountReceived(count);
                if (IsOpen && !RaiseReceived(_blockingBuffer!, _blockingOffset, count))
                    return;
            }

            // Every read goes through the gate (no allocation, no lock across it): between reads,
            // or while a read waits for bytes, the layer's shutdown may run.
            var gate = _gate!;
            while (IsReadable)
            {
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

                    if (!IsReadable)
                        break;
                }

                _receiveBuffer.TryGetWritable(_readSize, out var free);
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

                var next = Delivered(received, free);
                if (next == ReadNext.Stop)
                    break;
                waitFirst = next == ReadNext.Wait;
            }
        }
        catch (Exception e)
        {
            _receiveBuffer.Release();
            StreamFailed(e);
        }
        finally
        {
            Volatile.Write(ref _receiving, 0);
            ReleaseReference();
        }
    }

    private Task<int>? _blockingRead;   // a blocking receive's read that outlived its timeout
    private byte[]? _blockingBuffer;    // where that read (or a larger earlier one) put its bytes
    private int _blockingOffset;
    private int _blockingCount;         // bytes read and not yet handed out

    /// <summary>
    /// The blocking receive of a secure connection (a synchronously connected client). A stream
    /// read cannot be abandoned halfway through a TLS record, so a timeout does not cancel it: the
    /// read stays pending and the next call picks up its bytes.
    /// </summary>
    private int ReceiveFromStream(Stream stream, byte[] buffer, int offset, int count, int timeoutMilliseconds)
    {
        if (_blockingCount == 0)
        {
            if (_blockingRead is null)
            {
                _blockingBuffer ??= _pool.Rent(Math.Max(count, _owner.OptionReceiveBufferSize));
                _gate!.EnterRead();
                try
                {
                    _blockingRead = StreamIO.ReadAsync(stream, new ArraySegment<byte>(_blockingBuffer, 0, Math.Min(count, _blockingBuffer.Length))).AsTask();
                }
                catch (Exception e)
                {
                    _gate.ExitRead();
                    StreamFailed(e);
                    return 0;
                }

                // Once per read, however many calls time out waiting for it: the gate learns that
                // it ended, and a blocking receive waiting for it wakes up.
                _blockingRead.ContinueWith(s_blockingReadEnded, this, CancellationToken.None, TaskContinuationOptions.ExecuteSynchronously, TaskScheduler.Default);
            }

            if (!WaitForBlockingRead(_blockingRead, timeoutMilliseconds))
                return 0; // timed out; still connected, the read goes on

            var read = _blockingRead;
            _blockingRead = null;
            int received;
            try
            {
                received = read.GetAwaiter().GetResult(); // completed (waited for above): takes its result or exception, never blocks
            }
            catch (Exception e)
            {
                StreamFailed(e);
                return 0;
            }

            if (received == 0)
            {
                Close(DisconnectReason.PeerClosed);
                return 0;
            }

            _blockingOffset = 0;
            _blockingCount = received;
        }

        var taken = Math.Min(count, _blockingCount);
        System.Buffer.BlockCopy(_blockingBuffer!, _blockingOffset, buffer, offset, taken);
        _blockingOffset += taken;
        _blockingCount -= taken;
        _owner.CountReceived(taken);
        RaiseReceived(buffer, offset, taken);
        return taken;
    }

    /// <summary>Returns a blocking receive's buffer once the connection is finished (after its read ended, which the close ensures).</summary>
    private void ReturnBlockingBuffer()
    {
        var buffer = _blockingBuffer;
        _blockingBuffer = null;
        if (buffer is null)
            return;
        if (_blockingRead is { IsCompleted: false } read)
            read.ContinueWith(static (_, state) => ((Tuple<BufferPool, byte[]>)state!).Item1.Return(((Tuple<BufferPool, byte[]>)state).Item2), Tuple.Create(_pool, buffer), CancellationToken.None, TaskContinuationOptions.ExecuteSynchronously, TaskScheduler.Default);
        else
            _pool.Return(buffer);
    }

    private static readonly Action<Task<int>, object?> s_blockingReadEnded = static (_, state) =>
    {
        var connection = (Connection)state!;
        connection._gate!.ExitRead();
        lock (connection)
            Monitor.PulseAll(connection);
    };

    /// <summary>
    /// Waits for a blocking receive's read (0 = no limit); false on timeout. The read's end pulses
    /// this object (registered once, when the read started).
    /// </summary>
    private bool WaitForBlockingRead(Task<int> read, int timeoutMilliseconds)
    {
        if (read.IsCompleted)
            return true;

        var deadline = timeoutMilliseconds > 0 ? DateTime.UtcNow.AddMilliseconds(timeoutMilliseconds) : DateTime.MaxValue;
        lock (this)
        {
            while (!read.IsCompleted)
            {
                var left = deadline == DateTime.MaxValue ? Timeout.InfiniteTimeSpan : deadline - DateTime.UtcNow;
                if (left != Timeout.InfiniteTimeSpan && left <= TimeSpan.Zero)
                    return false;
                Monitor.Wait(this, left);
            }
        }

        return true;
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

    // --- Sending over the stream ---

    /// <summary>
    /// The flusher's loop for a secure connection: one stream write per in-flight segment, or one
    /// for a staged run of small ones (each write becomes at least one TLS record, so many small
    /// multicast messages are copied together first). A write that completes at once continues the
    /// loop here; one that is pending continues it from its completion.
    /// </summary>
    private void StreamFlushLoop(Stream stream)
    {
        while (true)
        {
            if (Volatile.Read(ref _state) >= StateClosed)
            {
                StopFlushing(SocketError.OperationAborted);
                return;
            }

            if (!_queue.HasInflight && !TakeMore())
                return;

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
                _ = AwaitStreamWriteAsync(stream, write, chunk.Count, staging);
                return;
            }

            if (!StreamWriteDone(write, chunk.Count, staging))
                return;
        }
    }

    /// <summary>Largest single stream write (four TLS records).</summary>
    private const int MaxStreamWrite = 64 * 1024;

    private async Task AwaitStreamWriteAsync(Stream stream, ValueTask write, int count, byte[]? staging)
    {
        try
        {
            await write.ConfigureAwait(false);
        }
        catch (Exception e)
        {
            StreamWriteFailed(e, staging);
            return;
        }

        if (StreamWriteDone(default, count, staging))
            StreamFlushLoop(stream);
    }

    /// <summary>Accounts a finished write; false if it failed (the flusher role is then given up).</summary>
    private bool StreamWriteDone(ValueTask write, int count, byte[]? staging)
    {
        try
        {
            write.GetAwaiter().GetResult(); // a completed ValueTask: consumes it (its result or exception), never blocks
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

    private void StreamWriteFailed(Exception exception, byte[]? staging)
    {
        if (staging is not null)
            _pool.Return(staging);
        Volatile.Write(ref _bytesSending, 0);
        if (!IsSocketClosed && !SocketErrors.IsDisconnect(SocketErrors.FromException(exception)))
            Interlocked.CompareExchange(ref _exception, exception, null);
        StopFlushing(SocketErrors.FromException(exception));
    }

    // --- Closing over the stream ---

    private static readonly Action<object> s_shutdownLayer = static state => ((Connection)state).ShutdownLayer();

    private static readonly Action<Task, object?> s_layerShutDown = static (written, state) => ((Connection)state!).LayerShutDown(written);

    /// <summary>
    /// A graceful close has sent everything queued: end the layer's side (TLS close_notify), then
    /// the socket's. The layer's shutdown must not run while a read decrypts (see
    /// <see cref="ReadGate"/>): the gate runs it now, or as soon as the read waits for bytes or ends.
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
