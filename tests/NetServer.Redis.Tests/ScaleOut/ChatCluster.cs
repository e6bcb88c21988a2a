using System;
using System.Collections.Generic;
using System.Globalization;
using System.Linq;
using System.Net;
using System.Threading.Tasks;
using NetServer.Tests.Infrastructure;

namespace NetServer.Redis.Tests.ScaleOut;

/// <summary>
/// The scale-out chat as deployed: a real redis-server, ScaleOutChat nodes (examples/ScaleOutChat)
/// as child processes named node1..nodeN, trusting PROXY headers from loopback only, and a real
/// HAProxy in TCP mode balancing round-robin over them with the given server options.
/// </summary>
internal sealed class ChatCluster : IAsyncDisposable
{
    private readonly List<ProgramProcess> _nodes = [];
    private readonly List<ChatClient> _clients = [];
    private HaproxyProcess? _haproxy;

    private ChatCluster(RedisProcess redis) => Redis = redis;

    public RedisProcess Redis { get; }

    /// <summary>Where clients connect.</summary>
    public IPEndPoint Endpoint => _haproxy!.Endpoint;

    /// <summary>Starts Redis, <paramref name="nodes"/> nodes (together: each is a .NET start-up) and HAProxy once they listen.</summary>
    public static async Task<ChatCluster> StartAsync(int nodes, string proxyOptions, TimeSpan presenceTtl)
    {
        var cluster = new ChatCluster(await RedisProcess.StartAsync());
        try
        {
            var ttl = presenceTtl.TotalSeconds.ToString(CultureInfo.InvariantCulture);
            for (var i = 1; i <= nodes; i++)
            {
                cluster._nodes.Add(ProgramProcess.Start("ScaleOutChat", TimeSpan.FromSeconds(30),
                    "0", "--node", $"node{i}", "--redis", cluster.Redis.Configuration, "--proxy-trust", "127.0.0.1", "--presence-ttl", ttl));
            }

            var ports = await Task.WhenAll(cluster._nodes.Select(node => node.ListeningPortAsync()));
            cluster._haproxy = await HaproxyProcess.StartAsync(ports.Select(port => (EndPoint)new IPEndPoint(IPAddress.Loopback, port)).ToArray(), proxyOptions);
            return cluster;
        }
        catch
        {
            await cluster.DisposeAsync();
            throw;
        }
    }

    /// <summary>A new member through HAProxy, once its node has welcomed it.</summary>
    public async Task<ChatClient> ConnectAsync()
    {
        var client = await ChatClient.ConnectAsync(Endpoint);
        _clients.Add(client);
        return client;
    }

    /// <summary>Kills the node's process with SIGKILL (no clean-up: it stops renewing its presence, its members stay in Redis).</summary>
    public ValueTask KillAsync(string node) => _nodes[int.Parse(node["node".Length..], CultureInfo.InvariantCulture) - 1].DisposeAsync();

    /// <summary>What the nodes printed, for failure messages.</summary>
    public string Transcripts => string.Join(Environment.NewLine, _nodes.Select((node, i) => $"--- node{i + 1}:{Environment.NewLine}{node.Transcript}"));

    public async ValueTask DisposeAsync()
    {
        foreach (var client in _clients)
            await client.DisposeAsync();
        if (_haproxy is not null)
            await _haproxy.DisposeAsync();
        foreach (var node in _nodes)
            await node.DisposeAsync();
        await Redis.DisposeAsync();
    }
}
