using System;
using System.Collections.Generic;
using System.Linq;
using System.Net;
using System.Threading.Tasks;
using NetServer.Tests.Infrastructure;
using Xunit;

namespace NetServer.P2P.Tests.Infrastructure;

/// <summary>A relay on loopback port 0 (127.0.0.1 unless a test gives another address) with the in-process test certificates, and the peers a test connects to it.</summary>
public sealed class RelayHarness : IAsyncDisposable
{
    private readonly List<RelayClient> _clients = [];
    private readonly IPAddress _address;

    public RelayHarness(RelayServerOptions? options = null, Func<RelayServerOptions?, RelayServer>? create = null, IPAddress? address = null)
    {
        options ??= new RelayServerOptions();
        _address = address ?? IPAddress.Loopback;
        Relay = create?.Invoke(options) ?? new RelayServer(TestCertificates.ServerContext(), _address, 0, options);
        Assert.True(Relay.Start(), "the relay did not start");
    }

    public RelayServer Relay { get; }

    /// <summary>Where peers connect: the relay's address (::1 for a dual-stack relay on [::]).</summary>
    public EndPoint Endpoint => EndpointAt(_address.Equals(IPAddress.IPv6Any) ? IPAddress.IPv6Loopback : _address);

    /// <summary>The relay's port at <paramref name="address"/> (127.0.0.1 or ::1 for a dual-stack relay).</summary>
    public EndPoint EndpointAt(IPAddress address) => new IPEndPoint(address, Relay.Port);

    /// <summary>A registered peer named <paramref name="name"/>.</summary>
    public async Task<TestPeer> ConnectAsync(string name = "peer") => await ConnectAsync(new TestPeer(Endpoint) { Name = name });

    /// <summary>Registers <paramref name="client"/>, disposed with the harness.</summary>
    public async Task<T> ConnectAsync<T>(T client)
        where T : RelayClient
    {
        lock (_clients)
            _clients.Add(client);
        await client.ConnectAsync().WaitAsync(Wait.Default);
        return client;
    }

    /// <summary><paramref name="count"/> registered peers, connected a few at a time.</summary>
    public async Task<TestPeer[]> ConnectManyAsync(int count, string prefix = "peer")
    {
        var peers = new List<TestPeer>(count);
        foreach (var batch in Enumerable.Range(0, count).Chunk(8))
            peers.AddRange(await Task.WhenAll(batch.Select(i => ConnectAsync($"{prefix}-{i}"))));
        return [.. peers];
    }

    /// <summary>Waits until every peer in <paramref name="peers"/> holds a list of <paramref name="count"/> peers.</summary>
    public static Task AllSeeAsync(IEnumerable<RelayClient> peers, int count) =>
        Wait.UntilAsync(() => peers.All(p => p.PeerCount == count && p.IsPeerListSynchronized), () => $"every peer to see {count} peers: {string.Join(", ", peers.Select(p => p.PeerCount))}");

    public async ValueTask DisposeAsync()
    {
        RelayClient[] clients;
        lock (_clients)
            clients = [.. _clients];
        foreach (var client in clients)
            await client.DisposeAsync();
        Relay.Dispose();
    }
}
