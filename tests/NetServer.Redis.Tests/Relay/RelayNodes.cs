using System;
using System.Collections.Generic;
using System.Linq;
using System.Net;
using System.Threading.Tasks;
using NetServer.P2P;
using NetServer.P2P.Tests.Infrastructure;
using NetServer.Tests.Infrastructure;

namespace NetServer.Redis.Tests.Relay;

/// <summary>
/// A cluster of relays on loopback port 0, each with its own <see cref="RedisRelayBackplane"/> on one
/// real redis-server, and the TLS peers a test connects to them. Heartbeats and the node timeout are
/// short so that a dead node shows within seconds.
/// </summary>
internal sealed class RelayNodes : IAsyncDisposable
{
    public static readonly TimeSpan Heartbeat = TimeSpan.FromMilliseconds(200);
    public static readonly TimeSpan NodeTimeout = TimeSpan.FromMilliseconds(1500);

    private readonly List<RelayClient> _clients = [];

    private readonly List<RedisRelayBackplane> _backplanes = [];
    private readonly List<RelayServer> _relays = [];
    private readonly TimeSpan _nodeTimeout;

    private RelayNodes(RedisProcess redis, TimeSpan nodeTimeout)
    {
        Redis = redis;
        _nodeTimeout = nodeTimeout;
    }

    public RedisProcess Redis { get; }

    public RedisRelayBackplane[] Backplanes => [.. _backplanes];

    public RelayServer[] Relays => [.. _relays];

    public static async Task<RelayNodes> StartAsync(int count, TimeSpan? nodeTimeout = null, Action<RelayServerOptions>? configure = null)
    {
        var nodes = new RelayNodes(await RedisProcess.StartAsync(), nodeTimeout ?? NodeTimeout);
        for (var i = 0; i < count; i++)
            await nodes.AddNodeAsync(configure: configure);
        return nodes;
    }

    /// <summary>
    /// Starts one more relay node on the cluster; returns its index. <paramref name="wrap"/> puts a
    /// test's backplane around the Redis one (the relay uses what it returns); <paramref name="configure"/>
    /// changes the relay's options, <paramref name="bounds"/> the backplane's.
    /// </summary>
    public async Task<int> AddNodeAsync(Func<IRelayBackplane, IRelayBackplane>? wrap = null, Action<RelayServerOptions>? configure = null, Action<BackplaneOptions>? bounds = null)
    {
        var options = new BackplaneOptions { Prefix = "relays", PresenceTtl = TimeSpan.FromSeconds(2), PresenceRefresh = TimeSpan.FromMilliseconds(500) };
        bounds?.Invoke(options);
        var backplane = new RedisRelayBackplane(options);
        _backplanes.Add(backplane);
        await backplane.StartAsync(Redis.Configuration);
        return AddRelay(wrap is null ? backplane : wrap(backplane), configure);
    }

    /// <summary>Starts a relay on <paramref name="backplane"/> (one a stopped relay used: the same node id again); returns its index.</summary>
    public int AddRelay(IRelayBackplane backplane, Action<RelayServerOptions>? configure = null)
    {
        var options = new RelayServerOptions
        {
            Backplane = backplane,
            NodeHeartbeatInterval = Heartbeat,
            NodeTimeout = _nodeTimeout,
            UdpEnabled = false,
        };
        configure?.Invoke(options);
        var relay = new RelayServer(TestCertificates.ServerContext(), IPAddress.Loopback, 0, options);
        _relays.Add(relay);
        if (!relay.Start())
            throw new InvalidOperationException($"relay {_relays.Count - 1} did not start");
        return _relays.Count - 1;
    }

    /// <summary>A registered peer named <paramref name="name"/> on relay <paramref name="node"/>.</summary>
    public Task<TestPeer> ConnectAsync(int node, string name) => ConnectAsync(new TestPeer(Endpoint(node)) { Name = name });

    /// <summary>Registers <paramref name="peer"/> (made for <see cref="Endpoint"/>), disposed with the cluster.</summary>
    public async Task<TestPeer> ConnectAsync(TestPeer peer)
    {
        lock (_clients)
            _clients.Add(peer);
        await peer.ConnectAsync().WaitAsync(Wait.Default);
        return peer;
    }

    /// <summary>Relay <paramref name="node"/>'s TLS endpoint.</summary>
    public IPEndPoint Endpoint(int node) => new(IPAddress.Loopback, Relays[node].Port);

    /// <summary>Waits until every peer lists exactly <paramref name="peers"/> (by id) and is synchronized.</summary>
    public static Task AllSeeAsync(IEnumerable<TestPeer> viewers, params TestPeer[] peers)
    {
        var ids = peers.Select(p => p.PeerId).OrderBy(id => id).ToArray();
        return Wait.UntilAsync(
            () => viewers.All(v => v.IsPeerListSynchronized && v.GetPeers().Select(p => p.Id).OrderBy(id => id).SequenceEqual(ids)),
            () => $"every peer to list {ids.Length} peers: {string.Join(", ", viewers.Select(v => $"{v.Name}={v.PeerCount}"))}");
    }

    public async ValueTask DisposeAsync()
    {
        RelayClient[] clients;
        lock (_clients)
            clients = [.. _clients];
        foreach (var client in clients)
            await client.DisposeAsync();
        foreach (var relay in _relays)
            relay.Dispose();
        foreach (var backplane in _backplanes)
            await backplane.DisposeAsync();
        await Redis.DisposeAsync();
    }
}
