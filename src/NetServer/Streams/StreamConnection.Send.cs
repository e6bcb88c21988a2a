using System;
using System.Buffers;
using System.Net.Sockets;
using System.Threading;
using System.Threading.Tasks;
using NetServer.Buffers;
using NetServer.Internal;
using NetServer.Streams;

namespace NetServer;

public abstract partial class StreamConnection
{
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
        ThrowHelper.ValidateRange(buffer, offset, size, out var start, out var count);
        return SendBlocking(new ReadOnlySpan<byte>(buffer, start, count));
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
        ThrowHelper.ValidateRange(buffer, offset, size, out var start, out var count);
        return SendQueued(new ReadOnlySpan<byte>(buffer, start, count));
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

        waiter.RegisterCancellation(cancellationToken);
        return new ValueTask<bool>(waiter.Task);
    }

    // --- Receive (compatible) ---

    /// <summary>
    /// Blocking receive into <paramref name="buffer"/> (honours <c>Socket.ReceiveTimeout</c>; 0 on timeout or
    /// disconnect). Also raises OnReceived. Only when the asynchronous receive loop is not running:
    /// after a synchronous <c>Connect()</c> on a client, before <see cref="ReceiveAsync"/>.
    /// </summary>
    /// <exception cref="InvalidOperationException">The asynchronous receive loop is running.</exception>
    public virtual long Receive(byte[] buffer)
    {
        if (buffer is null)
            ThrowHelper.ThrowArgumentNull(nameof(buffer));
        return Receive(buffer, 0, buffer.Length);
    }

    /// <summary>Blocking receive into part of <paramref name="buffer"/>; see <see cref="Receive(byte[])"/>.</summary>
    /// <exception cref="InvalidOperationException">The asynchronous receive loop is running.</exception>
    public virtual long Receive(byte[] buffer, long offset, long size)
    {
        ThrowHelper.ValidateRange(buffer, offset, size, out var start, out var count);
        var connection = CurrentConnection;
        if (connection is null || count == 0 || !connection.IsOpen)
            return 0;
        int timeout;
        try
        {
            timeout = connection.Socket.ReceiveTimeout;
        }
        catch (ObjectDisposedException)
        {
            return 0; // closed meanwhile
        }

        return connection.ReceiveBlocking(buffer, start, count, timeout);
    }

    /// <summary>Blocking receive of at most <paramref name="size"/> bytes, decoded as UTF-8; see <see cref="Receive(byte[])"/>.</summary>
    /// <exception cref="InvalidOperationException">The asynchronous receive loop is running.</exception>
    public virtual string Receive(long size)
    {
        if (size < 0 || size > int.MaxValue)
            ThrowHelper.ThrowArgumentOutOfRange(nameof(size), "The size must be between 0 and int.MaxValue.");
        var array = ArrayPool<byte>.Shared.Rent((int)Math.Max(size, 1));
        try
        {
            var received = Receive(array, 0, size);
            return TextEncoding.Decode(new ReadOnlySpan<byte>(array, 0, (int)received));
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(array);
        }
    }

    /// <summary>
    /// Starts the asynchronous receive loop that raises OnReceived (sessions and asynchronously
    /// connected clients start it themselves; calling it again does nothing).
    /// </summary>
    public virtual void ReceiveAsync() => CurrentConnection?.StartReceiving();

    // --- Cores ---

    private bool SendQueued(ReadOnlySpan<byte> data)
    {
        var connection = CurrentConnection;
        if (connection is null)
            return false;
        var status = connection.Send(data, shared: null, waiter: null, out _);
        if (status == SendStatus.Full)
            connection.ReportSendRefused();
        return status == SendStatus.Accepted;
    }

    private long SendBlocking(ReadOnlySpan<byte> data)
    {
        var connection = CurrentConnection;
        if (connection is null)
            return 0;

        var status = connection.Send(data, shared: null, waiter: null, out var watermark);
        if (status == SendStatus.Full)
        {
            if (CallbackScope.IsActive)
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

        if (CallbackScope.IsActive)
            return data.Length;
        if (!connection.TryWaitForFlush(watermark, synchronous: true, out var flushed))
            return 0; // closed before the kernel took these bytes
        return flushed is null || flushed.WaitSynchronously() ? data.Length : 0;
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
                var accepted = waiter.WaitSynchronously();
                watermark = waiter.Watermark;
                return accepted;
            }

            return status == SendStatus.Accepted;
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(copy);
        }
    }
}
