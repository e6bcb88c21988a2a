using System;
using System.Buffers;
using System.Collections.Concurrent;
using System.Collections.Generic;
using System.Net;
using System.Net.Sockets;
using System.Threading;
using System.Threading.Tasks;
using NetServer.P2P.Internal;
using NetServer.P2P.Wire;

namespace NetServer.P2P.Client;

/// <summary>
/// A client's UDP socket (docs/p2p.md, "UDP"): one secure session table holding the session with
/// the relay and one per peer pair. BIND to the relay gives the server-reflexive endpoint (and
/// shows UDP to the relay works); relayed datagrams go out as RELAYED [destination | inner] to the
/// relay and come in as RELAYED [source | inner], the inner sealed end to end with the pair key.
/// A relayed inner datagram whose pair key has not arrived yet (the key comes over TLS, the
/// datagram may overtake it) is held a few seconds, a bounded number.
/// </summary>
internal sealed class UdpChannel : IDisposable
{
    private const int MaxHeld = 64;
    private const long HeldMilliseconds = 5_000;
    private const int BindIntervalMilliseconds = 200;
    private const int RebindIntervalMilliseconds = 10_000;

    private readonly IUdpOwner _owner;
    private readonly Socket _socket;
    private readonly SecureUdpSessionTable _table = new();
    private long _handlerErrors;
    private readonly SecureUdpSession _relay;
    private readonly EndPoint _relayEndpoint;
    private readonly ConcurrentDictionary<uint, PeerUdp> _byIndex = new();
    private readonly byte[] _receive = new byte[65_536];
    private readonly Queue<(byte[] Datagram, long At)> _held = new();
    private long _pairsAdded;
    private readonly TaskCompletionSource<bool> _bound = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private readonly CancellationTokenSource _stop = new();
    private volatile IPEndPoint? _reflexive;

    public UdpChannel(IUdpOwner owner, IPEndPoint relayEndpoint, SecureUdpSession relaySession, TimeSpan bindTimeout)
    {
        _owner = owner;
        _relay = relaySession;
        _relayEndpoint = relayEndpoint;
        _socket = new Socket(relayEndpoint.AddressFamily, SocketType.Dgram, ProtocolType.Udp);
        _socket.Bind(new IPEndPoint(relayEndpoint.AddressFamily == AddressFamily.InterNetworkV6 ? IPAddress.IPv6Any : IPAddress.Any, 0));
        _table.TryAdd(relaySession);
        _ = Task.Run(ReceiveLoopAsync);
        _ = Task.Run(() => BindLoopAsync(bindTimeout));
    }

    /// <summary>Completes true once the relay answered a BIND, false when it did not within the bind timeout (UDP blocked) or the channel closed.</summary>
    public Task<bool> Bound => _bound.Task;

    /// <summary>True when the relay's UDP endpoint is loopback: only then are loopback punch candidates taken.</summary>
    public bool RelayIsLoopback => _relayEndpoint is IPEndPoint relay && IPAddress.IsLoopback(relay.Address);

    /// <summary>
    /// True when this socket can send to <paramref name="endpoint"/>: it is of the socket's address
    /// family (the relay's). A peer that reached a dual-stack relay over the other family has no
    /// candidate this socket can punch, nor can it reach this socket's.
    /// </summary>
    public bool CanSendTo(IPEndPoint endpoint) => endpoint.AddressFamily == _socket.AddressFamily;

    /// <summary>True once UDP to the relay works (a BINDACK came).</summary>
    public bool IsBound => _reflexive is not null;

    /// <summary>This socket's endpoint as the relay sees it (null before a BINDACK).</summary>
    public IPEndPoint? ServerReflexive => _reflexive;

    /// <summary>The socket's local endpoint.</summary>
    public IPEndPoint LocalEndpoint => (IPEndPoint)_socket.LocalEndPoint!;

    /// <summary>Datagrams no session opened (truncated, unknown type, unknown index).</summary>
    public long DatagramsDropped => _table.DatagramsTruncated + _table.DatagramsOfUnknownType + _table.DatagramsForUnknownIndex;

    public void Add(PeerUdp pair)
    {
        _byIndex[pair.Session.LocalIndex] = pair;
        _table.TryAdd(pair.Session);
        Interlocked.Increment(ref _pairsAdded);
        ReleaseHeld();
    }

    public void Remove(PeerUdp pair)
    {
        _table.Remove(pair.Session);
        _byIndex.TryRemove(pair.Session.LocalIndex, out _);
    }

    /// <summary>Seals <paramref name="payload"/> with the pair key, wraps it in a RELAYED datagram to the relay, sends it; false if the send failed.</summary>
    public bool SendRelayed(PeerUdp pair, ReadOnlySpan<byte> payload)
    {
        var innerLength = payload.Length + SecureUdpSession.Overhead;
        var buffer = ArrayPool<byte>.Shared.Rent(innerLength + GuidBytes.Size + SecureUdpSession.Overhead);
        try
        {
            var outer = buffer.AsSpan(SecureUdpSession.HeaderLength, GuidBytes.Size + innerLength);
            GuidBytes.Write(outer, pair.PeerId);
            pair.Session.Seal(SecureDatagramType.Data, payload, outer.Slice(GuidBytes.Size));
            var length = _relay.Seal(SecureDatagramType.Relayed, outer, buffer); // in place: the payload sits 14 bytes in
            return SendTo(buffer, length, _relayEndpoint);
        }
        catch (ObjectDisposedException)
        {
            return false; // the peer left (its pair session disposed) or the connection closed
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(buffer);
        }
    }

    /// <summary>Seals <paramref name="payload"/> with the pair key as <paramref name="type"/> and sends it to <paramref name="endpoint"/>.</summary>
    public bool SendDirect(PeerUdp pair, SecureDatagramType type, ReadOnlySpan<byte> payload, EndPoint endpoint)
    {
        var buffer = ArrayPool<byte>.Shared.Rent(payload.Length + SecureUdpSession.Overhead);
        try
        {
            var length = pair.Session.Seal(type, payload, buffer);
            return SendTo(buffer, length, endpoint);
        }
        catch (ObjectDisposedException)
        {
            return false;
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(buffer);
        }
    }

    /// <summary>A relayed datagram's [source | inner] that came over TLS (relay/udp): opened as one that came by UDP.</summary>
    public void ReceiveCarried(ReadOnlySpan<byte> sourceAndInner)
    {
        var copy = ArrayPool<byte>.Shared.Rent(sourceAndInner.Length);
        try
        {
            sourceAndInner.CopyTo(copy);
            OpenRelayed(copy.AsSpan(0, sourceAndInner.Length), Milliseconds.Now);
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(copy);
        }
    }

    public void Dispose()
    {
        _stop.Cancel();
        _socket.Dispose();
        _bound.TrySetResult(false);
        _relay.Dispose();
    }

    private bool SendTo(byte[] buffer, int length, EndPoint endpoint)
    {
        try
        {
            return _socket.SendTo(buffer, 0, length, SocketFlags.None, endpoint) == length;
        }
        catch (SocketException)
        {
            return false;
        }
        catch (ObjectDisposedException)
        {
            return false;
        }
    }

    private async Task BindLoopAsync(TimeSpan bindTimeout)
    {
        var bind = new byte[UdpFraming.BindPayloadLength + SecureUdpSession.Overhead];
        var zeros = new byte[UdpFraming.BindPayloadLength];
        var giveUp = Milliseconds.Now + (long)bindTimeout.TotalMilliseconds;
        try
        {
            while (!_stop.IsCancellationRequested)
            {
                var length = _relay.Seal(SecureDatagramType.Bind, zeros, bind);
                SendTo(bind, length, _relayEndpoint);
                if (!IsBound && Milliseconds.Now >= giveUp)
                    _bound.TrySetResult(false);
                var wait = IsBound || _bound.Task.IsCompleted ? RebindIntervalMilliseconds : BindIntervalMilliseconds;
                await Task.Delay(wait, _stop.Token).ConfigureAwait(false);
            }
        }
        catch (OperationCanceledException)
        {
        }
        catch (ObjectDisposedException)
        {
        }
    }

    private async Task ReceiveLoopAsync()
    {
        EndPoint any = new IPEndPoint(_socket.AddressFamily == AddressFamily.InterNetworkV6 ? IPAddress.IPv6Any : IPAddress.Any, 0);
        while (!_stop.IsCancellationRequested)
        {
            SocketReceiveFromResult result;
            try
            {
                result = await _socket.ReceiveFromAsync(new ArraySegment<byte>(_receive), SocketFlags.None, any).ConfigureAwait(false);
            }
            catch (ObjectDisposedException)
            {
                return;
            }
            catch (SocketException e) when (e.SocketErrorCode != SocketError.OperationAborted)
            {
                continue; // an ICMP error reported on the socket (a port unreachable): not the loop's end
            }
            catch (SocketException)
            {
                return;
            }

            try
            {
                Received((IPEndPoint)result.RemoteEndPoint, _receive.AsSpan(0, result.ReceivedBytes));
            }
            catch (ObjectDisposedException)
            {
                // a session disposed by a departure meanwhile
            }
            catch (Exception e) when (e is not OutOfMemoryException)
            {
                // OnDatagram or OnPathChanged threw: that datagram is lost, the loop goes on (one
                // exception must not end this client's UDP for good). Counted, for tests and logs.
                Interlocked.Increment(ref _handlerErrors);
            }
        }
    }

    /// <summary>Datagrams whose handling threw (a user hook, OnDatagram or OnPathChanged): the loop went on.</summary>
    public long HandlerErrors => Interlocked.Read(ref _handlerErrors);

    private void Received(IPEndPoint from, Span<byte> datagram)
    {
        if (_table.Open(datagram, out var session, out var type, out var length, out var isNewest) != SecureDatagramStatus.Ok)
            return; // counted by the table or the session
        var payload = datagram.Slice(SecureUdpSession.HeaderLength, length);
        if (session == _relay)
        {
            if (type == SecureDatagramType.BindAck && UdpFraming.TryReadEndpoint(payload, out var reflexive))
            {
                _reflexive = reflexive;
                _bound.TrySetResult(true);
            }
            else if (type == SecureDatagramType.Relayed)
            {
                OpenRelayed(payload, Milliseconds.Now);
            }

            return;
        }

        if (_byIndex.TryGetValue(session!.LocalIndex, out var pair))
            _owner.DirectDatagram(pair, type, payload, from, isNewest);
    }

    // heldSince: when the datagram first came (now, or when it was held); one whose pair key has
    // not come yet is held until the key comes or HeldMilliseconds pass, the key usually being
    // on its way over TLS while the datagram overtook it by UDP.
    private void OpenRelayed(Span<byte> sourceAndInner, long heldSince)
    {
        if (sourceAndInner.Length < GuidBytes.Size + SecureUdpSession.Overhead || !GuidBytes.TryRead(sourceAndInner.Slice(0, GuidBytes.Size), out var source))
            return;
        var inner = sourceAndInner.Slice(GuidBytes.Size);
        var added = Volatile.Read(ref _pairsAdded);
        var status = _table.Open(inner, out var session, out var type, out var length);
        if (status == SecureDatagramStatus.UnknownIndex)
        {
            Hold(sourceAndInner, heldSince);

            // A key added between the Open and the Hold released nothing: release again.
            if (Volatile.Read(ref _pairsAdded) != added)
                ReleaseHeld();
            return;
        }

        // The relay stamped the source; the pair key proves it: both must name the same peer.
        if (status != SecureDatagramStatus.Ok || session == _relay || type != SecureDatagramType.Data
            || !_byIndex.TryGetValue(session!.LocalIndex, out var pair) || pair.PeerId != source)
            return;
        _owner.RelayedDatagram(pair, inner.Slice(SecureUdpSession.HeaderLength, length));
    }

    private void Hold(ReadOnlySpan<byte> sourceAndInner, long since)
    {
        if (Milliseconds.Now - since > HeldMilliseconds)
            return;
        lock (_held)
        {
            if (_held.Count >= MaxHeld)
                _held.Dequeue();
            _held.Enqueue((sourceAndInner.ToArray(), since));
        }
    }

    // Each held datagram is tried once more; those whose key is still missing are held again with
    // their first time, so a key for another peer does not drop them.
    private void ReleaseHeld()
    {
        (byte[] Datagram, long At)[] held;
        lock (_held)
        {
            if (_held.Count == 0)
                return;
            held = _held.ToArray();
            _held.Clear();
        }

        foreach (var (datagram, at) in held)
            OpenRelayed(datagram, at);
    }
}

/// <summary>What a <see cref="UdpChannel"/> hands its client (on the channel's receive thread, or the TLS receive thread for datagrams carried over TLS).</summary>
internal interface IUdpOwner
{
    /// <summary>An authenticated datagram of <paramref name="pair"/> that came straight from <paramref name="from"/>.</summary>
    void DirectDatagram(PeerUdp pair, SecureDatagramType type, ReadOnlySpan<byte> payload, IPEndPoint from, bool isNewest);

    /// <summary>An authenticated application datagram of <paramref name="pair"/> that came through the relay.</summary>
    void RelayedDatagram(PeerUdp pair, ReadOnlySpan<byte> payload);
}
