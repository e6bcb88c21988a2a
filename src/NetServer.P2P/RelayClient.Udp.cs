using System;
using System.Collections.Concurrent;
using System.Collections.Generic;
using System.Net;
using System.Threading;
using System.Threading.Tasks;
using NetServer.P2P.Client;
using NetServer.P2P.Wire;
using NetServer.P2P.Wire.Contracts;
using NetServer.Protobuf;

namespace NetServer.P2P;

// UDP datagrams to peers (docs/p2p.md, "UDP"): the client-relay session comes in the welcome, a
// pair key per peer from relay/udp-session; a datagram is sealed with the pair key end to end and
// goes straight to the peer when the path is direct, else through the relay: by UDP, or over TLS
// (relay/udp) when UDP to the relay is blocked.
public partial class RelayClient : IUdpOwner
{
    private readonly ConcurrentDictionary<Guid, PeerUdp> _pairs = new();
    private readonly ConcurrentDictionary<Guid, Task<PeerUdp>> _pairRequests = new();
    private volatile UdpChannel? _udp;

    /// <summary>How long the client waits for the relay's BINDACK before it takes UDP to the relay as blocked and carries datagrams over TLS (default 2 s).</summary>
    public TimeSpan UdpBindTimeout { get; set; } = TimeSpan.FromSeconds(2);

    /// <summary>This client's UDP endpoint as the relay sees it (its server-reflexive address; null before the relay answered a BIND).</summary>
    public IPEndPoint? ServerReflexiveEndpoint => _udp?.ServerReflexive;

    /// <summary>This client's UDP socket's local endpoint (null without a UDP socket: before registering, or a relay without UDP).</summary>
    public IPEndPoint? LocalUdpEndpoint => _udp?.LocalEndpoint;

    /// <summary>True once UDP to the relay works (the relay answered a BIND).</summary>
    public bool IsUdpAvailable => _udp?.IsBound == true;

    /// <summary>Completes true once UDP to the relay works; false when the relay has no UDP port or did not answer within <see cref="UdpBindTimeout"/> (datagrams then go over TLS).</summary>
    public Task<bool> UdpReady => _udp?.Bound ?? Task.FromResult(false);

    /// <summary>For tests: the pair session with <paramref name="peer"/> (null before its key came).</summary>
    internal SecureUdpSession? PairSessionForTests(Guid peer) => _pairs.TryGetValue(peer, out var pair) ? pair.Session : null;

    internal bool IsPunchingForTests(Guid peer) => _pairs.TryGetValue(peer, out var pair) && pair.Punch is not null;

    /// <summary>For tests: drop every datagram that comes straight from a peer, as a path gone dead would.</summary>
    internal bool DropDirectForTests { get; set; }

    /// <summary>For tests: the UDP port the client uses instead of the one the relay announced (a closed port: UDP blocked).</summary>
    internal int UdpPortOverrideForTests { get; set; }

    /// <summary>
    /// Sends <paramref name="payload"/> to <paramref name="peer"/> as one datagram, sealed with the
    /// pair's key (asked of the relay the first time, which this awaits): straight to the peer when
    /// the path is direct, else through the relay, which never sees the payload. False when it could
    /// not be sent (no connection, the socket refused it). Delivery is UDP's: not guaranteed,
    /// except over TLS when UDP to the relay is blocked.
    /// </summary>
    /// <exception cref="RelayException">The relay refused the pair key (<see cref="RelayStatus.UnknownPeer"/>, <see cref="RelayStatus.Unsupported"/> without UDP, <see cref="RelayStatus.ResourceLimitExceeded"/>).</exception>
    /// <exception cref="ArgumentException">The payload is longer than 65,431 bytes.</exception>
    public async ValueTask<bool> SendDatagramAsync(Guid peer, ReadOnlyMemory<byte> payload, CancellationToken cancellationToken = default)
    {
        if (payload.Length > UdpFraming.MaxPayload)
            throw new ArgumentException($"A datagram's payload is at most {UdpFraming.MaxPayload} bytes.", nameof(payload));
        var pair = _pairs.TryGetValue(peer, out var known) ? known : await PairAsync(peer, cancellationToken).ConfigureAwait(false);
        return SendDatagram(pair, payload.Span);
    }

    /// <summary>Called with each authenticated datagram a peer sent this client, once (a replayed or duplicated copy is dropped), with the path it came by. Runs on the UDP receive thread, or on the connection's receive thread for datagrams carried over TLS; valid only during the call.</summary>
    protected virtual void OnDatagram(Guid peer, ReadOnlySpan<byte> payload, RelayPath path)
    {
    }

    void IUdpOwner.DirectDatagram(PeerUdp pair, SecureDatagramType type, ReadOnlySpan<byte> payload, IPEndPoint from, bool isNewest)
    {
        if (DropDirectForTests)
            return;
        pair.LastDirectReceive = Internal.Milliseconds.Now;
        if (type == SecureDatagramType.Data)
        {
            pair.CountReceived(payload.Length, direct: true);
            OnDatagram(pair.PeerId, payload, RelayPath.Direct);
            return;
        }

        OnPunchDatagram(pair, type, payload, from, isNewest);
    }

    void IUdpOwner.RelayedDatagram(PeerUdp pair, ReadOnlySpan<byte> payload)
    {
        pair.CountReceived(payload.Length, direct: false);
        OnDatagram(pair.PeerId, payload, RelayPath.Relayed);
    }

    private bool SendDatagram(PeerUdp pair, ReadOnlySpan<byte> payload)
    {
        if (_udp is not { } udp)
            return false;
        if (pair.Direct is { } direct && udp.SendDirect(pair, SecureDatagramType.Data, payload, direct))
        {
            pair.CountSent(payload.Length, direct: true);
            return true;
        }

        pair.CountSent(payload.Length, direct: false);
        if (udp.IsBound)
            return udp.SendRelayed(pair, payload);

        // UDP to the relay blocked: the same [destination | inner] over TLS.
        var bytes = new byte[GuidBytes.Size + payload.Length + SecureUdpSession.Overhead];
        GuidBytes.Write(bytes, pair.PeerId);
        try
        {
            pair.Session.Seal(SecureDatagramType.Data, payload, bytes.AsSpan(GuidBytes.Size));
        }
        catch (ObjectDisposedException)
        {
            return false; // the peer left meanwhile
        }

        return _connection.SendAsync(new MessageEnvelope(RelayKinds.UdpDatagram) { To = RelayAddresses.Relay, Payload = bytes });
    }

    /// <summary>
    /// The pair key with <paramref name="peer"/>, asked of the relay once however many callers wait
    /// for it. The request is in the table before it starts and leaves it before it completes: one
    /// that finished at once cannot stay behind (a later call would get its old outcome), and a
    /// caller that saw it fail asks again.
    /// </summary>
    private Task<PeerUdp> PairAsync(Guid peer, CancellationToken cancellationToken)
    {
        TaskCompletionSource<PeerUdp>? asked = null;
        var request = _pairRequests.GetOrAdd(peer, _ => (asked = new TaskCompletionSource<PeerUdp>(TaskCreationOptions.RunContinuationsAsynchronously)).Task);
        if (asked is not null && ReferenceEquals(request, asked.Task))
            _ = CompletePairRequestAsync(peer, asked);
        return cancellationToken.CanBeCanceled ? Internal.TaskWaits.WaitAsync(request, Timeout.InfiniteTimeSpan, cancellationToken) : request;
    }

    private async Task CompletePairRequestAsync(Guid peer, TaskCompletionSource<PeerUdp> asked)
    {
        PeerUdp? pair = null;
        Exception? failure = null;
        try
        {
            pair = await RequestPairAsync(peer).ConfigureAwait(false);
        }
        catch (Exception e) when (e is not OutOfMemoryException)
        {
            failure = e;
        }

        ((ICollection<KeyValuePair<Guid, Task<PeerUdp>>>)_pairRequests).Remove(new KeyValuePair<Guid, Task<PeerUdp>>(peer, asked.Task));
        if (failure is null)
            asked.TrySetResult(pair!);
        else
            asked.TrySetException(failure);
    }

    private async Task<PeerUdp> RequestPairAsync(Guid peer)
    {
        var request = new MessageEnvelope(RelayKinds.UdpSession).Pack(new UdpPairRequestMessage { PeerId = GuidBytes.ToArray(peer) });
        var reply = await AskRelayAsync(request, ControlTimeout, CancellationToken.None).ConfigureAwait(false);
        return InstallPair(reply.Unpack<UdpPairMessage>()) ?? throw new RelayException(RelayStatus.Unsupported, "No UDP socket: the relay announced no UDP port.");
    }

    /// <summary>
    /// The pair key the relay sent (a reply or a plain message): its session, made once per peer. A
    /// plain message with another pair id replaces the key held: relay nodes whose peers asked for
    /// one pair at once, each on its node, agree on one key and send it (docs/scale-out.md).
    /// </summary>
    private PeerUdp? InstallPair(UdpPairMessage message, bool replaces = false)
    {
        var peer = GuidBytes.Read(message.PeerId);
        if (_udp is not { } udp || peer == Guid.Empty || message.Secret is not { Length: SecureUdpSession.SecretLength } secret)
            return null;
        try
        {
            lock (_pairs)
            {
                var pairId = GuidBytes.Read(message.PairId);
                if (_pairs.TryGetValue(peer, out var existing))
                {
                    if (!replaces || existing.PairId == pairId)
                        return existing;
                    ClosePair(peer);
                }

                var me = PeerId;
                var context = UdpFraming.PairContext(pairId, message.Initiator ? me : peer, message.Initiator ? peer : me);
                var session = new SecureUdpSession(secret, context, message.Initiator ? SecureUdpRole.Initiator : SecureUdpRole.Responder, message.LocalIndex, message.RemoteIndex);
                var pair = new PeerUdp(peer, session, message.Initiator, pairId);
                _pairs[peer] = pair;
                udp.Add(pair);
                return pair;
            }
        }
        finally
        {
            Array.Clear(secret, 0, secret.Length);
        }
    }

    /// <summary>The welcome named the relay's UDP port: the socket, the client-relay session, the BIND.</summary>
    private void OpenUdp(WelcomeMessage welcome)
    {
        if (welcome.UdpPort == 0 || welcome.UdpSecret is not { Length: SecureUdpSession.SecretLength } secret)
            return;
        try
        {
            // The address the TLS connection reached, not the endpoint resolved again: a host name
            // (localhost) may resolve to ::1 first and to 127.0.0.1 next, and the relay may listen on one only.
            if (RelayAddress() is not { } address)
                return;
            var port = UdpPortOverrideForTests != 0 ? UdpPortOverrideForTests : (int)welcome.UdpPort;
            var session = new SecureUdpSession(secret, UdpFraming.RelayContext(SessionId, PeerId), SecureUdpRole.Initiator, welcome.UdpClientIndex, welcome.UdpRelayIndex);
            _udp = new UdpChannel(this, new IPEndPoint(address, port), session, UdpBindTimeout);
        }
        finally
        {
            Array.Clear(secret, 0, secret.Length);
        }
    }

    private IPAddress? RelayAddress()
    {
        try
        {
            return (Internal.IpAddresses.Unmap(_connection.Transport.Socket?.RemoteEndPoint) as IPEndPoint)?.Address;
        }
        catch (ObjectDisposedException)
        {
            return null; // the connection closed meanwhile
        }
    }

    /// <summary>A peer left: its pair session goes.</summary>
    private void ClosePair(Guid peer)
    {
        lock (_punchLimitLock)
            _punchRequests.Remove(peer); // its punch request times go with it
        if (!_pairs.TryRemove(peer, out var pair))
            return;
        _udp?.Remove(pair);
        (pair.TakePunch() as PunchState)?.Stop.Cancel();
        pair.Session.Dispose();
    }

    /// <summary>The connection ended: the socket and every pair go.</summary>
    private void CloseUdp()
    {
        StopKeepalives();
        foreach (var peer in _pairs.Keys)
            ClosePair(peer);
        Interlocked.Exchange(ref _udp, null)?.Dispose();
    }
}
