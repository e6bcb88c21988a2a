using System;
using System.Net;
using System.Net.Sockets;
using System.Threading;
using System.Threading.Tasks;
using NetServer.Internal;
using NetServer.Transport;

namespace NetServer.Udp;

/// <summary>
/// The receive side: one loop per socket, so OnReceived never runs concurrently with itself, and
/// one OnReceived per datagram. The loop receives while someone wants it to: each
/// <c>ReceiveAsync()</c> asks for one more datagram (asking again before it came changes nothing),
/// or <c>OptionAutoReceive</c> asks for all of them. A <c>ReceiveAsync()</c> made inside
/// OnReceived only raises the wish; the running loop takes the next datagram when the hook
/// returns, so no rate of datagrams can deepen the stack.
/// </summary>
internal sealed partial class DatagramChannel
{
    private static readonly Action<object?> s_receiveLoop = static state => _ = ((DatagramChannel)state!).ReceiveLoopAsync();

    /// <summary>Errors in a row after which the loop pauses briefly, so a socket that fails every call cannot spin.</summary>
    private const int ErrorsBeforePause = 16;

    private int _receiveWanted;
    private int _receiving;

    /// <summary>
    /// Asks for the next datagram (the compatible <c>ReceiveAsync()</c>, and <c>OptionAutoReceive</c>
    /// at start). Starts the loop on the thread pool unless it runs already; never runs a hook on the
    /// caller's thread.
    /// </summary>
    public void RequestReceive()
    {
        Volatile.Write(ref _receiveWanted, 1);
        if (!IsOpen || Interlocked.CompareExchange(ref _receiving, 1, 0) != 0)
            return;
        if (!TryAddReference())
        {
            Volatile.Write(ref _receiving, 0);
            return;
        }

        ThreadPoolScheduler.Schedule(s_receiveLoop, this);
    }

    /// <summary>Takes the wish for one more datagram (always there with <c>OptionAutoReceive</c>).</summary>
    private bool TakeReceiveWish() => _owner.OptionAutoReceive || Interlocked.Exchange(ref _receiveWanted, 0) != 0;

    /// <summary>A datagram was not delivered: the wish it consumed still stands.</summary>
    private void RestoreReceiveWish() => Volatile.Write(ref _receiveWanted, 1);

    private async Task ReceiveLoopAsync()
    {
        // One more byte than the largest datagram delivered: a datagram that fills it was truncated by the kernel.
        var limit = _owner.OptionMaxDatagramSize;
        var size = limit + 1;
        var buffer = _pool.Rent(size);
        var errors = 0;
        try
        {
            while (IsOpen && TakeReceiveWish())
            {
                var result = await _transport.ReceiveAsync(buffer, size).ConfigureAwait(false);
                if (!result.IsSuccess)
                {
                    RestoreReceiveWish();
                    if (!IsOpen)
                        break;
                    if (IsSocketGone(result.Error))
                    {
                        // The socket was closed under the channel (not through Stop or Disconnect): end it.
                        Close();
                        break;
                    }

                    RaiseError(result.Error);
                    if (++errors >= ErrorsBeforePause)
                    {
                        errors = 0;
                        await Task.Delay(10).ConfigureAwait(false);
                    }

                    continue;
                }

                errors = 0;
                var received = result.BytesTransferred;
                if (received > limit)
                {
                    RestoreReceiveWish();
                    RaiseError(SocketError.MessageSize);
                    continue;
                }

                _owner.CountReceived(received);
                RaiseReceived(_transport.Source, buffer, received);
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

    /// <summary>Errors that mean the socket itself is gone, not that one datagram failed.</summary>
    private static bool IsSocketGone(SocketError error) =>
        error is SocketError.OperationAborted or SocketError.NotSocket or SocketError.Shutdown;

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
            ThrowHelper.ThrowInvalidOperation("Receive() cannot be used while ReceiveAsync() or OptionAutoReceive keeps receiving; handle datagrams in OnReceived instead.");
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

    /// <summary>Runs OnReceived; a hook that throws is reported through OnError(Exception) and receiving goes on.</summary>
    private void RaiseReceived(EndPoint source, byte[] buffer, int count, int offset = 0)
    {
        CallbackScope.Enter();
        try
        {
            _owner.InvokeReceived(source, buffer, offset, count);
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
