using System;
using System.Buffers;
using System.Collections.Concurrent;
using System.Net;
using System.Net.Sockets;
using System.Threading;
using System.Threading.Tasks;
using NetServer.P2P.Internal;
using NetServer.P2P.Wire;
using NetServer.P2P.Wire.Contracts;
using NetServer.Protobuf;

namespace NetServer.P2P.Server;

/// <summary>
/// The relay's UDP port (docs/p2p.md, "UDP"): one socket, one secure session per registered peer
/// (its secret and both indexes sent in the welcome), BIND answered with the source endpoint
/// seen, RELAYED datagrams opened one layer ([destination | inner]) and re-sealed for the
/// destination ([source | inner]). The inner datagram is sealed with the peers' pair key, which
/// this relay made but keeps in no session: it only copies those bytes. A destination that never
/// bound (UDP blocked) gets the same bytes over TLS (relay/udp).
/// </summary>
internal sealed partial class RelayUdp : IDisposable
{
    private readonly RelayServer _relay;
    private readonly Socket _socket;
    private readonly SecureUdpSessionTable _table = new();
    private readonly ConcurrentDictionary<uint, RelayPeerState> _byIndex = new();
    private readonly byte[] _receive = new byte[65_536];
    private readonly byte[] _send = new byte[65_536]; // the receive loop's: it forwards from one thread
    private long _datagramsReceived;
    private long _datagramsForwarded;
    private long _datagramsDropped;

    public RelayUdp(RelayServer relay, IPAddress address, int port)
    {
        _relay = relay;
        _socket = new Socket(address.AddressFamily, SocketType.Dgram, ProtocolType.Udp);
        if (address.AddressFamily == AddressFamily.InterNetworkV6)
            _socket.DualMode = true;
        _socket.Bind(new IPEndPoint(address, port));
        Port = ((IPEndPoint)_socket.LocalEndPoint!).Port;
        _ = Task.Run(ReceiveLoopAsync);
    }

    public int Port { get; }

    /// <summary>For tests: sees every datagram as received and, once the outer layer opened, its payload (the relay's whole view).</summary>
    internal Action<byte[]>? ObserveForTests { get; set; }

    public long DatagramsReceived => Interlocked.Read(ref _datagramsReceived);

    public long DatagramsForwarded => Interlocked.Read(ref _datagramsForwarded);

    public long DatagramsDropped => Interlocked.Read(ref _datagramsDropped) + _table.DatagramsTruncated + _table.DatagramsOfUnknownType + _table.DatagramsForUnknownIndex;

    /// <summary>Makes <paramref name="peer"/>'s session (a fresh secret, both indexes) and puts it in the welcome.</summary>
    public void Attach(RelayPeerState peer, WelcomeMessage welcome)
    {
        var secret = SecureUdpSession.NewSecret();
        try
        {
            uint relayIndex, clientIndex;
            lock (_lock)
            {
                relayIndex = _table.NewIndex();
                clientIndex = NewClientIndexLocked(peer);
            }

            var session = new SecureUdpSession(secret, UdpFraming.RelayContext(peer.SessionId, peer.Id), SecureUdpRole.Responder, relayIndex, clientIndex);
            peer.Udp = session;
            _byIndex[relayIndex] = peer;
            _table.TryAdd(session);
            welcome.UdpPort = (uint)Port;
            welcome.UdpSecret = (byte[])secret.Clone();
            welcome.UdpRelayIndex = relayIndex;
            welcome.UdpClientIndex = clientIndex;
        }
        finally
        {
            Array.Clear(secret, 0, secret.Length);
        }
    }

    /// <summary>
    /// Forwards a relayed datagram's [destination | inner] from <paramref name="source"/>: by UDP
    /// when the destination has bound, else over TLS; to a peer of another node, as a backplane
    /// message its node sends on (dropped when the backplane does not take it: never queued here).
    /// <paramref name="scratch"/> is a buffer the caller owns (at least the datagram plus 60 bytes).
    /// </summary>
    public void Forward(RelayPeerState source, ReadOnlySpan<byte> destinationAndInner, byte[] scratch)
    {
        if (destinationAndInner.Length < GuidBytes.Size + SecureUdpSession.Overhead
            || !GuidBytes.TryRead(destinationAndInner.Slice(0, GuidBytes.Size), out var to) || to == source.Id)
        {
            Interlocked.Increment(ref _datagramsDropped);
            return;
        }

        var inner = destinationAndInner.Slice(GuidBytes.Size);
        if (_relay.FindPeer(to) is { } destination)
            Deliver(source.Id, destination, inner, scratch);
        else if (_relay.FindRemote(to) is { HasLeft: false } remote && _relay.Cluster is { IsConnected: true } cluster)
            _ = CountPublishedAsync(cluster.PublishDatagram(source.Id, remote, inner));
        else
            Interlocked.Increment(ref _datagramsDropped);
    }

    /// <summary>A relayed datagram a peer of another node sent to <paramref name="destination"/>, as its node forwarded it (RelayCluster.Routing.cs).</summary>
    public void DeliverFromNode(Guid source, RelayPeerState destination, ReadOnlySpan<byte> inner)
    {
        var scratch = ArrayPool<byte>.Shared.Rent(inner.Length + GuidBytes.Size + (2 * SecureUdpSession.Overhead));
        try
        {
            Deliver(source, destination, inner, scratch);
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(scratch);
        }
    }

    /// <summary>Sends <paramref name="inner"/> to a peer of this node as [source | inner] sealed with its session, or over TLS when it never bound.</summary>
    private void Deliver(Guid source, RelayPeerState destination, ReadOnlySpan<byte> inner, byte[] scratch)
    {
        if (destination.Udp is { RemoteEndpoint: { } endpoint } session)
        {
            // [source | inner] 14 bytes in, then sealed in place with the destination's session.
            var payload = scratch.AsSpan(SecureUdpSession.HeaderLength, GuidBytes.Size + inner.Length);
            GuidBytes.Write(payload, source);
            inner.CopyTo(payload.Slice(GuidBytes.Size));
            try
            {
                var length = session.Seal(SecureDatagramType.Relayed, payload, scratch);
                _socket.SendTo(scratch, 0, length, SocketFlags.None, endpoint);
                Interlocked.Increment(ref _datagramsForwarded);
            }
            catch (SocketException)
            {
                Interlocked.Increment(ref _datagramsDropped); // a datagram lost, as UDP may lose any
            }
            catch (ObjectDisposedException)
            {
                Interlocked.Increment(ref _datagramsDropped); // the destination left meanwhile (its session disposed), or the relay stopped
            }

            return;
        }

        // Over TLS a datagram is still a datagram: dropped when the destination's queue is over
        // DestinationQueueLimit, as a routed message would be refused, so a flood cannot eat the
        // room kept for the relay's own messages (ControlQueueReserve) and get it disconnected.
        var pending = destination.Session.BytesPending + destination.Outbox.Length;
        if (pending > 0 && pending + inner.Length + 64 > _relay.Limits.DestinationQueueLimit)
        {
            Interlocked.Increment(ref _datagramsDropped);
            return;
        }

        var bytes = new byte[GuidBytes.Size + inner.Length];
        GuidBytes.Write(bytes, source);
        inner.CopyTo(bytes.AsSpan(GuidBytes.Size));
        var envelope = new MessageEnvelope(RelayKinds.UdpDatagram) { To = destination.Id, Payload = bytes };
        if (destination.Session.SendAsync(envelope))
            Interlocked.Increment(ref _datagramsForwarded);
        else
            Interlocked.Increment(ref _datagramsDropped);
    }

    /// <summary>A datagram for another node counts as forwarded once the backplane took it, else as dropped (full or down: never held here).</summary>
    private async Task CountPublishedAsync(Task<bool> published)
    {
        bool taken;
        try
        {
            taken = await published.ConfigureAwait(false);
        }
        catch (Exception e) when (e is not OutOfMemoryException)
        {
            taken = false;
        }

        Interlocked.Increment(ref taken ? ref _datagramsForwarded : ref _datagramsDropped);
    }

    public void Dispose()
    {
        _socket.Dispose();
    }

    private async Task ReceiveLoopAsync()
    {
        EndPoint any = new IPEndPoint(_socket.AddressFamily == AddressFamily.InterNetworkV6 ? IPAddress.IPv6Any : IPAddress.Any, 0);
        while (true)
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
                continue; // an ICMP error reported on the socket: not this loop's end
            }
            catch (SocketException)
            {
                return;
            }

            Interlocked.Increment(ref _datagramsReceived);
            try
            {
                Received(result.RemoteEndPoint, _receive.AsSpan(0, result.ReceivedBytes));
            }
            catch (ObjectDisposedException)
            {
                // a session disposed by a departure between the lookup and the seal
            }
            catch (Exception e) when (e is not OutOfMemoryException)
            {
                Interlocked.Increment(ref _datagramsDropped); // a BINDACK the socket refused, say: one datagram lost, never the loop
            }
        }
    }

    private void Received(EndPoint from, Span<byte> datagram)
    {
        ObserveForTests?.Invoke(datagram.ToArray());
        if (_table.Open(datagram, out var session, out var type, out var length, out var isNewest) != SecureDatagramStatus.Ok
            || !_byIndex.TryGetValue(session!.LocalIndex, out var peer) || peer.HasLeft)
            return; // counted by the table or the session

        if (isNewest)
            session.RemoteEndpoint = from; // authenticated and the newest yet: the peer's endpoint follows it (roaming); an older datagram, delayed or replayed from elsewhere within the window, moves nothing
        var payload = datagram.Slice(SecureUdpSession.HeaderLength, length);
        ObserveForTests?.Invoke(payload.ToArray());
        switch (type)
        {
            case SecureDatagramType.Bind:
                var written = UdpFraming.WriteEndpoint(_send.AsSpan(SecureUdpSession.HeaderLength, payload.Length), (IPEndPoint)from);
                if (written == 0)
                {
                    Interlocked.Increment(ref _datagramsDropped); // never answer with more than was asked
                    return;
                }

                var answer = session.Seal(SecureDatagramType.BindAck, _send.AsSpan(SecureUdpSession.HeaderLength, written), _send);
                _socket.SendTo(_send, 0, answer, SocketFlags.None, from);
                break;
            case SecureDatagramType.Relayed:
                var now = Milliseconds.Now;
                if (!peer.UdpBucket.TryTake(1, now))
                {
                    Interlocked.Increment(ref _datagramsDropped);
                }
                else if (!peer.UdpByteBucket.TryTake(payload.Length, now))
                {
                    peer.UdpBucket.Refund(1);
                    Interlocked.Increment(ref _datagramsDropped);
                }
                else
                {
                    Forward(peer, payload, _send);
                }

                break;
            case SecureDatagramType.Keepalive:
                break;
            default:
                Interlocked.Increment(ref _datagramsDropped);
                break;
        }
    }
}
