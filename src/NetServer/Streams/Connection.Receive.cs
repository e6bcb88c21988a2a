using System;
using System.Net.Sockets;
using System.Threading;
using System.Threading.Tasks;
using NetServer.Buffers;
using NetServer.Internal;
using NetServer.Transport;

namespace NetServer.Streams;

/// <summary>
/// The receive side: one loop per connection, so OnReceived never runs concurrently with itself
/// and bytes arrive in order. An idle connection waits with a zero-byte receive and holds no
/// buffer; a busy one reads straight into a pooled buffer that grows (doubling, up to the
/// receive limit) while reads fill it and shrinks back when they stop doing so.
/// </summary>
internal sealed partial class Connection
{
    /// <summary>Largest read when no receive limit is set.</summary>
    internal const int DefaultMaxReadSize = 64 * 1024;

    private readonly PooledBuffer _receiveBuffer;
    private SocketAwaitableEventArgs? _receiver;
    private int _receiving;
    private int _readSize;
    private int _minReadSize;

    /// <summary>
    /// Starts the receive loop; does nothing if it already runs or the socket is closed. During a
    /// graceful close it still starts: it reads (and discards) until the peer ends its side.
    /// </summary>
    public void StartReceiving()
    {
        _reads = true;
        if (!MayReceive() || Interlocked.CompareExchange(ref _receiving, 1, 0) != 0)
            return;
        if (!IsReadable || !TryAddReference())
        {
            Volatile.Write(ref _receiving, 0);
            return;
        }

        ConfigureReadSize();
        _ = _stream is { } stream ? StreamReceiveLoopAsync(stream) : ReceiveLoopAsync();
    }

    /// <summary>Open or gracefully closing: the receive loop keeps reading (delivering only while open).</summary>
    private bool IsReadable => Volatile.Read(ref _state) < StateClosed;

    private void ConfigureReadSize()
    {
        var limit = _owner.OptionReceiveBufferLimit;
        var size = Math.Max(1, _owner.OptionReceiveBufferSize);
        var max = limit > 0 ? limit : Math.Max(size, DefaultMaxReadSize);
        _minReadSize = Math.Min(size, max);
        _readSize = _minReadSize;
        _receiveBuffer.Limit = max;
    }

    private async Task ReceiveLoopAsync()
    {
        // Read at once: a new connection often has data waiting. While a graceful close is under
        // way the loop goes on reading, and discards, until the peer ends its side.
        var waitFirst = false;
        try
        {
            while (IsReadable)
            {
                if (waitFirst)
                {
                    var waited = await (_receiver ??= new SocketAwaitableEventArgs()).WaitForDataAsync(_socket).ConfigureAwait(false);
                    if (!waited.IsSuccess)
                    {
                        Fail(waited.Error);
                        break;
                    }

                    if (!IsReadable)
                        break;
                }

                _receiveBuffer.TryGetWritable(_readSize, out var free);
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

                var next = Delivered(received, free);
                if (next == ReadNext.Stop)
                    break;
                waitFirst = next == ReadNext.Wait;
            }
        }
        finally
        {
            Volatile.Write(ref _receiving, 0);
            ReleaseReference();
        }
    }

    /// <summary>What a receive loop does after a read.</summary>
    private enum ReadNext
    {
        /// <summary>The connection is ending: leave the loop.</summary>
        Stop,

        /// <summary>The read filled the buffer: read again at once.</summary>
        Read,

        /// <summary>The transport is probably drained: wait for data (holding no buffer) before reading.</summary>
        Wait,
    }

    /// <summary>
    /// Handles the result of a read of <paramref name="received"/> bytes into <paramref name="free"/>,
    /// whatever the transport: the peer's end of stream, statistics, OnReceived, the read size.
    /// </summary>
    private ReadNext Delivered(int received, ArraySegment<byte> free)
    {
        if (received == 0)
        {
            // The peer finished sending: flush what we still owe it, then close.
            _receiveBuffer.Release();
            Interlocked.Exchange(ref _peerEnded, 1);
            if (!Close(DisconnectReason.PeerClosed))
                PeerEnded(); // already closing: this was the end the close waited for
            return ReadNext.Stop;
        }

        _owner.CountReceived(received);
        if (IsOpen && !RaiseReceived(free.Array!, free.Offset, received))
            return ReadNext.Stop;

        if (!AdaptReadSize(received, free.Count))
            return ReadNext.Read;
        _receiveBuffer.Release();
        return ReadNext.Wait;
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

    /// <summary>
    /// The compatible blocking receive: waits for data (up to <paramref name="timeoutMilliseconds"/>,
    /// 0 = no limit), copies it into the caller's buffer and raises OnReceived on the caller's thread.
    /// Not allowed while the receive loop runs (the two would race for the same bytes).
    /// </summary>
    public int ReceiveBlocking(byte[] buffer, int offset, int count, int timeoutMilliseconds)
    {
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

    /// <summary>Runs OnReceived; false if the hook threw (the connection is then closing).</summary>
    private bool RaiseReceived(byte[] array, int offset, int count)
    {
        CallbackScope.Enter();
        try
        {
            _owner.InvokeReceived(array, offset, count);
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
}
