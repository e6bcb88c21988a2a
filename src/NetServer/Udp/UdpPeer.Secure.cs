using NetServer.SecureUdp;
using NetServer.Udp;

namespace NetServer;

public abstract partial class UdpPeer
{
    /// <summary>Datagrams up to this size (sealed) are sealed on the stack; larger ones in a pooled buffer.</summary>
    private const int SealOnStack = 1024;

    private DatagramSecurity? _security;

    /// <summary>Secure UDP, set once by the secure server and client constructors: sends are sealed, receives opened before OnReceived.</summary>
    private protected DatagramSecurity? Security => _security;

    /// <summary>Makes this peer secure (its constructor's call, before the socket exists).</summary>
    private protected void UseSecurity(DatagramSecurity security) => _security = security;

    /// <summary>
    /// The datagram's size on the wire: sealed ones carry a header and a tag. A long, so that a
    /// payload near int.MaxValue cannot wrap to a small size and slip past the size check.
    /// </summary>
    private long WireLength(int payload) => _security is null ? payload : (long)payload + SecureUdpSession.Overhead;

    /// <summary>Delivers a received datagram to OnReceived; false when a secure peer dropped it instead (it did not open, or carries no data).</summary>
    internal bool InvokeReceived(EndPoint endpoint, byte[] buffer, int offset, int size)
    {
        if (_security is null)
        {
            OnReceived(endpoint, buffer, offset, size);
            return true;
        }

        // Opened in place in the receive buffer; a datagram that does not open is counted and dropped.
        if (_security.Open(endpoint, buffer.AsSpan(offset, size), out var length) is not { } session)
            return false;
        OnSecureReceived(session, endpoint, buffer, offset + SecureUdpSession.HeaderLength, length);
        return true;
    }

    /// <summary>A secure peer's authentic datagram (the payload decrypted in <paramref name="buffer"/>); the secure server adds its session-aware hook here.</summary>
    private protected virtual void OnSecureReceived(SecureUdpSession session, EndPoint endpoint, byte[] buffer, int offset, int size) =>
        OnReceived(endpoint, buffer, offset, size);

    /// <summary>
    /// The session a secure peer seals a datagram for <paramref name="endpoint"/> with; null, with
    /// OnError(<see cref="SocketError.NotConnected"/>), when there is none (a server has not heard
    /// from that endpoint yet).
    /// </summary>
    private SecureUdpSession? SealingSession(DatagramChannel channel, EndPoint endpoint)
    {
        var session = _security!.SessionFor(endpoint);
        if (session is null)
            channel.ReportError(SocketError.NotConnected);
        return session;
    }

    /// <summary>
    /// Where a send by session goes: the session's endpoint; null, with OnError(<see cref="SocketError.NotConnected"/>),
    /// when it has none yet or is not in this peer's table (removed, or another server's).
    /// </summary>
    private EndPoint? SessionEndpoint(DatagramChannel channel, SecureUdpSession session)
    {
        if (session is null)
            ThrowHelper.ThrowArgumentNull(nameof(session));
        if (_security!.IsLive(session) && session.RemoteEndpoint is { } endpoint)
            return endpoint;
        channel.ReportError(SocketError.NotConnected);
        return null;
    }

    /// <summary>A secure server's queued send sealed with <paramref name="session"/> (not with whichever session holds an endpoint).</summary>
    private protected bool SendQueued(SecureUdpSession session, ReadOnlySpan<byte> data)
    {
        var channel = Channel;
        if (channel is null || SessionEndpoint(channel, session) is not { } endpoint || !CheckDatagram(channel, endpoint, WireLength(data.Length)))
            return false;
        return SendQueuedSealed(channel, endpoint, data, session);
    }

    /// <summary>A secure server's blocking send sealed with <paramref name="session"/>.</summary>
    private protected long SendBlocking(SecureUdpSession session, ReadOnlySpan<byte> data)
    {
        var channel = Channel;
        if (channel is null || SessionEndpoint(channel, session) is not { } endpoint || !CheckDatagram(channel, endpoint, WireLength(data.Length)))
            return 0;
        return SendBlockingSealed(channel, endpoint, data, session);
    }

    /// <summary>A secure server's awaitable send sealed with <paramref name="session"/>.</summary>
    private protected ValueTask<bool> SendAwaitable(SecureUdpSession session, ReadOnlyMemory<byte> buffer, CancellationToken cancellationToken)
    {
        if (cancellationToken.IsCancellationRequested)
            return new ValueTask<bool>(Task.FromCanceled<bool>(cancellationToken));
        var channel = Channel;
        if (channel is null || SessionEndpoint(channel, session) is not { } endpoint || !CheckDatagram(channel, endpoint, WireLength(buffer.Length)))
            return new ValueTask<bool>(false);
        return SendAwaitableSealed(channel, endpoint, buffer.Span, cancellationToken, session);
    }

    /// <summary>Seals into <paramref name="destination"/>; false (reported as NotConnected) when the session was disposed meanwhile.</summary>
    private static bool TrySeal(DatagramChannel channel, SecureUdpSession session, ReadOnlySpan<byte> payload, Span<byte> destination)
    {
        try
        {
            session.Seal(SecureDatagramType.Data, payload, destination);
            return true;
        }
        catch (ObjectDisposedException)
        {
            channel.ReportError(SocketError.NotConnected);
            return false;
        }
    }

    private bool SendQueuedSealed(DatagramChannel channel, EndPoint endpoint, ReadOnlySpan<byte> data, SecureUdpSession? given = null)
    {
        if ((given ?? SealingSession(channel, endpoint)) is not { } session)
            return false;
        var length = (int)WireLength(data.Length); // checked against MaxDatagramPayload already
        byte[]? rented = null;
        var buffer = length <= SealOnStack ? stackalloc byte[length] : (rented = BufferPool.Rent(length));
        try
        {
            return TrySeal(channel, session, data, buffer) && SendQueued(channel, endpoint, buffer.Slice(0, length));
        }
        finally
        {
            if (rented is not null)
                BufferPool.Return(rented);
        }
    }

    private long SendBlockingSealed(DatagramChannel channel, EndPoint endpoint, ReadOnlySpan<byte> data, SecureUdpSession? given = null)
    {
        if ((given ?? SealingSession(channel, endpoint)) is not { } session)
            return 0;
        var length = (int)WireLength(data.Length); // checked against MaxDatagramPayload already
        byte[]? rented = null;
        var buffer = length <= SealOnStack ? stackalloc byte[length] : (rented = BufferPool.Rent(length));
        try
        {
            // The caller learns the size of what it sent, not of the sealed datagram.
            return TrySeal(channel, session, data, buffer) && SendBlocking(channel, endpoint, buffer.Slice(0, length)) != 0 ? data.Length : 0;
        }
        finally
        {
            if (rented is not null)
                BufferPool.Return(rented);
        }
    }

    private ValueTask<bool> SendAwaitableSealed(DatagramChannel channel, EndPoint endpoint, ReadOnlySpan<byte> data, CancellationToken cancellationToken,
        SecureUdpSession? given = null)
    {
        if ((given ?? SealingSession(channel, endpoint)) is not { } session)
            return new ValueTask<bool>(false);
        var length = (int)WireLength(data.Length); // checked against MaxDatagramPayload already

        // A parked sender's bytes must outlive this call: sealed into a pooled buffer, returned once the send is settled.
        var sealedBuffer = BufferPool.Rent(length);
        if (!TrySeal(channel, session, data, sealedBuffer))
        {
            BufferPool.Return(sealedBuffer);
            return new ValueTask<bool>(false);
        }

        var send = SendAwaitable(channel, endpoint, sealedBuffer.AsMemory(0, length), cancellationToken);
        if (!send.IsCompleted)
            return ReturnAfterAsync(send, sealedBuffer);
        BufferPool.Return(sealedBuffer);
        return send;
    }

    private async ValueTask<bool> ReturnAfterAsync(ValueTask<bool> send, byte[] sealedBuffer)
    {
        try
        {
            return await send.ConfigureAwait(false);
        }
        finally
        {
            BufferPool.Return(sealedBuffer);
        }
    }
}
