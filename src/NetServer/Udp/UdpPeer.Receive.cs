
namespace NetServer;

public abstract partial class UdpPeer
{
    /// <summary>
    /// Asks for the next datagram: OnReceived follows when it arrives, on a thread of the pool.
    /// Asking again before it came changes nothing; asking from inside OnReceived is safe at any
    /// rate (the running receive takes the next datagram when the hook returns; nothing recurses).
    /// With <see cref="OptionAutoReceive"/> every datagram is delivered without asking.
    /// </summary>
    public virtual void ReceiveAsync() => Channel?.RequestReceive();

    /// <summary>Blocking receive of one datagram into <paramref name="buffer"/>; see <see cref="Receive(ref EndPoint, byte[], long, long)"/>.</summary>
    /// <exception cref="InvalidOperationException">Asynchronous receiving is active.</exception>
    public virtual long Receive(ref EndPoint endpoint, byte[] buffer)
    {
        if (buffer is null)
            ThrowHelper.ThrowArgumentNull(nameof(buffer));
        return Receive(ref endpoint, buffer, 0, buffer.Length);
    }

    /// <summary>
    /// Blocking receive of one datagram into part of <paramref name="buffer"/> (a longer datagram is
    /// cut to <paramref name="size"/>, as the socket does), waiting as <c>Socket.ReceiveTimeout</c>
    /// says (0, the default, waits for ever). Sets <paramref name="endpoint"/> to the sender and
    /// raises OnReceived on the caller's thread. Only while nothing receives asynchronously
    /// (<see cref="ReceiveAsync"/>, <see cref="OptionAutoReceive"/>).
    /// </summary>
    /// <returns>The datagram's size; 0 when not started, on timeout or on error (OnError says which).</returns>
    /// <exception cref="InvalidOperationException">Asynchronous receiving is active, or this is a secure peer (<see cref="SecureUdpServer"/>, <see cref="SecureUdpClient"/>).</exception>
    public virtual long Receive(ref EndPoint endpoint, byte[] buffer, long offset, long size)
    {
        ThrowHelper.ValidateRange(buffer, offset, size, out var start, out var count);
        if (_security is not null)
            ThrowHelper.ThrowInvalidOperation("Secure UDP delivers opened datagrams through OnReceived only: use ReceiveAsync() or OptionAutoReceive.");
        if (Channel is not { } channel)
            return 0;
        var received = channel.ReceiveBlocking(buffer, start, count, out var source);
        if (source is not null)
            endpoint = source;
        return received;
    }

    /// <summary>Blocking receive of one datagram of at most <paramref name="size"/> bytes, decoded as UTF-8; see <see cref="Receive(ref EndPoint, byte[], long, long)"/>.</summary>
    /// <exception cref="InvalidOperationException">Asynchronous receiving is active.</exception>
    public virtual string Receive(ref EndPoint endpoint, long size)
    {
        if (size is < 0 or > MaxDatagramPayload)
            ThrowHelper.ThrowArgumentOutOfRange(nameof(size), $"The size must be between 0 and {MaxDatagramPayload}.");
        var buffer = BufferPool.Rent(Math.Max(1, (int)size));
        try
        {
            var received = (int)Receive(ref endpoint, buffer, 0, size);
            return TextEncoding.Decode(new ReadOnlySpan<byte>(buffer, 0, received));
        }
        finally
        {
            BufferPool.Return(buffer);
        }
    }
}
