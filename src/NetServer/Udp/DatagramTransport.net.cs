using System.Runtime.CompilerServices;

namespace NetServer.Udp;

/// <summary>
/// The datagram socket calls on .NET 8 and later: the <see cref="SocketAddress"/> overloads, which
/// move no endpoint objects, with two bounded caches that map raw addresses to the
/// <see cref="EndPoint"/> objects the hooks see and back. Steady traffic with up to
/// <see cref="PeerCacheCapacity"/> peers allocates nothing; a new peer costs one endpoint and one address.
/// </summary>
/// <remarks>
/// The receive side is used by one receiver at a time, the send side by the one flusher: neither
/// cache needs a lock.
/// </remarks>
internal sealed partial class DatagramTransport : IDisposable
{
    /// <summary>
    /// Peers each cache remembers (roughly 200 bytes a peer, so a few MiB at most). Past it, a new
    /// peer replaces one not seen lately: a flood of new peers cannot grow the caches, and a steady
    /// set that fits keeps its entries (docs/udp.md).
    /// </summary>
    internal const int PeerCacheCapacity = 16384;

    private readonly Socket _socket;
    private readonly SocketAddress _received;
    private readonly ClockCache<SocketAddress, EndPoint> _sources = new(PeerCacheCapacity);
    private readonly ClockCache<EndPoint, SocketAddress> _targets = new(PeerCacheCapacity);
    private readonly EndPoint _template;
    private EndPoint? _source;

    public DatagramTransport(Socket socket)
    {
        _socket = socket;
        _received = new SocketAddress(socket.AddressFamily);
        _template = socket.AddressFamily == AddressFamily.InterNetworkV6
            ? new IPEndPoint(IPAddress.IPv6Any, 0)
            : new IPEndPoint(IPAddress.Any, 0);
    }

    /// <summary>The sender of the datagram the last receive returned.</summary>
    public EndPoint Source => _source ??= SourceOf(_received);

    /// <summary>Receives one datagram into <paramref name="buffer"/>; its sender is then <see cref="Source"/>.</summary>
    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder<>))]
    public async ValueTask<SocketResult> ReceiveAsync(byte[] buffer, int count)
    {
        _source = null;
        try
        {
            var received = await _socket.ReceiveFromAsync(buffer.AsMemory(0, count), SocketFlags.None, _received).ConfigureAwait(false);
            return new SocketResult(received, SocketError.Success);
        }
        catch (SocketException e)
        {
            return new SocketResult(0, e.SocketErrorCode);
        }
        catch (ObjectDisposedException)
        {
            return new SocketResult(0, SocketError.OperationAborted);
        }
    }

    /// <summary>Receives one datagram on the caller's thread, waiting as the socket's <c>ReceiveTimeout</c> says.</summary>
    public int Receive(byte[] buffer, int offset, int count, out EndPoint? source, out SocketError error)
    {
        source = null;
        _source = null;
        try
        {
            var received = _socket.ReceiveFrom(buffer.AsSpan(offset, count), SocketFlags.None, _received);
            source = Source;
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
    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder<>))]
    public async ValueTask<SocketResult> SendAsync(byte[] array, int count, EndPoint target)
    {
        try
        {
            if (TargetOf(target) is not { } address)
                return new SocketResult(0, SocketError.AddressFamilyNotSupported);
            var sent = await _socket.SendToAsync(new ReadOnlyMemory<byte>(array, 0, count), SocketFlags.None, address).ConfigureAwait(false);
            return new SocketResult(sent, SocketError.Success);
        }
        catch (SocketException e)
        {
            return new SocketResult(0, e.SocketErrorCode);
        }
        catch (ObjectDisposedException)
        {
            return new SocketResult(0, SocketError.OperationAborted);
        }
    }

    /// <summary>Sends <paramref name="data"/> as one datagram to <paramref name="target"/> with a blocking call (the dedicated-thread mode).</summary>
    public SocketResult Send(ReadOnlySpan<byte> data, EndPoint target)
    {
        try
        {
            return TargetOf(target) is { } address
                ? new SocketResult(_socket.SendTo(data, SocketFlags.None, address), SocketError.Success)
                : new SocketResult(0, SocketError.AddressFamilyNotSupported);
        }
        catch (SocketException e)
        {
            return new SocketResult(0, e.SocketErrorCode);
        }
        catch (ObjectDisposedException)
        {
            return new SocketResult(0, SocketError.OperationAborted);
        }
    }

    /// <summary>Nothing to free: the socket's own event args carry the operations and go with it.</summary>
    public void Dispose()
    {
    }

    /// <summary>The endpoint of a sender given as a native address (a datagram of a <c>recvmmsg</c> batch).</summary>
    public EndPoint SourceOf(ReadOnlySpan<byte> address)
    {
        address.CopyTo(_received.Buffer.Span);
        _received.Size = address.Length;
        return SourceOf(_received);
    }

    private EndPoint SourceOf(SocketAddress address)
    {
        if (_sources.TryGetValue(address, out var known))
            return known;

        // The key is a copy: the receive address is overwritten by the next datagram.
        var key = new SocketAddress(address.Family, address.Size);
        address.Buffer.Span.Slice(0, address.Size).CopyTo(key.Buffer.Span);
        var endpoint = _template.Create(key);
        _sources.Add(key, endpoint);
        return endpoint;
    }

    /// <summary>The raw address for <paramref name="target"/>, or null if this socket cannot reach its address family.</summary>
    public SocketAddress? TargetOf(EndPoint target)
    {
        if (_targets.TryGetValue(target, out var known))
            return known;
        if (target is not IPEndPoint ip || MatchFamily(ip) is not { } usable)
            return null;

        // Keyed by a copy: the caller may reuse (and change) its endpoint object.
        var address = usable.Serialize();
        _targets.Add(new IPEndPoint(ip.Address, ip.Port), address);
        return address;
    }

    /// <summary>
    /// The endpoint in this socket's address family: a dual-mode IPv6 socket reaches IPv4 peers
    /// through IPv4-mapped addresses, and an IPv4 socket reaches IPv4-mapped IPv6 ones.
    /// </summary>
    private IPEndPoint? MatchFamily(IPEndPoint ip)
    {
        if (ip.AddressFamily == _socket.AddressFamily)
            return ip;
        if (_socket.AddressFamily == AddressFamily.InterNetworkV6 && ip.AddressFamily == AddressFamily.InterNetwork && _socket.DualMode)
            return new IPEndPoint(ip.Address.MapToIPv6(), ip.Port);
        if (_socket.AddressFamily == AddressFamily.InterNetwork && ip.Address.IsIPv4MappedToIPv6)
            return new IPEndPoint(ip.Address.MapToIPv4(), ip.Port);
        return null;
    }
}
