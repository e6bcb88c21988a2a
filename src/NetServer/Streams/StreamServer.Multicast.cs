using System.Buffers;

namespace NetServer;

/// <summary>
/// Multicast: the payload is copied once into a reference-counted pooled buffer and every
/// session queues a reference to it, so a message to N sessions costs one copy, not N. A session
/// whose type overrides a compatible <c>SendAsync</c> gets the message through that override
/// instead, as in NetCoreServer.
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
    /// <remarks>
    /// A session whose type overrides <c>SendAsync(ReadOnlySpan&lt;byte&gt;)</c> or
    /// <c>SendAsync(byte[], long, long)</c> gets the message through that override (the span one
    /// when both are), and what the override decides stands: if it refuses, that session misses
    /// the message and stays connected. The bytes passed to the override are the multicast's pooled
    /// copy, shared with the other sessions: valid during the call only, and not to be changed.
    /// An override that passes them on unchanged to the base <c>SendAsync</c> still shares that copy.
    /// </remarks>
    /// <returns>False if the server is not started.</returns>
    public virtual bool Multicast(ReadOnlySpan<byte> buffer)
    {
        if (!_isStarted)
            return false;
        if (buffer.IsEmpty)
            return true;
        var kind = Diagnostics.MulticastKind.Current; // read before any await: it is the calling thread's

        SharedBuffer? shared = null;
        try
        {
            var slots = _registry.Snapshot(out var used);
            for (var i = 0; i < used; i++)
            {
                var session = Volatile.Read(ref slots[i]);
                if (session is null)
                    continue;
                if (session.MulticastRoute != MulticastRoute.SharedCopy)
                {
                    SendThroughOverride(session, shared ??= SharedBuffer.Create(BufferPool, buffer));
                    continue;
                }

                var connection = session.CurrentConnection;
                if (connection is null)
                    continue;
                shared ??= SharedBuffer.Create(BufferPool, buffer);

                // Counted before the send, as every message is: the flush that sends it (maybe on another
                // thread, before Send returns) reports it; taken back if the session did not take it.
                if (kind >= 0)
                    session.CountMessagesSent(kind, 1);
                var status = connection.Send(buffer, shared, waiter: null, SendMode.Scheduled, out _);
                if (status != SendStatus.Accepted && kind >= 0)
                    session.CountMessagesSent(kind, -1);
                if (status == SendStatus.Full && connection.Abort(DisconnectReason.SendBufferFull))
                    Diagnostics.ListenerEvents.MulticastDisconnect(session, connection, connection.BytesPending);
            }
        }
        finally
        {
            shared?.Release();
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
    /// <remarks>
    /// A session whose type overrides a compatible <c>SendAsync</c> gets the message through that
    /// override, as with <see cref="Multicast(ReadOnlySpan{byte})"/>; there is no waiting for it,
    /// the override decides.
    /// </remarks>
    /// <returns>False if the server is not started.</returns>
    /// <exception cref="OperationCanceledException"><paramref name="cancellationToken"/> fired while waiting for a session; the remaining sessions did not get the message.</exception>
    public async ValueTask<bool> MulticastAsync(ReadOnlyMemory<byte> buffer, CancellationToken cancellationToken = default)
    {
        if (!_isStarted)
            return false;
        if (buffer.IsEmpty)
            return true;
        var kind = Diagnostics.MulticastKind.Current; // read before any await: it is the calling thread's

        SharedBuffer? shared = null;
        try
        {
            var slots = _registry.Snapshot(out var used);
            for (var i = 0; i < used; i++)
            {
                var session = Volatile.Read(ref slots[i]);
                if (session is null)
                    continue;
                if (session.MulticastRoute != MulticastRoute.SharedCopy)
                {
                    SendThroughOverride(session, shared ??= SharedBuffer.Create(BufferPool, buffer.Span));
                    continue;
                }

                var connection = session.CurrentConnection;
                if (connection is null)
                    continue;
                shared ??= SharedBuffer.Create(BufferPool, buffer.Span);
                if (kind >= 0)
                    session.CountMessagesSent(kind, 1); // before the send, as in Multicast
                var status = SendStatus.Closed;
                try
                {
                    status = connection.Send(buffer.Span, shared, waiter: null, SendMode.Scheduled, out _);
                    if (status == SendStatus.Full && await StreamConnection.SendWhenRoomAsync(connection, buffer, shared, cancellationToken).ConfigureAwait(false))
                        status = SendStatus.Accepted;
                }
                finally
                {
                    if (status != SendStatus.Accepted && kind >= 0)
                        session.CountMessagesSent(kind, -1);
                }
            }
        }
        finally
        {
            shared?.Release();
        }

        return true;
    }

    /// <summary>
    /// Hands a multicast to the session's own <c>SendAsync</c> override, in the multicast's shared
    /// copy, so that an override which passes the bytes on unchanged queues them by reference.
    /// </summary>
    private static void SendThroughOverride(TSession session, SharedBuffer shared)
    {
        session.MulticastPayload = shared;
        try
        {
            if (session.MulticastRoute == MulticastRoute.SpanOverride)
                session.SendAsync(new ReadOnlySpan<byte>(shared.Array, 0, shared.Length));
            else
                session.SendAsync(shared.Array, 0, shared.Length);
        }
        finally
        {
            session.MulticastPayload = null;
        }
    }
}
