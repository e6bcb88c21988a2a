using System;
using System.Collections.Generic;
using System.Net;
using System.Threading;
using NetServer.P2P.Diagnostics;
using NetServer.P2P.Internal;
using NetServer.P2P.Server;

namespace NetServer.P2P;

/// <summary>
/// A relay for peers over TLS: they register, get an id bound to their connection, see each
/// other join and leave (a versioned peer list kept by deltas), send envelopes, typed payloads and
/// awaited requests to each other, to rooms and to everyone. The relay is the identity authority:
/// it overwrites <c>From</c> on everything it routes with the sender's id, and answers what it
/// cannot deliver with a status the sender sees. Routing reads the envelope's <c>To</c> in place
/// and copies its bytes into the addressee's send queue without decoding the payload.
/// See docs/p2p.md for the wire messages and the limits (<see cref="RelayServerOptions"/>).
/// </summary>
/// <example>
/// <code>
/// using var relay = new RelayServer(new SslContext(SslProtocols.None, certificate), IPAddress.Any, 7000);
/// relay.Start();
/// </code>
/// </example>
public partial class RelayServer : IDisposable
{
    private readonly RelayHost _host;
    private RelayServerOptions _limits;
    private RelayUdp? _udp;

    /// <summary>
    /// A relay on <paramref name="address"/>:<paramref name="port"/> (port 0 picks a free port) with the certificate and policy of <paramref name="context"/>.
    /// On <see cref="IPAddress.IPv6Any"/> it is dual-stack: IPv4 and IPv6 peers, TLS and UDP.
    /// </summary>
    public RelayServer(SslContext context, IPAddress address, int port, RelayServerOptions? options = null)
        : this(context, new IPEndPoint(address, port), options)
    {
    }

    /// <summary>A relay on <paramref name="endpoint"/> (an IP or DNS endpoint) with the certificate and policy of <paramref name="context"/>.</summary>
    public RelayServer(SslContext context, EndPoint endpoint, RelayServerOptions? options = null)
    {
        Guard.NotNull(context, nameof(context));
        Options = options ?? new RelayServerOptions();
        _limits = Options.Clone();
        _host = new RelayHost(this, context, endpoint);
    }

    /// <summary>The limits; changes take effect at the next <see cref="Start"/>.</summary>
    public RelayServerOptions Options { get; }

    /// <summary>The limits in force (a copy of <see cref="Options"/> taken by <see cref="Start"/>).</summary>
    internal RelayServerOptions Limits => Volatile.Read(ref _limits);

    /// <summary>The endpoint the relay listens on; after <see cref="Start"/> the bound one.</summary>
    public EndPoint Endpoint => _host.Endpoint;

    /// <summary>The bound port (after <see cref="Start"/>).</summary>
    public int Port => _host.Port;

    /// <summary>The relay's UDP port after <see cref="Start"/> (0 when <see cref="RelayServerOptions.UdpEnabled"/> is false or before).</summary>
    public int UdpPort => _udp?.Port ?? 0;

    /// <summary>The UDP port, for the pair-key and forwarding paths (null without one).</summary>
    internal RelayUdp? Udp => _udp;

    /// <summary>True between <see cref="Start"/> and <see cref="Stop"/>.</summary>
    public bool IsStarted => _host.IsStarted;

    /// <summary>Connections now, registered or not.</summary>
    public long ConnectedSessions => _host.ConnectedSessions;

    /// <summary>Checks the options, then starts listening; false if already started.</summary>
    /// <exception cref="ArgumentOutOfRangeException">A limit in <see cref="Options"/> is out of range.</exception>
    /// <exception cref="ArgumentException">A prefix in <see cref="RelayServerOptions.Nat64Prefixes"/> is not a translator prefix.</exception>
    public bool Start()
    {
        if (_host.IsStarted)
            return false;
        var limits = Options.Clone(); // checked as copied: another thread's change to Options in between cannot slip past the check
        limits.Validate();
        Volatile.Write(ref _limits, limits);
        _host.OptionMaxMessageSize = limits.MaxMessageSize;
        _host.OptionMaxSessions = limits.MaxConnections;
        _host.OptionNoDelay = true;
        _host.OptionDualMode = true; // on an IPv6 address (as [::]) IPv4 peers come in too, as they do on the UDP port (RelayUdp)
        StartCluster(limits); // first: a backplane that refuses this relay throws before anything listens
        if (!_host.Start())
        {
            StopCluster();
            return false;
        }

        if (limits.UdpEnabled)
        {
            var address = (_host.Endpoint as IPEndPoint)?.Address ?? IPAddress.Any;
            Volatile.Write(ref _udp, new RelayUdp(this, address, limits.UdpPort));
        }

        RelayTelemetry.Add(this);
        return true;
    }

    /// <summary>Stops listening and disconnects every peer; false if not started.</summary>
    public bool Stop()
    {
        RelayTelemetry.Remove(this);
        StopCluster();
        var stopped = _host.Stop();
        Interlocked.Exchange(ref _udp, null)?.Dispose();
        return stopped;
    }

    /// <summary>The registered peers now (a copy).</summary>
    public IReadOnlyList<RelayPeer> GetPeers()
    {
        var peers = PeerArray;
        var list = new RelayPeer[peers.Length];
        for (var i = 0; i < peers.Length; i++)
            list[i] = peers[i].Info;
        return list;
    }

    /// <summary>The registered peer with <paramref name="id"/>.</summary>
    public bool TryGetPeer(Guid id, out RelayPeer? peer)
    {
        peer = FindPeer(id)?.Info;
        return peer is not null;
    }

    /// <summary>The id of the registered peer whose connection comes from <paramref name="remote"/> (as SNL's <c>TryGetClientId</c>; an IPv4 peer of a relay on [::] by its IPv4 endpoint).</summary>
    public bool TryGetPeerId(EndPoint remote, out Guid peerId)
    {
        remote = IpAddresses.Unmap(remote);
        foreach (var peer in PeerArray)
        {
            if (Equals(IpAddresses.Unmap(peer.Session.RemoteEndPoint), remote))
            {
                peerId = peer.Id;
                return true;
            }
        }

        peerId = Guid.Empty;
        return false;
    }

    /// <summary>
    /// Disconnects the peer with <paramref name="id"/> (the others see it leave); false if no such
    /// peer. As <c>MessageSession.Disconnect</c>: from outside a hook it returns once the peer's
    /// connection closed; from inside one (<see cref="OnPeerRegistered"/>) at once.
    /// </summary>
    public bool DisconnectPeer(Guid id) => FindPeer(id)?.Session.Disconnect() == true;

    /// <summary>One peer's figures.</summary>
    public bool TryGetPeerStatistics(Guid id, out RelayPeerStatistics? statistics)
    {
        statistics = FindPeer(id) is { } peer ? StatisticsOf(peer) : null;
        return statistics is not null;
    }

    /// <summary>The relay's totals.</summary>
    public RelayStatistics GetStatistics()
    {
        long received, relayed, bytes;
        lock (_viewLock)
            (received, relayed, bytes) = (_departedReceived, _departedRelayed, _departedBytes);
        foreach (var peer in PeerArray)
        {
            received += peer.MessagesReceived;
            relayed += peer.MessagesRelayed;
            bytes += peer.BytesRelayed;
        }

        var refusals = new long[_refusals.Length];
        for (var i = 0; i < refusals.Length; i++)
            refusals[i] = Interlocked.Read(ref _refusals[i]);
        return new RelayStatistics(refusals)
        {
            Connections = _host.ConnectedSessions,
            Peers = PeerArray.Length,
            PeersVersion = PeersVersion,
            Registrations = Interlocked.Read(ref _registrations),
            Rooms = RoomCount,
            MessagesReceived = received,
            MessagesRelayed = relayed,
            BytesRelayed = bytes,
        };
    }

    /// <summary>Stops the relay and releases its listener.</summary>
    public void Dispose()
    {
        Dispose(true);
        GC.SuppressFinalize(this);
    }

    /// <summary>
    /// Called on the connection's receive thread when it asks to register, before it gets an id:
    /// return <see cref="RelayStatus.Ok"/> to admit it, anything else to refuse it (it gets that
    /// status, as <see cref="RelayStatus.RegistrationRefused"/> when the value is not a refusal
    /// status, and is disconnected). By default every registration within the limits is admitted.
    /// </summary>
    protected virtual RelayStatus OnRegistering(RelayRegistration registration) => RelayStatus.Ok;

    /// <summary>Called once a peer registered (the others have been told).</summary>
    protected virtual void OnPeerRegistered(RelayPeer peer)
    {
    }

    /// <summary>Called once a registered peer left (the others have been told).</summary>
    protected virtual void OnPeerLeft(RelayPeer peer, DisconnectReason reason)
    {
    }

    /// <summary>Stops the relay.</summary>
    protected virtual void Dispose(bool disposing)
    {
        if (!disposing)
            return;
        RelayTelemetry.Remove(this);
        StopCluster();
        _host.Dispose();
        Interlocked.Exchange(ref _udp, null)?.Dispose();
    }

    internal RelayStatus InvokeRegistering(RelayRegistration registration) => OnRegistering(registration);

    private RelayPeerStatistics StatisticsOf(RelayPeerState peer)
    {
        var session = peer.Session;
        var connection = session.Connection;
        return new RelayPeerStatistics(peer.Info)
        {
            RemoteEndPoint = IpAddresses.Unmap(session.RemoteEndPoint),
            MessagesReceived = peer.MessagesReceived,
            MessagesRelayed = peer.MessagesRelayed,
            BytesRelayed = peer.BytesRelayed,
            MessagesRefused = peer.Refused,
            BytesReceived = connection?.BytesReceived ?? 0,
            BytesSent = connection?.BytesSent ?? 0,
            BytesPending = connection?.BytesPending ?? 0,
            RequestsInFlight = peer.Requests.Count,
            Rooms = RoomsOf(peer),
            JoinedVersion = peer.JoinedVersion,
        };
    }
}
