using System.Buffers;

namespace NetServer.Udp;

/// <summary>
/// The datagram socket calls on the netstandard targets, through reusable socket event args
/// (the allocation-free <c>SocketAddress</c> overloads need .NET 8). The runtime makes a new
/// endpoint object when a datagram's sender differs from the previous one.
/// </summary>
internal sealed partial class DatagramTransport : IDisposable
{
    private readonly Socket _socket;
    private readonly SocketAwaitableEventArgs _receiver = new();
    private readonly SocketAwaitableEventArgs _sender = new();
    private readonly EndPoint _any;

    public DatagramTransport(Socket socket)
    {
        _socket = socket;
        _any = socket.AddressFamily == AddressFamily.InterNetworkV6
            ? new IPEndPoint(IPAddress.IPv6Any, 0)
            : new IPEndPoint(IPAddress.Any, 0);
    }

    /// <summary>The sender of the datagram the last receive returned.</summary>
    public EndPoint Source => _receiver.RemoteEndPoint!;

    /// <summary>Receives one datagram into <paramref name="buffer"/>; its sender is then <see cref="Source"/>.</summary>
    public ValueTask<SocketResult> ReceiveAsync(byte[] buffer, int count) => _receiver.ReceiveFromAsync(_socket, buffer, count, _any);

    /// <summary>Receives one datagram on the caller's thread, waiting as the socket's <c>ReceiveTimeout</c> says.</summary>
    public int Receive(byte[] buffer, int offset, int count, out EndPoint? source, out SocketError error)
    {
        source = null;
        try
        {
            var from = _any;
            var received = _socket.ReceiveFrom(buffer, offset, count, SocketFlags.None, ref from);
            source = from;
            error = SocketError.Success;
            return received;
        }
        catch (SocketException e)
        {
            error = e.SocketErrorCode;
            return 0;
        }
        catch (ObjectDisposedException)
        {
            error = SocketError.OperationAborted;
            return 0;
        }
    }

    /// <summary>Sends <paramref name="count"/> bytes of <paramref name="array"/> as one datagram to <paramref name="target"/>.</summary>
    public ValueTask<SocketResult> SendAsync(byte[] array, int count, EndPoint target) =>
        InSocketFamily(target) is { } usable
            ? _sender.SendToAsync(_socket, array, count, usable)
            : new ValueTask<SocketResult>(new SocketResult(0, SocketError.AddressFamilyNotSupported));

    /// <summary>
    /// Sends <paramref name="data"/> as one datagram to <paramref name="target"/> with a blocking call
    /// (the dedicated-thread mode); the netstandard socket takes arrays only, so the bytes are staged
    /// through a pooled one.
    /// </summary>
    public SocketResult Send(ReadOnlySpan<byte> data, EndPoint target)
    {
        if (InSocketFamily(target) is not { } usable)
            return new SocketResult(0, SocketError.AddressFamilyNotSupported);
        var array = ArrayPool<byte>.Shared.Rent(Math.Max(1, data.Length));
        try
        {
            data.CopyTo(array);
            return new SocketResult(_socket.SendTo(array, 0, data.Length, SocketFlags.None, usable), SocketError.Success);
        }
        catch (SocketException e)
        {
            return new SocketResult(0, e.SocketErrorCode);
        }
        catch (ObjectDisposedException)
        {
            return new SocketResult(0, SocketError.OperationAborted);
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(array);
        }
    }

    /// <summary>
    /// The endpoint in this socket's address family, or null if it cannot reach it: a dual-mode
    /// IPv6 socket reaches IPv4 peers (the runtime maps them), an IPv4 socket reaches IPv4-mapped
    /// IPv6 ones (mapped back here).
    /// </summary>
    private EndPoint? InSocketFamily(EndPoint target)
    {
        if (target.AddressFamily == _socket.AddressFamily)
            return target;
        try
        {
            if (_socket.AddressFamily == AddressFamily.InterNetworkV6 && target.AddressFamily == AddressFamily.InterNetwork && _socket.DualMode)
                return target;
        }
        catch (ObjectDisposedException)
        {
            return target; // closed meanwhile: the send reports the close
        }

        return _socket.AddressFamily == AddressFamily.InterNetwork && target is IPEndPoint { Address.IsIPv4MappedToIPv6: true } mapped
            ? new IPEndPoint(mapped.Address.MapToIPv4(), mapped.Port)
            : null;
    }

    public void Dispose()
    {
        _receiver.Dispose();
        _sender.Dispose();
    }
}
