using System;
using System.Net;
using System.Net.Sockets;
using System.Threading.Tasks;
using NetServer.Transport;

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
        IsReachable(target)
            ? _sender.SendToAsync(_socket, array, count, target)
            : new ValueTask<SocketResult>(new SocketResult(0, SocketError.AddressFamilyNotSupported));

    /// <summary>Whether the socket's address family can reach <paramref name="target"/> (a dual-mode IPv6 socket reaches IPv4 too).</summary>
    private bool IsReachable(EndPoint target)
    {
        if (target.AddressFamily == _socket.AddressFamily)
            return true;
        try
        {
            return _socket.AddressFamily == AddressFamily.InterNetworkV6 && target.AddressFamily == AddressFamily.InterNetwork && _socket.DualMode;
        }
        catch (ObjectDisposedException)
        {
            return true; // closed meanwhile: the send reports the close
        }
    }

    public void Dispose()
    {
        _receiver.Dispose();
        _sender.Dispose();
    }
}
