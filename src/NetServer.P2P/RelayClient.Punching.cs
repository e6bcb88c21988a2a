using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.IO;
using System.Net;
using System.Net.NetworkInformation;
using System.Net.Sockets;
using System.Security.Cryptography;
using System.Threading;
using System.Threading.Tasks;
using NetServer.P2P.Client;
using NetServer.P2P.Internal;
using NetServer.P2P.Wire;
using NetServer.P2P.Wire.Contracts;
using NetServer.Protobuf;

namespace NetServer.P2P;

// Hole punching (docs/p2p.md, "Hole punching"): candidates exchanged as a p2p/punch request through
// the relay (its round trip timed), both sides punching every candidate from about the same moment,
// PUNCH answered with PUNCH_ACK, an authenticated PUNCH from an unknown endpoint punched back (a
// peer-reflexive candidate), the requester nominating the first acknowledged endpoint. Up to three
// tries, then Relayed. While direct: keepalives, and a silent path falls back to the relay.
public partial class RelayClient
{
    private const int PunchIntervalMilliseconds = 200;
    private const int MaxPunchTries = 3;
    private static readonly TimeSpan s_tryLength = TimeSpan.FromSeconds(2.5);

    private readonly object _punchLimitLock = new();
    private readonly Dictionary<Guid, Queue<long>> _punchRequests = [];
    private int _punchSessions;
    private Timer? _keepaliveTimer;

    private enum PunchTry
    {
        Direct,
        Failed,

        /// <summary>The peer offered no candidate this socket can send to (the other address family): no try can succeed.</summary>
        Hopeless,
    }

    /// <summary>How often a direct path is kept alive (default 1 s); a path silent for 4 times this falls back to the relay (<see cref="OnPathChanged"/>).</summary>
    public TimeSpan KeepaliveInterval { get; set; } = TimeSpan.FromSeconds(1);

    /// <summary>Punches this client takes part in at once, asked or asking (default 8). A request over it is refused (the asker ends Relayed).</summary>
    public int MaxPunchSessions { get; set; } = 8;

    /// <summary>Punch requests one peer may make of this client a minute (default 10). Over it: refused (the asker ends Relayed).</summary>
    public int MaxPunchRequestsPerMinute { get; set; } = 10;

    /// <summary>
    /// Tries to go direct to <paramref name="peer"/> by UDP hole punching, within
    /// <paramref name="timeout"/>: up to three tries of about 2.5 s each; ends
    /// <see cref="RelayPath.Direct"/> (datagrams then go straight to the peer) or
    /// <see cref="RelayPath.Relayed"/> (they keep going through the relay). Never throws for a
    /// punch that failed; a refused pair key or a closed connection ends Relayed too.
    /// </summary>
    /// <exception cref="OperationCanceledException"><paramref name="cancellationToken"/> fired.</exception>
    public async Task<RelayPath> ConnectDirectAsync(Guid peer, TimeSpan timeout, CancellationToken cancellationToken = default)
    {
        var started = Stopwatch.StartNew();
        PeerUdp pair;
        try
        {
            pair = _pairs.TryGetValue(peer, out var known) ? known : await PairAsync(peer, cancellationToken).ConfigureAwait(false);
            if (pair.Direct is not null)
                return RelayPath.Direct;
            if (_udp is not { } udp || !await TaskWaits.WaitAsync(udp.Bound, Remaining(started, timeout), cancellationToken).ConfigureAwait(false))
                return RelayPath.Relayed;
        }
        catch (Exception e) when (e is RelayException or TimeoutException or IOException)
        {
            return RelayPath.Relayed;
        }

        if (!TryEnterPunch())
            return RelayPath.Relayed;
        pair.CountPunchAttempt();
        try
        {
            for (var tryNumber = 0; tryNumber < MaxPunchTries && started.Elapsed < timeout; tryNumber++)
            {
                cancellationToken.ThrowIfCancellationRequested();
                var outcome = await TryPunchAsync(pair, started, timeout, cancellationToken).ConfigureAwait(false);
                if (outcome == PunchTry.Direct)
                {
                    pair.CountPunchSuccess();
                    return RelayPath.Direct;
                }

                if (outcome == PunchTry.Hopeless)
                    break;
            }

            return RelayPath.Relayed;
        }
        finally
        {
            Interlocked.Decrement(ref _punchSessions);
        }
    }

    /// <summary>SNL's name for <see cref="ConnectDirectAsync"/>: true when it ended <see cref="RelayPath.Direct"/>.</summary>
    public async Task<bool> RequestHolePunchAsync(Guid peer, TimeSpan timeout, CancellationToken cancellationToken = default) =>
        await ConnectDirectAsync(peer, timeout, cancellationToken).ConfigureAwait(false) == RelayPath.Direct;

    /// <summary>Called when the path to a peer changed: <see cref="RelayPath.Direct"/> after a punch, <see cref="RelayPath.Relayed"/> when a direct path stopped answering (datagrams go through the relay again). On a timer or receive thread.</summary>
    protected virtual void OnPathChanged(Guid peer, RelayPath path)
    {
    }

    private static TimeSpan Remaining(Stopwatch started, TimeSpan timeout)
    {
        var left = timeout - started.Elapsed;
        return left > TimeSpan.Zero ? left : TimeSpan.Zero;
    }

    private async Task<PunchTry> TryPunchAsync(PeerUdp pair, Stopwatch started, TimeSpan timeout, CancellationToken cancellationToken)
    {
        var tryLength = Remaining(started, timeout) < s_tryLength ? Remaining(started, timeout) : s_tryLength;
        var asked = Stopwatch.StartNew();
        PunchOfferMessage answer;
        try
        {
            answer = await RequestAsync<PunchOfferMessage, PunchOfferMessage>(pair.PeerId, new MessageEnvelope(RelayKinds.PeerPunch), Offer(), tryLength, cancellationToken).ConfigureAwait(false);
        }
        catch (Exception e) when (e is RelayException or TimeoutException or IOException or InvalidDataException)
        {
            return PunchTry.Failed;
        }

        if (answer.Refused || _udp is not { } udp)
            return PunchTry.Failed;
        var candidates = Candidates(answer, udp);
        if (candidates.Count == 0)
            return PunchTry.Hopeless;

        // The answer took a round trip; the peer started punching when it sent it, half of one ago.
        var halfTrip = TimeSpan.FromTicks(asked.Elapsed.Ticks / 2);
        var punch = StartPunch(pair, candidates);
        try
        {
            await Task.Delay(halfTrip, cancellationToken).ConfigureAwait(false);
            _ = SprayAsync(pair, punch, tryLength);
            var acknowledged = await TaskWaits.WaitAsync(punch.Acknowledged.Task, Remaining(started, timeout) < tryLength ? Remaining(started, timeout) : tryLength, cancellationToken).ConfigureAwait(false);
            GoDirect(pair, acknowledged);
            Send(pair.PeerId, new MessageEnvelope(RelayKinds.PeerPunchNominate));
            return PunchTry.Direct;
        }
        catch (TimeoutException)
        {
            return PunchTry.Failed;
        }
        finally
        {
            EndPunch(pair, punch);
        }
    }

    /// <summary>A p2p/punch request or nomination from a peer (on the receive thread); false for any other message.</summary>
    private bool OnPunchMessage(in ProtoMessage message)
    {
        if (message.HeaderUtf8.SequenceEqual("p2p/punch-nominate"u8))
        {
            // Only while a punch runs with that peer (none: EndPunch cleared it): a nomination
            // out of the blue moves nothing.
            if (_pairs.TryGetValue(message.From, out var nominated) && nominated.Punch is PunchState state && !state.Stop.IsCancellationRequested
                && state.NominatedEndpoint is { } endpoint)
                GoDirect(nominated, endpoint);
            return true;
        }

        if (!message.IsRequest || !message.HeaderUtf8.SequenceEqual("p2p/punch"u8))
            return false;
        var from = message.From;
        PunchOfferMessage offer;
        try
        {
            offer = message.Unpack<PunchOfferMessage>(); // before admission: a malformed request holds no punch session
        }
        catch (Exception e) when (e is not OutOfMemoryException)
        {
            _connection.Reply(in message, new PunchOfferMessage { Refused = true });
            return true;
        }

        if (!_pairs.TryGetValue(from, out var pair) || _udp is not { IsBound: true } udp || !TryAdmitPunchRequest(from))
        {
            _connection.Reply(in message, new PunchOfferMessage { Refused = true });
            return true;
        }

        // The punch exists before the answer leaves: the requester punches as soon as it has the
        // answer, and a PUNCH that reached this side before its punch existed was acknowledged
        // with nothing kept (no endpoint), so the nomination that followed was dropped and this
        // side stayed Relayed.
        PunchState? punch = null;
        try
        {
            var answer = Offer();
            punch = StartPunch(pair, Candidates(offer, udp));
            _connection.Reply(in message, answer);
        }
        catch
        {
            // The admitted session and the punch end here: nothing else would end them.
            if (punch is not null)
                EndPunch(pair, punch);
            Interlocked.Decrement(ref _punchSessions);
            throw;
        }

        _ = AnswerPunchAsync(pair, punch);
        return true;
    }

    /// <summary>
    /// The asked side's punch: sprays for up to a try's length (its punch session), then keeps the
    /// punch, sending no more of its own, until two tries' length after the answer, so that the
    /// asker's nomination (a relay round trip after its own spray) still finds it; then ends it,
    /// unless a newer punch replaced it.
    /// </summary>
    private async Task AnswerPunchAsync(PeerUdp pair, PunchState punch)
    {
        var lived = Stopwatch.StartNew();
        try
        {
            try
            {
                await SprayAsync(pair, punch, s_tryLength).ConfigureAwait(false);
            }
            finally
            {
                Interlocked.Decrement(ref _punchSessions); // the session is the spray; the wait holds only the punch
            }

            var left = s_tryLength + s_tryLength - lived.Elapsed;
            if (left > TimeSpan.Zero)
                await Task.Delay(left, punch.Stop.Token).ConfigureAwait(false);
        }
        catch (OperationCanceledException)
        {
        }
        finally
        {
            EndPunch(pair, punch);
        }
    }

    private bool TryEnterPunch()
    {
        if (Interlocked.Increment(ref _punchSessions) <= MaxPunchSessions)
            return true;
        Interlocked.Decrement(ref _punchSessions);
        return false;
    }

    private bool TryAdmitPunchRequest(Guid peer)
    {
        var now = Milliseconds.Now;
        lock (_punchLimitLock)
        {
            if (!_punchRequests.TryGetValue(peer, out var times))
                _punchRequests[peer] = times = new Queue<long>();
            while (times.Count > 0 && now - times.Peek() > 60_000)
                times.Dequeue();
            if (times.Count >= MaxPunchRequestsPerMinute)
                return false;
            times.Enqueue(now);
        }

        return TryEnterPunch();
    }

    /// <summary>Starts a punch with the pair's peer; the one it replaces (if any) stops.</summary>
    private static PunchState StartPunch(PeerUdp pair, IEnumerable<IPEndPoint> candidates)
    {
        var punch = new PunchState(candidates);
        (pair.ReplacePunch(punch) as PunchState)?.Stop.Cancel();
        return punch;
    }

    /// <summary>Stops <paramref name="punch"/>, and clears it from the pair unless a newer punch replaced it.</summary>
    private static void EndPunch(PeerUdp pair, PunchState punch)
    {
        punch.Stop.Cancel();
        pair.EndPunch(punch);
    }

    private async Task SprayAsync(PeerUdp pair, PunchState punch, TimeSpan length)
    {
        var until = Stopwatch.StartNew();
        try
        {
            while (until.Elapsed < length && !punch.Stop.IsCancellationRequested && _udp is { } udp)
            {
                foreach (var candidate in punch.Snapshot())
                {
                    if (!punch.TryCountPunch())
                        return; // PunchState.MaxPunches sent: this try is spent
                    udp.SendDirect(pair, SecureDatagramType.Punch, default, candidate);
                }

                await Task.Delay(PunchIntervalMilliseconds - 40 + RandomNumberGenerator.GetInt32(80), punch.Stop.Token).ConfigureAwait(false);
            }
        }
        catch (OperationCanceledException)
        {
        }
    }

    /// <summary>An authenticated PUNCH, PUNCH_ACK or KEEPALIVE straight from the peer (the UDP receive thread).</summary>
    private void OnPunchDatagram(PeerUdp pair, SecureDatagramType type, ReadOnlySpan<byte> payload, IPEndPoint from, bool isNewest)
    {
        var punch = pair.Punch as PunchState;
        if (punch is not null && type is SecureDatagramType.Punch or SecureDatagramType.PunchAck)
            punch.LastHeard = from;
        switch (type)
        {
            case SecureDatagramType.Punch:
                _udp?.SendDirect(pair, SecureDatagramType.PunchAck, default, from);
                if (punch is not null && punch.AddPeerReflexive(from) && punch.TryCountPunch())
                    _udp?.SendDirect(pair, SecureDatagramType.Punch, default, from); // a peer-reflexive candidate (at most PunchState.MaxPeerReflexive, while the punch runs)
                break;
            case SecureDatagramType.PunchAck:
                punch?.Acknowledge(from);
                break;
        }

        // Authenticated and the newest yet: a direct path follows the peer to its new endpoint
        // (roaming); an older datagram (delayed, or replayed from elsewhere within the window) does not.
        if (isNewest && pair.Direct is { } direct && !direct.Equals(from))
            pair.Roam(direct, from);
    }

    private void GoDirect(PeerUdp pair, IPEndPoint endpoint)
    {
        pair.LastDirectReceive = Milliseconds.Now;
        if (pair.GoDirect(endpoint))
            OnPathChanged(pair.PeerId, RelayPath.Direct);
        EnsureKeepalives();
    }

    private void EnsureKeepalives()
    {
        if (Volatile.Read(ref _keepaliveTimer) is not null)
            return;
        var timer = new Timer(static state => ((RelayClient)state!).KeepDirectPathsAlive(), this, KeepaliveInterval, KeepaliveInterval);
        if (Interlocked.CompareExchange(ref _keepaliveTimer, timer, null) is not null)
            timer.Dispose();
    }

    private void KeepDirectPathsAlive()
    {
        var silentFor = 4 * (long)KeepaliveInterval.TotalMilliseconds;
        var now = Milliseconds.Now;
        foreach (var pair in _pairs.Values)
        {
            if (pair.Direct is not { } direct)
                continue;
            if (now - pair.LastDirectReceive > silentFor)
            {
                if (pair.FallBack(direct))
                    OnPathChanged(pair.PeerId, RelayPath.Relayed);
                continue;
            }

            _udp?.SendDirect(pair, SecureDatagramType.Keepalive, default, direct);
        }
    }

    private void StopKeepalives() => Interlocked.Exchange(ref _keepaliveTimer, null)?.Dispose();

    /// <summary>This client's candidates: each local address with the socket's port, then the server-reflexive endpoint.</summary>
    private PunchOfferMessage Offer()
    {
        var offer = new PunchOfferMessage();
        if (_udp is not { } udp)
            return offer;
        var port = udp.LocalEndpoint.Port;
        foreach (var address in LocalAddresses(udp.LocalEndpoint.AddressFamily, udp.RelayIsLoopback))
        {
            // What the peer would refuse (PunchState.IsPunchable), not offered: link-local, site-local and the like.
            var candidate = new IPEndPoint(address, port);
            if (PunchState.IsPunchable(candidate, udp.RelayIsLoopback))
                offer.Candidates.Add(Encode(candidate));
        }

        if (udp.ServerReflexive is { } reflexive)
            offer.Candidates.Add(Encode(reflexive));
        return offer;
    }

    private static IEnumerable<IPAddress> LocalAddresses(AddressFamily family, bool loopback)
    {
        if (loopback)
        {
            yield return family == AddressFamily.InterNetworkV6 ? IPAddress.IPv6Loopback : IPAddress.Loopback;
            yield break;
        }

        foreach (var nic in NetworkInterface.GetAllNetworkInterfaces())
        {
            if (nic.OperationalStatus != OperationalStatus.Up || nic.NetworkInterfaceType == NetworkInterfaceType.Loopback)
                continue;
            foreach (var unicast in nic.GetIPProperties().UnicastAddresses)
            {
                if (unicast.Address.AddressFamily == family)
                    yield return unicast.Address;
            }
        }
    }

    private static byte[] Encode(IPEndPoint endpoint)
    {
        var bytes = new byte[19];
        return bytes.AsSpan(0, UdpFraming.WriteEndpoint(bytes, endpoint)).ToArray();
    }

    /// <summary>The peer's candidates <paramref name="udp"/> can punch: of its address family, punchable (loopback only when the relay is), at most 16.</summary>
    private static List<IPEndPoint> Candidates(PunchOfferMessage offer, UdpChannel udp)
    {
        var list = new List<IPEndPoint>();
        foreach (var bytes in offer.Candidates)
        {
            if (list.Count == 16)
                break;
            if (!UdpFraming.TryReadEndpoint(bytes, out var read))
                continue;
            var endpoint = IpAddresses.Unmap(read!);
            if (udp.CanSendTo(endpoint) && PunchState.IsPunchable(endpoint, udp.RelayIsLoopback))
                list.Add(endpoint);
        }

        return list;
    }
}
