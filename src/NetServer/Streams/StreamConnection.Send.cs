using System.Buffers;

namespace NetServer;

public abstract partial class StreamConnection
{
    private SharedBuffer? _multicastPayload;

    /// <summary>
    /// Set by a server while a multicast goes through this session's own <c>SendAsync</c> override:
    /// when the override passes the payload on unchanged, the queued send takes it by reference and
    /// on the flusher, as a multicast without override does, instead of a copy and a send from the
    /// multicasting thread.
    /// </summary>
    internal SharedBuffer? MulticastPayload
    {
        get => _multicastPayload;
        set => _multicastPayload = value;
    }

    // --- Blocking sends (compatible) ---

    /// <summary>Sends bytes and waits until the operating system has taken them (see <see cref="Send(ReadOnlySpan{byte})"/>).</summary>
    /// <returns>The number of bytes sent; 0 if not connected or refused.</returns>
    public virtual long Send(byte[] buffer)
    {
        if (buffer is null)
            ThrowHelper.ThrowArgumentNull(nameof(buffer));
        return Send(buffer, 0, buffer.Length);
    }

    /// <summary>Sends <paramref name="size"/> bytes of <paramref name="buffer"/> from <paramref name="offset"/> and waits until the operating system has taken them.</summary>
    /// <returns>The number of bytes sent; 0 if not connected or refused.</returns>
    public virtual long Send(byte[] buffer, long offset, long size)
    {
        // Through the span overload, as in NetCoreServer: overriding that one sees every blocking send.
        ThrowHelper.ValidateRange(buffer, offset, size, out var start, out var count);
        return Send(new ReadOnlySpan<byte>(buffer, start, count));
    }

    /// <summary>
    /// Sends bytes and waits until the operating system has taken them, in order with every other
    /// send. Inside a NetServer hook it does not wait (waiting there could deadlock): it queues the
    /// bytes like <see cref="SendAsync(ReadOnlySpan{byte})"/>.
    /// </summary>
    /// <returns>The number of bytes sent; 0 if not connected or refused.</returns>
    public virtual long Send(ReadOnlySpan<byte> buffer) => SendBlocking(buffer);

    /// <summary>Sends <paramref name="text"/> as UTF-8 and waits until the operating system has taken it.</summary>
    /// <returns>The number of bytes sent; 0 if not connected or refused.</returns>
    public virtual long Send(string text)
    {
        if (text is null)
            ThrowHelper.ThrowArgumentNull(nameof(text));
        return Send(text.AsSpan());
    }

    /// <summary>Sends <paramref name="text"/> as UTF-8 and waits until the operating system has taken it.</summary>
    /// <returns>The number of bytes sent; 0 if not connected or refused.</returns>
    public virtual long Send(ReadOnlySpan<char> text)
    {
        var array = ArrayPool<byte>.Shared.Rent(TextEncoding.MaxByteCount(text.Length));
        try
        {
            return Send(array, 0, TextEncoding.Encode(text, array));
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(array);
        }
    }

    // --- Queued sends (compatible) ---

    /// <summary>Queues bytes for sending and returns at once (see <see cref="SendAsync(ReadOnlySpan{byte})"/>).</summary>
    /// <returns>True if the bytes were accepted; false if not connected or the send limit refused them.</returns>
    public virtual bool SendAsync(byte[] buffer)
    {
        if (buffer is null)
            ThrowHelper.ThrowArgumentNull(nameof(buffer));
        return SendAsync(buffer, 0, buffer.Length);
    }

    /// <summary>Queues <paramref name="size"/> bytes of <paramref name="buffer"/> from <paramref name="offset"/> and returns at once.</summary>
    /// <returns>True if the bytes were accepted; false if not connected or the send limit refused them.</returns>
    public virtual bool SendAsync(byte[] buffer, long offset, long size)
    {
        // Through the span overload, as in NetCoreServer: overriding that one sees every queued send.
        ThrowHelper.ValidateRange(buffer, offset, size, out var start, out var count);
        return SendAsync(new ReadOnlySpan<byte>(buffer, start, count));
    }

    /// <summary>
    /// Queues bytes for sending and returns at once; the caller may reuse its buffer immediately.
    /// When nothing else is queued the bytes go straight to the operating system without a copy.
    /// True means the bytes will be sent unless the connection ends first. If they would take the
    /// queue past <see cref="OptionSendBufferLimit"/>, nothing is queued, OnError reports
    /// <see cref="SocketError.NoBufferSpaceAvailable"/> and the result is false.
    /// </summary>
    /// <returns>True if the bytes were accepted; false if not connected or the send limit refused them.</returns>
    public virtual bool SendAsync(ReadOnlySpan<byte> buffer) => SendQueued(buffer);

    /// <summary>Queues <paramref name="text"/> as UTF-8 and returns at once.</summary>
    /// <returns>True if the text was accepted; false if not connected or the send limit refused it.</returns>
    public virtual bool SendAsync(string text)
    {
        if (text is null)
            ThrowHelper.ThrowArgumentNull(nameof(text));
        return SendAsync(text.AsSpan());
    }

    /// <summary>Queues <paramref name="text"/> as UTF-8 and returns at once.</summary>
    /// <returns>True if the text was accepted; false if not connected or the send limit refused it.</returns>
    public virtual bool SendAsync(ReadOnlySpan<char> text)
    {
        var array = ArrayPool<byte>.Shared.Rent(TextEncoding.MaxByteCount(text.Length));
        try
        {
            return SendAsync(array, 0, TextEncoding.Encode(text, array));
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(array);
        }
    }

    // --- Awaitable send with backpressure ---

    /// <summary>
    /// Sends bytes with backpressure: completes as soon as the bytes are accepted into the send
    /// queue within <see cref="OptionSendBufferLimit"/>, at once when there is room, otherwise when
    /// enough queued bytes have gone out (parked senders are served in arrival order). The memory
    /// must stay unchanged until the task completes.
    /// </summary>
    /// <returns>True once accepted; false if the connection is closed (or closes while waiting).</returns>
    /// <exception cref="OperationCanceledException"><paramref name="cancellationToken"/> fired while waiting; nothing was queued.</exception>
    public ValueTask<bool> SendAsync(ReadOnlyMemory<byte> buffer, CancellationToken cancellationToken = default)
    {
        FlushProtocol();
        if (cancellationToken.IsCancellationRequested)
            return new ValueTask<bool>(Task.FromCanceled<bool>(cancellationToken));
        var connection = CurrentConnection;
        if (connection is null)
            return new ValueTask<bool>(false);

        var status = connection.Send(buffer.Span, shared: null, waiter: null, out _);
        return status == SendStatus.Full
            ? SendWhenRoomAsync(connection, buffer, null, cancellationToken)
            : new ValueTask<bool>(status == SendStatus.Accepted);
    }

    /// <summary>The slow path of an awaitable send: park until there is room.</summary>
    internal static ValueTask<bool> SendWhenRoomAsync(Connection connection, ReadOnlyMemory<byte> buffer, SharedBuffer? shared, CancellationToken cancellationToken)
    {
        var waiter = SendWaiter.ForRoom(buffer, shared, synchronous: false);
        var status = connection.Send(buffer.Span, shared, waiter, out _);
        if (status != SendStatus.Waiting)
        {
            // Room appeared meanwhile (or the connection closed): the waiter was never parked.
            if (waiter.TryClaim())
                waiter.Finish(false);
            return new ValueTask<bool>(status == SendStatus.Accepted);
        }

        connection.ReportSendPaused();
        waiter.RegisterCancellation(cancellationToken);
        return new ValueTask<bool>(waiter.Task);
    }

    // --- Multi-part and in-place sends ---

    /// <summary>
    /// Queues a multi-part message as one unit: its parts are never interleaved with another send's.
    /// When the queue is idle the parts go straight to the operating system in one gathered write,
    /// without a copy. Otherwise (and for what the kernel does not take at once) they are copied
    /// into the queue. Refused as <see cref="SendAsync(ReadOnlySpan{byte})"/> is. An override of
    /// <c>SendAsync(ReadOnlySpan{byte})</c> does not see these messages.
    /// </summary>
    /// <returns>True if the message was accepted; false if not connected or the send limit refused it.</returns>
    public bool SendAsync(ReadOnlySequence<byte> buffer)
    {
        FlushProtocol();
        var connection = CurrentConnection;
        if (connection is null)
            return false;
        var status = connection.Send(buffer);
        if (status == SendStatus.Full)
            connection.ReportSendRefused();
        return status == SendStatus.Accepted;
    }

    /// <summary>
    /// Sends a multi-part message as one unit with backpressure, as <see cref="SendAsync(ReadOnlyMemory{byte}, CancellationToken)"/>
    /// does for one part: completes when it is accepted within <see cref="OptionSendBufferLimit"/>.
    /// </summary>
    /// <returns>True once accepted; false if the connection is closed (or closes while waiting).</returns>
    /// <exception cref="OperationCanceledException"><paramref name="cancellationToken"/> fired while waiting; nothing was queued.</exception>
    public ValueTask<bool> SendAsync(ReadOnlySequence<byte> buffer, CancellationToken cancellationToken)
    {
        FlushProtocol();
        if (cancellationToken.IsCancellationRequested)
            return new ValueTask<bool>(Task.FromCanceled<bool>(cancellationToken));
        var connection = CurrentConnection;
        if (connection is null)
            return new ValueTask<bool>(false);
        var status = connection.Send(buffer);
        if (status != SendStatus.Full)
            return new ValueTask<bool>(status == SendStatus.Accepted);

        // The slow path: the message waits as one pooled copy, like any parked send.
        var pool = connection.Pool;
        var copy = pool.Rent((int)buffer.Length);
        buffer.CopyTo(copy);
        return SendCopyWhenRoomAsync(connection, pool, copy, (int)buffer.Length, cancellationToken);
    }

    /// <summary>
    /// Starts a message built in place in pooled send memory: write it through the returned
    /// <see cref="SendWriter"/> (an <see cref="IBufferWriter{T}"/>: serializers write straight into
    /// it), then <see cref="SendWriter.Commit"/> it once; it goes out as one unit, without another copy
    /// when it is large. Not connected: the commit returns false. Dispose the writer (a <c>using</c>)
    /// so the next message reuses it. An override of <c>SendAsync</c> does not see these messages.
    /// </summary>
    /// <param name="sizeHint">Bytes the message will probably need (0: <see cref="OptionSendBufferSize"/>, at most 16 KiB; more is taken as the message grows).</param>
    public SendWriter StartSend(int sizeHint = 0)
    {
        FlushProtocol();
        if (sizeHint < 0)
            ThrowHelper.ThrowArgumentOutOfRange(nameof(sizeHint), "The size hint cannot be negative.");
        var connection = CurrentConnection;
        return SendWriter.Rent(this, connection, connection?.Pool ?? BufferPool.Shared, Math.Max(sizeHint, Math.Min(OptionSendBufferSize, 16 * 1024)));
    }

    /// <summary>The slow path of an awaitable send made from a pooled copy: park it, return the copy once it is queued (or refused).</summary>
    internal static async ValueTask<bool> SendCopyWhenRoomAsync(Connection connection, BufferPool pool, byte[] copy, int length, CancellationToken cancellationToken)
    {
        try
        {
            return await SendWhenRoomAsync(connection, new ReadOnlyMemory<byte>(copy, 0, length), null, cancellationToken).ConfigureAwait(false);
        }
        finally
        {
            pool.Return(copy);
        }
    }

    // --- Cores ---

    /// <summary>
    /// Lets the protocol hand over sends it holds back on this thread (a message protocol batches
    /// the answers of one delivery) before another send or a close from the same thread, so they
    /// keep their order.
    /// </summary>
    private void FlushProtocol() => Volatile.Read(ref _protocol)?.FlushHeld();

    /// <summary>As <see cref="FlushProtocol"/>, for a writer's commit.</summary>
    internal void FlushProtocolHeld() => FlushProtocol();

    private bool SendQueued(ReadOnlySpan<byte> data)
    {
        FlushProtocol();
        var connection = CurrentConnection;
        if (connection is null)
            return false;
        var multicast = _multicastPayload;
        var status = multicast is not null && IsWhole(multicast, data)
            ? connection.Send(data, multicast, waiter: null, SendMode.Scheduled, out _)
            : connection.Send(data, shared: null, waiter: null, out _);
        if (status == SendStatus.Full)
            connection.ReportSendRefused();
        return status == SendStatus.Accepted;
    }

    /// <summary>Whether <paramref name="data"/> is the whole payload of <paramref name="shared"/>, in its own array.</summary>
    private static bool IsWhole(SharedBuffer shared, ReadOnlySpan<byte> data) =>
        data.Length == shared.Length
        && data.Overlaps(new ReadOnlySpan<byte>(shared.Array, 0, shared.Length), out var offset)
        && offset == 0;

    private long SendBlocking(ReadOnlySpan<byte> data)
    {
        FlushProtocol();
        var connection = CurrentConnection;
        if (connection is null)
            return 0;

        var status = connection.Send(data, shared: null, waiter: null, out var watermark);
        if (status == SendStatus.Full)
        {
            if (connection.MustNotWait)
            {
                connection.ReportSendRefused();
                return 0;
            }

            if (!SendWhenRoomBlocking(connection, data, out watermark))
                return 0;
        }
        else if (status != SendStatus.Accepted)
        {
            return 0;
        }

        if (connection.MustNotWait)
            return data.Length;
        if (!connection.TryWaitForFlush(watermark, synchronous: true, out var flushed))
            return 0; // closed before the kernel took these bytes
        if (flushed is null)
            return data.Length;
        if (WaitWhileSending(connection, flushed))
            return flushed.Result ? data.Length : 0;

        // The kernel took nothing for the whole send timeout: as a blocking socket whose send
        // timed out, the connection is unusable (its bytes may or may not go out): close it.
        connection.Abort(NetServer.DisconnectReason.TimedOut);
        return 0;
    }

    /// <summary>
    /// How long a blocking <c>Send</c> waits while the kernel takes none of the queued bytes: the
    /// socket's <c>SendTimeout</c> when set, else <see cref="BlockingWaitTimeout"/>. A send that
    /// keeps making progress waits as long as it needs.
    /// </summary>
    private static TimeSpan SendProgressTimeout(Connection connection)
    {
        try
        {
            var timeout = connection.Socket.SendTimeout;
            return timeout > 0 ? TimeSpan.FromMilliseconds(timeout) : BlockingWaitTimeout;
        }
        catch (ObjectDisposedException)
        {
            return BlockingWaitTimeout;
        }
    }

    /// <summary>Waits for <paramref name="waiter"/> while the queue makes progress; false once it made none for the send timeout.</summary>
    private static bool WaitWhileSending(Connection connection, SendWaiter waiter)
    {
        var timeout = SendProgressTimeout(connection);
        var sent = connection.SentTotal;
        while (!waiter.WaitSynchronously(timeout))
        {
            var now = connection.SentTotal;
            if (now == sent)
                return false;
            sent = now;
        }

        return true;
    }

    /// <summary>Parks a blocking sender (with a pooled copy of its bytes) until the queue has room.</summary>
    private static bool SendWhenRoomBlocking(Connection connection, ReadOnlySpan<byte> data, out long watermark)
    {
        var copy = ArrayPool<byte>.Shared.Rent(data.Length);
        try
        {
            data.CopyTo(copy);
            var waiter = SendWaiter.ForRoom(new ReadOnlyMemory<byte>(copy, 0, data.Length), null, synchronous: true);
            var status = connection.Send(data, shared: null, waiter, out watermark);
            if (status == SendStatus.Waiting)
            {
                connection.ReportSendPaused();
                // No room appeared for the whole send timeout: nothing was queued, and the waiter
                // leaves the queue (one left behind would hold up every later sender).
                if (!WaitWhileSending(connection, waiter) && waiter.TryGiveUp())
                    return false;

                waiter.WaitSynchronously(Timeout.InfiniteTimeSpan); // released meanwhile: its result is set
                watermark = waiter.Watermark;
                return waiter.Result;
            }

            return status == SendStatus.Accepted;
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(copy);
        }
    }
}
