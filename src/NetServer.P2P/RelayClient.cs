using System;
using System.Collections.Concurrent;
using System.Collections.Generic;
using System.IO;
using System.Net;
using System.Threading;
using System.Threading.Tasks;
using NetServer.P2P.Client;
using NetServer.P2P.Internal;
using NetServer.P2P.Wire;
using NetServer.P2P.Wire.Contracts;
using NetServer.Protobuf;

namespace NetServer.P2P;

/// <summary>
/// A peer of a <see cref="RelayServer"/>, over TLS: it registers (<see cref="ConnectAsync"/>),
/// keeps the relay's peer list (<see cref="GetPeers"/>, <see cref="OnPeerJoined"/>,
/// <see cref="OnPeerLeft"/>), sends envelopes and typed payloads to a peer, a room or everyone,
/// asks peers with awaited requests (<see cref="RequestAsync{TRequest, TResponse}"/>), and times
/// the way to each (<see cref="PingAsync"/>). Override the <c>On*</c> hooks; they run on the
/// connection's receive thread, in order, never concurrently with each other.
/// </summary>
/// <remarks>
/// Every envelope received from a peer carries the peer's true id in <c>From</c>: the relay writes
/// it. Envelopes from the relay itself (an empty <c>From</c>) are the control protocol and never
/// reach <see cref="OnMessage"/>. See docs/p2p.md.
/// </remarks>
public partial class RelayClient : IDisposable, IAsyncDisposable
{
    private static readonly Action<object?> s_registrationExpired = static state => ((RelayClient)state!).OnRegistrationExpired();

    private readonly RelayConnection _connection;
    private readonly PeerView _view = new();
    private readonly ConcurrentDictionary<Guid, PeerLink> _links = new();
    private readonly Deadline _registrationDeadline;
    private readonly List<PeerChange> _changes = []; // the receive hook's scratch list
    private volatile Registration? _registration;
    private TaskCompletionSource<bool>? _welcome;
    private bool _snapshotAsked;
    private TimeSpan? _relayRoundTrip;

    /// <summary>A client of the relay at <paramref name="host"/>:<paramref name="port"/> (a host name or an address as text: the name the relay's certificate must match), validating it with <paramref name="context"/>.</summary>
    public RelayClient(SslContext context, string host, int port)
        : this(context, IPAddress.TryParse(host ?? throw new ArgumentNullException(nameof(host)), out var address) ? new IPEndPoint(address, port) : new DnsEndPoint(host, port))
    {
    }

    /// <summary>A client of the relay at <paramref name="address"/>:<paramref name="port"/>.</summary>
    public RelayClient(SslContext context, IPAddress address, int port)
        : this(context, new IPEndPoint(address, port))
    {
    }

    /// <summary>A client of the relay at <paramref name="endpoint"/> (an IP or DNS endpoint).</summary>
    public RelayClient(SslContext context, EndPoint endpoint)
    {
        Guard.NotNull(context, nameof(context));
        Guard.NotNull(endpoint, nameof(endpoint));
        _connection = new RelayConnection(this, context, endpoint);
        _registrationDeadline = new Deadline(s_registrationExpired, this);
    }

    /// <summary>The name to register with (at most the relay's limit, 64 UTF-8 bytes by default; no control characters).</summary>
    public string Name { get; set; } = string.Empty;

    /// <summary>How long <see cref="ConnectAsync"/> waits for the relay's welcome after connecting (default 10 s).</summary>
    public TimeSpan RegistrationTimeout { get; set; } = TimeSpan.FromSeconds(10);

    /// <summary>How long a request to the relay itself (rooms, <see cref="PingRelayAsync"/>) waits for its answer (default 10 s).</summary>
    public TimeSpan ControlTimeout { get; set; } = TimeSpan.FromSeconds(10);

    /// <summary>The relay's endpoint.</summary>
    public EndPoint Endpoint => _connection.Endpoint;

    /// <summary>True while connected to the relay (registered or not).</summary>
    public bool IsConnected => _connection.IsConnected;

    /// <summary>True once the relay welcomed this client, until the connection ends.</summary>
    public bool IsRegistered => _registration is not null && _connection.IsConnected;

    /// <summary>This peer's id, given by the relay and bound to this connection (empty before registering).</summary>
    public Guid PeerId => _registration?.PeerId ?? Guid.Empty;

    /// <summary>
    /// This registration's session id, known only to this client and the relay: part of the key
    /// context of its UDP session with the relay (docs/p2p.md). Empty before registering.
    /// </summary>
    public Guid SessionId => _registration?.SessionId ?? Guid.Empty;

    /// <summary>The limits the relay announced (null before registering).</summary>
    public RelayLimits? Limits => _registration?.Limits;

    /// <summary>The version of the peer list this client holds.</summary>
    public long PeersVersion => _view.Version;

    /// <summary>Peers in the list (this client included).</summary>
    public int PeerCount => _view.Count;

    /// <summary>True while the peer list is complete at <see cref="PeersVersion"/> (false between a version gap and the snapshot that heals it).</summary>
    public bool IsPeerListSynchronized => _view.IsSynced;

    /// <summary>The round-trip time of the last <see cref="PingRelayAsync"/> (null before one).</summary>
    public TimeSpan? RelayRoundTrip => _relayRoundTrip;

    /// <summary>Bytes sent and received on the connection to the relay.</summary>
    public long BytesSent => _connection.Transport.BytesSent;

    /// <inheritdoc cref="BytesSent"/>
    public long BytesReceived => _connection.Transport.BytesReceived;

    /// <summary>The envelope connection underneath (tests pause its reading).</summary>
    internal ProtoClient ConnectionForTests => _connection;

    /// <summary>The peers in the list now (a copy; this client included).</summary>
    public IReadOnlyList<RelayPeer> GetPeers() => _view.ToArray();

    /// <summary>The peer with <paramref name="id"/> in the list.</summary>
    public bool TryGetPeer(Guid id, out RelayPeer? peer) => _view.TryGet(id, out peer);

    /// <summary>How datagrams reach <paramref name="peer"/>: <see cref="RelayPath.Direct"/> after a successful punch while the path answers, else <see cref="RelayPath.Relayed"/> (envelopes always go through the relay).</summary>
    public RelayPath GetPath(Guid peer) => _pairs.TryGetValue(peer, out var pair) && pair.Direct is not null ? RelayPath.Direct : RelayPath.Relayed;

    /// <summary>What this client exchanged with <paramref name="peer"/> (null for a peer not in the list).</summary>
    public PeerStatistics? GetStatistics(Guid peer)
    {
        if (!_links.TryGetValue(peer, out var link))
            return null;
        var statistics = link.Statistics();
        if (_pairs.TryGetValue(peer, out var pair))
            pair.Fill(statistics);
        return statistics;
    }

    /// <summary>
    /// Connects (TCP, TLS handshake, the relay's certificate validated by the context), registers
    /// with <see cref="Name"/>, and completes once the relay welcomed this client: <see cref="PeerId"/>
    /// is set and the peer list holds everyone registered (<see cref="OnRegistered"/>, then
    /// <see cref="OnPeerJoined"/> for each, have run).
    /// </summary>
    /// <exception cref="RelayException">The relay refused the registration (<see cref="RelayException.Status"/> says why); it closes the connection.</exception>
    /// <exception cref="TimeoutException">No welcome within <see cref="RegistrationTimeout"/>.</exception>
    /// <exception cref="IOException">The connection failed or closed.</exception>
    /// <exception cref="OperationCanceledException"><paramref name="cancellationToken"/> fired (the connection is closed).</exception>
    public async Task ConnectAsync(CancellationToken cancellationToken = default)
    {
        if (_connection.IsConnected || _connection.IsConnecting)
            throw new InvalidOperationException("The client is connected (or connecting) already.");
        var welcome = new TaskCompletionSource<bool>(TaskCreationOptions.RunContinuationsAsynchronously);
        Volatile.Write(ref _welcome, welcome);
        if (!await _connection.ConnectAsync(cancellationToken).ConfigureAwait(false))
            throw new IOException($"Could not connect to the relay at {Endpoint} ({_connection.DisconnectReason}).");

        var register = new MessageEnvelope(RelayKinds.Register) { To = RelayAddresses.Relay };
        register.Pack(new RegisterMessage { Name = Name ?? string.Empty, Protocol = RelayProtocol.Version });
        if (RegistrationTimeout != Timeout.InfiniteTimeSpan)
            _registrationDeadline.ArmAfter(RegistrationTimeout);
        try
        {
            if (!_connection.SendAsync(register))
                welcome.TrySetException(new IOException("The registration could not be sent: the connection closed."));
            using (cancellationToken.Register(static state => ((TaskCompletionSource<bool>)state!).TrySetCanceled(), welcome))
                await welcome.Task.ConfigureAwait(false);
        }
        catch
        {
            await _connection.DisconnectAsync(CancellationToken.None).ConfigureAwait(false);
            throw;
        }
        finally
        {
            _registrationDeadline.Disarm();
        }
    }

    /// <summary>Leaves the relay (the other peers see this one leave) and completes once disconnected; false if not connected.</summary>
    public Task<bool> DisconnectAsync(CancellationToken cancellationToken = default) => _connection.DisconnectAsync(cancellationToken);

    /// <summary>Disconnects and releases the connection.</summary>
    public void Dispose()
    {
        Dispose(true);
        GC.SuppressFinalize(this);
    }

    /// <summary>Disconnects, waiting for the connection to close, and releases it.</summary>
    public async ValueTask DisposeAsync()
    {
        await _connection.DisconnectAsync(CancellationToken.None).ConfigureAwait(false);
        Dispose(true);
        GC.SuppressFinalize(this);
    }

    /// <summary>Called when the relay welcomed this client, before the <see cref="OnPeerJoined"/> calls for the peers already registered.</summary>
    protected virtual void OnRegistered()
    {
    }

    /// <summary>Called when a peer joined the list (also for each peer already there when this client registers, and for this client itself).</summary>
    protected virtual void OnPeerJoined(RelayPeer peer)
    {
    }

    /// <summary>Called when a peer left the list; requests waiting for its replies have failed with <see cref="RelayStatus.PeerLeft"/>.</summary>
    protected virtual void OnPeerLeft(RelayPeer peer)
    {
    }

    /// <summary>Called after a snapshot of the peer list was applied: at registration, and after a version gap healed.</summary>
    protected virtual void OnPeersSynchronized(long version)
    {
    }

    /// <summary>
    /// Called with every envelope a peer sent this client (to it, to one of its rooms, or to
    /// everyone) that is not the reply to one of its requests, in order; valid only during the call.
    /// <c>From</c> is the sender's true id; answer requests with <c>Reply</c>.
    /// </summary>
    protected virtual void OnMessage(in ProtoMessage message)
    {
    }

    /// <summary>Called when the relay did not deliver a plain message this client sent (a refused request fails its task instead).</summary>
    protected virtual void OnDeliveryFailed(RelayDeliveryFailure failure)
    {
    }

    /// <summary>Called once when the connection to the relay ended (requests still waiting fail with an <see cref="IOException"/>).</summary>
    protected virtual void OnDisconnected(DisconnectReason reason)
    {
    }

    /// <summary>Releases the connection.</summary>
    protected virtual void Dispose(bool disposing)
    {
        if (!disposing)
            return;
        _registrationDeadline.Disarm();
        CloseUdp();
        _connection.Dispose();
    }

    /// <summary>The connection ended: the list, the links and the registration go; a registration in progress fails.</summary>
    internal void Disconnected(DisconnectReason reason)
    {
        _registrationDeadline.Disarm();
        Volatile.Read(ref _welcome)?.TrySetException(new IOException($"The connection to the relay closed ({reason}) before its welcome."));
        _registration = null;
        _snapshotAsked = false;
        _view.Reset();
        _links.Clear();
        CloseUdp();
        OnDisconnected(reason);
    }

    private void OnRegistrationExpired()
    {
        if (Volatile.Read(ref _welcome) is { } welcome && welcome.TrySetException(new TimeoutException($"The relay did not welcome this client within {RegistrationTimeout.TotalSeconds:0.###} s.")))
            _connection.Disconnect();
    }

    private sealed class Registration(Guid peerId, Guid sessionId, RelayLimits limits)
    {
        public Guid PeerId { get; } = peerId;

        public Guid SessionId { get; } = sessionId;

        public RelayLimits Limits { get; } = limits;
    }
}
