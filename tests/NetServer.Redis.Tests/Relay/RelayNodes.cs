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

    private RelayNodes(RedisProcess redis, RedisRelayBackplane[] backplanes, RelayServer[] relays)
    {
        Redis = redis;
        Backplanes = backplanes;
        Relays = relays;
    }

    public RedisProcess Redis { get; }

    public RedisRelayBackplane[] Backplanes { get; }

    public RelayServer[] Relays { get; }

    public static async Task<RelayNodes> StartAsync(int count, TimeSpan? nodeTimeout = null)
    {
        var redis = await RedisProcess.StartAsync();
        var backplanes = new RedisRelayBackplane[count];
        var relays = new RelayServer[count];
        for (var i = 0; i < count; i++)
        {
            backplanes[i] = new RedisRelayBackplane(new BackplaneOptions { Prefix = "relays", PresenceTtl = TimeSpan.FromSeconds(2), PresenceRefresh = TimeSpan.FromMilliseconds(500) });
            await backplanes[i].StartAsync(redis.Configuration);
            relays[i] = new RelayServer(TestCertificates.ServerContext(), IPAddress.Loopback, 0, new RelayServerOptions
            {
                Backplane = backplanes[i],
                NodeHeartbeatInterval = Heartbeat,
                NodeTimeout = nodeTimeout ?? NodeTimeout,
                UdpEnabled = false,
            });
            if (!relays[i].Start())
                throw new InvalidOperationException($"relay {i} did not start");
        }

        return new RelayNodes(redis, backplanes, relays);
    }

    /// <summary>A registered peer named <paramref name="name"/> on relay <paramref name="node"/>.</summary>
    public async Task<TestPeer> ConnectAsync(int node, string name)
    {
        var peer = new TestPeer(new IPEndPoint(IPAddress.Loopback, Relays[node].Port)) { Name = name };
        lock (_clients)
            _clients.Add(peer);
        await peer.ConnectAsync().WaitAsync(Wait.Default);
        return peer;
    }

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
        foreach (var relay in Relays)
            relay.Dispose();
        foreach (var backplane in Backplanes)
            await backplane.DisposeAsync();
        await Redis.DisposeAsync();
    }
}
