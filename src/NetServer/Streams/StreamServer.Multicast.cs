using System;
using System.Buffers;
using System.Threading;
using System.Threading.Tasks;
using NetServer.Buffers;
using NetServer.Internal;
using NetServer.Streams;

namespace NetServer;

/// <summary>
/// Multicast: the payload is copied once into a reference-counted pooled buffer and every
/// session queues a reference to it, so a message to N sessions costs one copy, not N.
/// </summary>
public abstract partial class StreamServer<TSession>
{

    /// <summary>Sends <paramref name="buffer"/> to every connected session (see <see cref="Multicast(ReadOnlySpan{byte})"/>).</summary>
    /// <returns>False if the server is not started.</returns>
    public virtual bool Multicast(byte[] buffer)
    {
        if (buffer is null)
            ThrowHelper.ThrowArgumentNull(nameof(buffer));
        return Multicast(buffer, 0, buffer.Length);
    }

    /// <summary>Sends part of <paramref name="buffer"/> to every connected session.</summary>
    /// <returns>False if the server is not started.</returns>
    public virtual bool Multicast(byte[] buffer, long offset, long size)
    {
        ThrowHelper.ValidateRange(buffer, offset, size, out var start, out var count);
        return Multicast(new ReadOnlySpan<byte>(buffer, start, count));
    }

    /// <summary>
    /// Sends <paramref name="buffer"/> to every connected session without waiting. A session whose
    /// send queue cannot take it within its <c>OptionSendBufferLimit</c> is disconnected with
    /// <see cref="DisconnectReason.SendBufferFull"/> rather than silently miss the message; use
    /// <see cref="MulticastAsync"/> to wait for slow sessions instead.
    /// </summary>
    /// <returns>False if the server is not started.</returns>
    public virtual bool Multicast(ReadOnlySpan<byte> buffer)
    {
        if (!_isStarted)
            return false;
        if (buffer.IsEmpty)
            return true;

        var shared = SharedBuffer.Create(BufferPool, buffer);
        try
        {
            var slots = _registry.Snapshot(out var used);
            for (var i = 0; i < used; i++)
            {
                var connection = Volatile.Read(ref slots[i])?.CurrentConnection;
                if (connection?.Send(buffer, shared, waiter: null, SendMode.Scheduled, out _) == SendStatus.Full)
                    connection.Abort(DisconnectReason.SendBufferFull);
            }
        }
        finally
        {
            shared.Release();
        }

        return true;
    }

    /// <summary>Sends <paramref name="text"/> as UTF-8 to every connected session.</summary>
    /// <returns>False if the server is not started.</returns>
    public virtual bool Multicast(string text)
    {
        if (text is null)
            ThrowHelper.ThrowArgumentNull(nameof(text));
        return Multicast(text.AsSpan());
    }

    /// <summary>Sends <paramref name="text"/> as UTF-8 to every connected session.</summary>
    /// <returns>False if the server is not started.</returns>
    public virtual bool Multicast(ReadOnlySpan<char> text)
    {
        var array = ArrayPool<byte>.Shared.Rent(TextEncoding.MaxByteCount(text.Length));
        try
        {
            return Multicast(array, 0, TextEncoding.Encode(text, array));
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(array);
        }
    }

    /// <summary>
    /// Sends <paramref name="buffer"/> to every connected session with backpressure: where a
    /// session's queue is full, waits until it has room (sessions are served in turn), so slow
    /// sessions slow the sender down instead of being disconnected.
    /// </summary>
    /// <returns>False if the server is not started.</returns>
    /// <exception cref="OperationCanceledException"><paramref name="cancellationToken"/> fired while waiting for a session; the remaining sessions did not get the message.</exception>
    public async ValueTask<bool> MulticastAsync(ReadOnlyMemory<byte> buffer, CancellationToken cancellationToken = default)
    {
        if (!_isStarted)
            return false;
        if (buffer.IsEmpty)
            return true;

        var shared = SharedBuffer.Create(BufferPool, buffer.Span);
        try
        {
            var slots = _registry.Snapshot(out var used);
            for (var i = 0; i < used; i++)
            {
                var connection = Volatile.Read(ref slots[i])?.CurrentConnection;
                if (connection?.Send(buffer.Span, shared, waiter: null, SendMode.Scheduled, out _) == SendStatus.Full)
                    await StreamConnection.SendWhenRoomAsync(connection, buffer, shared, cancellationToken).ConfigureAwait(false);
            }
        }
        finally
        {
            shared.Release();
        }

        return true;
    }
}
