using System.IO;

namespace NetServer.Streams;

/// <summary>
/// The compatible blocking receive (a synchronously connected client's <c>Receive</c>), on a plain
/// socket or over a secure layer's stream. It excludes the receive loop: only one reads at a time.
/// </summary>
internal sealed partial class Connection
{
    private Task<int>? _blockingRead;   // a blocking receive's read that outlived its timeout
    private byte[]? _blockingBuffer;    // where that read (or a larger earlier one) put its bytes
    private int _blockingOffset;
    private int _blockingCount;         // bytes read and not yet handed out
    private WaitPoint _blockingReadWait;

    /// <summary>
    /// Waits for data (up to <paramref name="timeoutMilliseconds"/>, 0 = no limit), copies it into the
    /// caller's buffer and raises OnReceived on the caller's thread. Not allowed while the receive
    /// loop runs (the two would race for the same bytes), nor with a protocol (which needs the loop
    /// to retain its input).
    /// </summary>
    public int ReceiveBlocking(byte[] buffer, int offset, int count, int timeoutMilliseconds)
    {
        if (_owner.Protocol is not null)
            ThrowHelper.ThrowInvalidOperation("Receive() cannot be used while a protocol handles the received bytes; start the receive loop with ReceiveAsync() instead.");
        if (_layer is not null && _poll is { } poll && poll.Loop.IsCurrent)
            ThrowHelper.ThrowInvalidOperation("Receive() of a TLS connection cannot wait on the thread of the loop it is pinned to: that loop must run to read and decrypt the data. Handle data in OnReceived, or call Receive() from another thread.");
        if (Interlocked.CompareExchange(ref _receiving, 1, 0) != 0)
            ThrowHelper.ThrowInvalidOperation("Receive() cannot be used while the asynchronous receive loop runs; handle data in OnReceived instead.");
        if (!TryAddReference())
        {
            Volatile.Write(ref _receiving, 0);
            return 0;
        }

        try
        {
            if (_layer is not null)
                return IsOpen && _stream is { } stream ? ReceiveFromStream(stream, buffer, offset, count, timeoutMilliseconds) : 0;
            while (IsOpen)
            {
                var received = SocketIO.TryReceive(_socket, buffer, offset, count, out var error);
                if (error == SocketError.WouldBlock)
                {
                    var ready = SocketIO.Poll(_socket, SelectMode.SelectRead, timeoutMilliseconds);
                    if (ready == SocketError.Success)
                        continue;
                    if (ready == SocketError.TimedOut)
                        return 0;
                    error = ready;
                }

                if (error != SocketError.Success)
                {
                    Fail(error);
                    return 0;
                }

                if (received == 0)
                {
                    Close(DisconnectReason.PeerClosed);
                    return 0;
                }

                _owner.CountReceived(received);
                NoteActivity();
                RaiseReceived(buffer, offset, received);
                return received;
            }

            return 0;
        }
        finally
        {
            Volatile.Write(ref _receiving, 0);
            ReleaseReference();
        }
    }

    /// <summary>
    /// The blocking receive of a secure connection. A stream read cannot be abandoned halfway
    /// through a TLS record, so a timeout does not cancel it: the read stays pending and the next
    /// call (or the receive loop, if started later) picks up its bytes.
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

            var timeout = timeoutMilliseconds > 0 ? TimeSpan.FromMilliseconds(timeoutMilliseconds) : Timeout.InfiniteTimeSpan;
            if (!_blockingReadWait.WaitUntil(_blockingRead, static read => read.IsCompleted, timeout))
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
        NoteActivity();
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
        connection._blockingReadWait.PulseAll();
    };

    /// <summary>
    /// Bytes a blocking receive read and did not hand out, or its read still pending: the receive
    /// loop, when started after blocking receives, takes them first.
    /// </summary>
    private async ValueTask<bool> TakeOverBlockingReadAsync()
    {
        if (_blockingRead is { } pending)
        {
            _blockingRead = null;
            _blockingOffset = 0;
            _blockingCount = await pending.ConfigureAwait(false);
            if (_blockingCount == 0)
            {
                Delivered(0, 0);
                return false;
            }
        }

        if (_blockingCount > 0)
        {
            var count = _blockingCount;
            _blockingCount = 0;
            _owner.CountReceived(count);
            if (IsOpen && RaiseReceived(_blockingBuffer!, _blockingOffset, count) < 0)
                return false;
        }

        return true;
    }
}
