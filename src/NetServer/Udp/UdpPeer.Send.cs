using System.Buffers;
using NetServer.Udp;

namespace NetServer;

public abstract partial class UdpPeer
{
    // --- Blocking sends (compatible) ---

    /// <summary>Sends a datagram and waits until the operating system has taken it (see <see cref="Send(EndPoint, ReadOnlySpan{byte})"/>).</summary>
    /// <returns>The datagram's size once sent; 0 if not started, refused or failed.</returns>
    public virtual long Send(EndPoint endpoint, byte[] buffer)
    {
        if (buffer is null)
            ThrowHelper.ThrowArgumentNull(nameof(buffer));
        return Send(endpoint, buffer, 0, buffer.Length);
    }

    /// <summary>Sends <paramref name="size"/> bytes of <paramref name="buffer"/> from <paramref name="offset"/> as one datagram and waits until the operating system has taken it.</summary>
    /// <returns>The datagram's size once sent; 0 if not started, refused or failed.</returns>
    public virtual long Send(EndPoint endpoint, byte[] buffer, long offset, long size)
    {
        ThrowHelper.ValidateRange(buffer, offset, size, out var start, out var count);
        return SendBlocking(endpoint, new ReadOnlySpan<byte>(buffer, start, count));
    }

    /// <summary>
    /// Sends a datagram to <paramref name="endpoint"/> and waits until the operating system has
    /// taken it (or refused it: OnError says why). A full send queue refuses it at once, as
    /// <see cref="SendAsync(EndPoint, ReadOnlySpan{byte})"/> does. Inside a NetServer hook it does
    /// not wait (waiting there could deadlock): it queues the datagram.
    /// </summary>
    /// <returns>The datagram's size once sent (or, inside a hook, accepted); 0 if not started, refused or failed.</returns>
    public virtual long Send(EndPoint endpoint, ReadOnlySpan<byte> buffer) => SendBlocking(endpoint, buffer);

    /// <summary>Sends <paramref name="text"/> as one UTF-8 datagram and waits until the operating system has taken it.</summary>
    /// <returns>The datagram's size once sent; 0 if not started, refused or failed.</returns>
    public virtual long Send(EndPoint endpoint, string text)
    {
        if (text is null)
            ThrowHelper.ThrowArgumentNull(nameof(text));
        return Send(endpoint, text.AsSpan());
    }

    /// <summary>Sends <paramref name="text"/> as one UTF-8 datagram and waits until the operating system has taken it.</summary>
    /// <returns>The datagram's size once sent; 0 if not started, refused or failed.</returns>
    public virtual long Send(EndPoint endpoint, ReadOnlySpan<char> text)
    {
        var array = ArrayPool<byte>.Shared.Rent(TextEncoding.MaxByteCount(text.Length));
        try
        {
            return Send(endpoint, array, 0, TextEncoding.Encode(text, array));
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(array);
        }
    }

    // --- Queued sends (compatible) ---

    /// <summary>Sends a datagram without waiting (see <see cref="SendAsync(EndPoint, ReadOnlySpan{byte})"/>).</summary>
    /// <returns>True if the datagram was sent or queued; false if not started, refused or failed at once.</returns>
    public virtual bool SendAsync(EndPoint endpoint, byte[] buffer)
    {
        if (buffer is null)
            ThrowHelper.ThrowArgumentNull(nameof(buffer));
        return SendAsync(endpoint, buffer, 0, buffer.Length);
    }

    /// <summary>Sends <paramref name="size"/> bytes of <paramref name="buffer"/> from <paramref name="offset"/> as one datagram without waiting.</summary>
    /// <returns>True if the datagram was sent or queued; false if not started, refused or failed at once.</returns>
    public virtual bool SendAsync(EndPoint endpoint, byte[] buffer, long offset, long size)
    {
        ThrowHelper.ValidateRange(buffer, offset, size, out var start, out var count);
        return SendQueued(endpoint, new ReadOnlySpan<byte>(buffer, start, count));
    }

    /// <summary>
    /// Sends a datagram to <paramref name="endpoint"/> and returns at once; the caller may reuse its
    /// buffer immediately. A send in flight never makes this fail: datagrams queue in order within
    /// <see cref="OptionSendBufferLimit"/>. One that does not fit is refused: nothing is queued,
    /// OnError reports <see cref="SocketError.NoBufferSpaceAvailable"/> and the result is false
    /// (use the awaitable overload to wait for room instead). A datagram the system refuses (a bad
    /// endpoint, too large) is reported through OnError, here or once its turn comes.
    /// </summary>
    /// <returns>True if the datagram was sent or queued; false if not started, refused or failed at once.</returns>
    public virtual bool SendAsync(EndPoint endpoint, ReadOnlySpan<byte> buffer) => SendQueued(endpoint, buffer);

    /// <summary>Sends <paramref name="text"/> as one UTF-8 datagram without waiting.</summary>
    /// <returns>True if the datagram was sent or queued; false if not started, refused or failed at once.</returns>
    public virtual bool SendAsync(EndPoint endpoint, string text)
    {
        if (text is null)
            ThrowHelper.ThrowArgumentNull(nameof(text));
        return SendAsync(endpoint, text.AsSpan());
    }

    /// <summary>Sends <paramref name="text"/> as one UTF-8 datagram without waiting.</summary>
    /// <returns>True if the datagram was sent or queued; false if not started, refused or failed at once.</returns>
    public virtual bool SendAsync(EndPoint endpoint, ReadOnlySpan<char> text)
    {
        var array = ArrayPool<byte>.Shared.Rent(TextEncoding.MaxByteCount(text.Length));
        try
        {
            return SendAsync(endpoint, array, 0, TextEncoding.Encode(text, array));
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(array);
        }
    }

    // --- Awaitable send with backpressure ---

    /// <summary>
    /// Sends a datagram with backpressure: completes once the datagram is sent or queued within
    /// <see cref="OptionSendBufferLimit"/>, at once when there is room, otherwise when enough queued
    /// datagrams have gone out (parked senders are served in arrival order). The memory must stay
    /// unchanged until the task completes.
    /// </summary>
    /// <returns>True once sent or queued; false if not started (or stopped while waiting) or if the datagram failed at once.</returns>
    /// <exception cref="OperationCanceledException"><paramref name="cancellationToken"/> fired while waiting; nothing was queued.</exception>
    public ValueTask<bool> SendAsync(EndPoint endpoint, ReadOnlyMemory<byte> buffer, CancellationToken cancellationToken = default)
    {
        if (cancellationToken.IsCancellationRequested)
            return new ValueTask<bool>(Task.FromCanceled<bool>(cancellationToken));
        var channel = Channel;
        if (channel is null || !CheckDatagram(channel, endpoint, WireLength(buffer.Length)))
            return new ValueTask<bool>(false);
        return _security is null
            ? SendAwaitable(channel, endpoint, buffer, cancellationToken)
            : SendAwaitableSealed(channel, endpoint, buffer.Span, cancellationToken);
    }

    // --- Shared paths: checked here, sealed by UdpPeer.Secure.cs for secure peers, then sent ---

    private bool SendQueued(EndPoint endpoint, ReadOnlySpan<byte> data)
    {
        var channel = Channel;
        if (channel is null || !CheckDatagram(channel, endpoint, WireLength(data.Length)))
            return false;
        return _security is null ? SendQueued(channel, endpoint, data) : SendQueuedSealed(channel, endpoint, data);
    }

    private static bool SendQueued(DatagramChannel channel, EndPoint endpoint, ReadOnlySpan<byte> data)
    {
        var status = channel.Send(endpoint, data, roomWaiter: null, completion: null);
        if (status == DatagramSendStatus.Full)
            channel.ReportError(SocketError.NoBufferSpaceAvailable);
        return status is DatagramSendStatus.Sent or DatagramSendStatus.Queued;
    }

    private long SendBlocking(EndPoint endpoint, ReadOnlySpan<byte> data)
    {
        var channel = Channel;
        if (channel is null || !CheckDatagram(channel, endpoint, WireLength(data.Length)))
            return 0;
        return _security is null ? SendBlocking(channel, endpoint, data) : SendBlockingSealed(channel, endpoint, data);
    }

    private static long SendBlocking(DatagramChannel channel, EndPoint endpoint, ReadOnlySpan<byte> data)
    {
        // Outside hooks the caller waits for a queued datagram's outcome; inside one it cannot, nor on
        // the socket's own loop (the datagram leaves from that very thread, later).
        var completion = CallbackScope.IsActive || channel.IsOnOwnLoop ? null : SendWaiter.ForFlush(0, synchronous: true);
        switch (channel.Send(endpoint, data, roomWaiter: null, completion))
        {
            case DatagramSendStatus.Sent:
                return data.Length;
            case DatagramSendStatus.Queued:
                return completion is null || completion.WaitSynchronously() ? data.Length : 0;
            case DatagramSendStatus.Full:
                channel.ReportError(SocketError.NoBufferSpaceAvailable);
                return 0;
            default:
                return 0;
        }
    }

    /// <summary>The awaitable send of checked (and, for a secure peer, sealed) bytes: at once when there is room, else parked.</summary>
    private static ValueTask<bool> SendAwaitable(DatagramChannel channel, EndPoint endpoint, ReadOnlyMemory<byte> buffer, CancellationToken cancellationToken)
    {
        var status = channel.Send(endpoint, buffer.Span, roomWaiter: null, completion: null);
        if (status != DatagramSendStatus.Full)
            return new ValueTask<bool>(status is DatagramSendStatus.Sent or DatagramSendStatus.Queued);

        var waiter = SendWaiter.ForDatagram(endpoint, buffer);
        status = channel.Send(endpoint, buffer.Span, waiter, completion: null);
        if (status != DatagramSendStatus.Waiting)
        {
            // Room appeared meanwhile (or the socket closed): the waiter was never parked.
            if (waiter.TryClaim())
                waiter.Finish(false);
            return new ValueTask<bool>(status is DatagramSendStatus.Sent or DatagramSendStatus.Queued);
        }

        waiter.RegisterCancellation(cancellationToken);
        return new ValueTask<bool>(waiter.Task);
    }

    /// <summary>
    /// Refuses what can never be sent before it takes room: a missing endpoint or one that is not an
    /// IP endpoint (argument errors), and a datagram larger than UDP can carry (OnError: MessageSize).
    /// </summary>
    private static bool CheckDatagram(DatagramChannel channel, EndPoint endpoint, long length)
    {
        if (endpoint is null)
            ThrowHelper.ThrowArgumentNull(nameof(endpoint));
        if (endpoint is not IPEndPoint)
            throw new ArgumentException("A datagram goes to an IPEndPoint; resolve a host name first (Dns.GetHostAddresses).", nameof(endpoint));
        if (length <= MaxDatagramPayload)
            return true;
        channel.ReportError(SocketError.MessageSize);
        return false;
    }
}
