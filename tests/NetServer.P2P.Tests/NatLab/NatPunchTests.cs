using System;
using System.Collections.Generic;
using System.IO;
using System.Linq;
using System.Security.Cryptography.X509Certificates;
using System.Threading.Tasks;
using NetServer.Tests.Infrastructure;
using Xunit;
using Xunit.Abstractions;

namespace NetServer.P2P.Tests.Nat;

/// <summary>
/// The relay and two peers as agents in the lab's namespaces (docs/nat-lab.md), behind real NATs:
/// which pairs go direct by hole punching, which stay relayed, and that every datagram arrives.
/// </summary>
public sealed class NatPunchTests(ITestOutputHelper output)
{
    private const int RelayPort = 7000;
    private const int PunchTimeoutMilliseconds = 8000;

    [NatLabFact]
    public Task Endpoint_independent_behind_both_goes_direct() => AssertDirectAsync(NatType.EndpointIndependent, NatType.EndpointIndependent);

    [NatLabFact]
    public Task Public_and_endpoint_independent_go_direct() => AssertDirectAsync(NatType.Public, NatType.EndpointIndependent);

    [NatLabFact]
    public Task Full_cone_and_symmetric_go_direct_through_a_peer_reflexive_candidate() => AssertDirectAsync(NatType.FullCone, NatType.Symmetric);

    [NatLabFact]
    public Task Symmetric_asking_a_full_cone_peer_goes_direct_too() => AssertDirectAsync(NatType.Symmetric, NatType.FullCone);

    [NatLabFact]
    public async Task Endpoint_independent_and_symmetric_end_relayed_with_every_datagram_delivered()
    {
        await using var setup = await PairSetup.CreateAsync(NatType.EndpointIndependent, NatType.Symmetric);
        var punched = await setup.A.CommandAsync($"punch {setup.BId} {PunchTimeoutMilliseconds}", "punched");
        output.WriteLine(punched.Line);
        Assert.Equal("relayed", punched["path"]);
        await AssertDeliveredAsync(setup, "relayed");
    }

    [NatLabFact]
    public async Task Symmetric_behind_both_ends_relayed_with_every_datagram_delivered()
    {
        await using var setup = await PairSetup.CreateAsync(NatType.Symmetric, NatType.Symmetric);
        var punched = await setup.A.CommandAsync($"punch {setup.BId} {PunchTimeoutMilliseconds}", "punched");
        output.WriteLine(punched.Line);
        Assert.Equal("relayed", punched["path"]);
        await AssertDeliveredAsync(setup, "relayed");
    }

    [NatLabFact]
    public async Task With_UDP_blocked_datagrams_are_delivered_over_the_TLS_relay()
    {
        await using var setup = await PairSetup.CreateAsync(NatType.UdpBlocked, NatType.EndpointIndependent);
        Assert.Equal("blocked", setup.AStart["udp"]);
        Assert.Equal("ok", setup.BStart["udp"]);
        var punched = await setup.A.CommandAsync($"punch {setup.BId} {PunchTimeoutMilliseconds}", "punched");
        Assert.Equal("relayed", punched["path"]);
        await AssertDeliveredAsync(setup, "relayed");
    }

    [NatLabFact]
    public async Task A_short_mapping_timeout_with_keepalives_stays_direct()
    {
        await using var setup = await PairSetup.CreateAsync(NatType.EndpointIndependent, NatType.EndpointIndependent, keepaliveMilliseconds: 500, mappingTimeout: TimeSpan.FromSeconds(2));
        Assert.Equal("direct", (await setup.A.CommandAsync($"punch {setup.BId} {PunchTimeoutMilliseconds}", "punched"))["path"]);
        await Task.Delay(TimeSpan.FromSeconds(5)); // 2.5 mapping lifetimes: only the keepalives keep it
        Assert.Equal("direct", (await setup.A.CommandAsync($"path {setup.BId}", "path"))["path"]);
        await AssertDeliveredAsync(setup, "direct");
    }

    /// <summary>Fresh peers (new sockets, so new NAT mappings) on one lab and relay for each try; NETSERVER_NATLAB_TRIES tries (default 5; the figure in docs/p2p.md is from 20).</summary>
    [NatLabFact]
    public async Task Time_to_direct_between_endpoint_independent_NATs()
    {
        var tries = int.TryParse(Environment.GetEnvironmentVariable("NETSERVER_NATLAB_TRIES"), out var n) && n > 0 ? n : 5;
        var times = new List<long>();
        await using var setup = await PairSetup.CreateAsync(NatType.EndpointIndependent, NatType.EndpointIndependent);
        for (var i = 0; i < tries; i++)
        {
            if (i > 0)
                await setup.StartPeersAsync();
            var punched = await setup.A.CommandAsync($"punch {setup.BId} {PunchTimeoutMilliseconds}", "punched");
            Assert.Equal("direct", punched["path"]);
            times.Add(long.Parse(punched["ms"], System.Globalization.CultureInfo.InvariantCulture));
        }

        times.Sort();
        output.WriteLine($"time to Direct, EIM x EIM, {times.Count} tries: median {times[times.Count / 2]} ms, max {times[^1]} ms ({string.Join(", ", times)})");
    }

    private async Task AssertDirectAsync(NatType first, NatType second)
    {
        await using var setup = await PairSetup.CreateAsync(first, second);
        var punched = await setup.A.CommandAsync($"punch {setup.BId} {PunchTimeoutMilliseconds}", "punched");
        output.WriteLine($"{first} x {second}: {punched.Line}");
        Assert.Equal("direct", punched["path"]);
        Assert.InRange(long.Parse(punched["ms"], System.Globalization.CultureInfo.InvariantCulture), 0, 5000);
        await AssertDeliveredAsync(setup, "direct");
    }

    /// <summary>Ten datagrams each way, each awaited by its event with the path it came by.</summary>
    private static async Task AssertDeliveredAsync(PairSetup setup, string path)
    {
        for (var i = 0; i < 10; i++)
        {
            await setup.A.CommandAsync($"send {setup.BId} a-to-b-{i}", "sent");
            var got = await setup.B.WaitForAsync("datagram", r => r["text"] == $"a-to-b-{i}");
            Assert.Equal(setup.AId.ToString(), got["from"]);
            Assert.Equal(path, got["path"]);
            await setup.B.CommandAsync($"send {setup.AId} b-to-a-{i}", "sent");
            Assert.Equal(path, (await setup.A.WaitForAsync("datagram", r => r["text"] == $"b-to-a-{i}"))["path"]);
        }
    }

    /// <summary>A lab of two peers, the relay agent in the relay's namespace, a peer agent in each peer's.</summary>
    private sealed class PairSetup : IAsyncDisposable
    {
        private readonly List<IAsyncDisposable> _owned = [];
        private string _folder = "";
        private NatLab _lab = null!;
        private string _ca = "";
        private string _relayEndpoint = "";
        private string _keepalive = "";

        public NatAgent A { get; private set; } = null!;

        public NatAgent B { get; private set; } = null!;

        public AgentReply AStart { get; private set; } = null!;

        public AgentReply BStart { get; private set; } = null!;

        public Guid AId => Guid.Parse(AStart["id"]);

        public Guid BId => Guid.Parse(BStart["id"]);

        public static async Task<PairSetup> CreateAsync(NatType first, NatType second, int keepaliveMilliseconds = 1000, TimeSpan? mappingTimeout = null)
        {
            var setup = new PairSetup();
            try
            {
                var lab = await NatLab.CreateAsync(first, second, mappingTimeout is { } timeout ? new NatLabOptions { UdpMappingTimeout = timeout } : null);
                setup._owned.Add(lab);
                setup._folder = Directory.CreateTempSubdirectory("natpunch-").FullName;
                var pfx = Path.Combine(setup._folder, "relay.pfx");
                var ca = Path.Combine(setup._folder, "ca.crt");
                using (var certificate = TestCertificates.Issue(TestCertificates.Authority, "relay", server: true, hostNames: [lab.Relay.Address.ToString()]))
                    await File.WriteAllBytesAsync(pfx, certificate.Export(X509ContentType.Pkcs12));
                await File.WriteAllBytesAsync(ca, TestCertificates.Authority.Export(X509ContentType.Cert));

                setup._lab = lab;
                setup._ca = ca;
                setup._relayEndpoint = $"{lab.Relay.Address}:{RelayPort}";
                setup._keepalive = keepaliveMilliseconds.ToString(System.Globalization.CultureInfo.InvariantCulture);
                setup._owned.Add(await lab.StartAgentAsync(lab.Relay.Namespace, "relay", pfx, setup._relayEndpoint));
                await setup.StartPeersAsync();
                return setup;
            }
            catch
            {
                await setup.DisposeAsync();
                throw;
            }
        }

        /// <summary>Starts a peer agent in each peer's namespace (after stopping the ones before), each seeing the other.</summary>
        public async Task StartPeersAsync()
        {
            foreach (var old in new[] { A, B })
            {
                if (old is null)
                    continue;
                _owned.Remove(old);
                await old.DisposeAsync();
            }

            A = await _lab.StartAgentAsync(_lab.Peers[0].Namespace, "peer", _ca, _relayEndpoint, "a", _keepalive);
            _owned.Add(A);
            B = await _lab.StartAgentAsync(_lab.Peers[1].Namespace, "peer", _ca, _relayEndpoint, "b", _keepalive);
            _owned.Add(B);
            AStart = A.StartLines.First(l => l.Verb == "registered");
            BStart = B.StartLines.First(l => l.Verb == "registered");
            await SeesAsync(A, "b", BId);
            await SeesAsync(B, "a", AId);
        }

        /// <summary>Until <paramref name="agent"/>'s list has <paramref name="name"/> with <paramref name="id"/> (a peer of an earlier try may linger a moment).</summary>
        private static async Task SeesAsync(NatAgent agent, string name, Guid id)
        {
            for (var i = 0; i < 50; i++)
            {
                var reply = await agent.CommandAsync($"find {name} 5000", "found", "timeout");
                Assert.Equal("found", reply.Verb);
                if (reply["id"] == id.ToString())
                    return;
                await Task.Delay(100);
            }

            Assert.Fail($"{agent} never saw {name} as {id}");
        }

        public async ValueTask DisposeAsync()
        {
            for (var i = _owned.Count - 1; i >= 0; i--)
                await _owned[i].DisposeAsync();
            if (_folder.Length > 0)
                Directory.Delete(_folder, recursive: true);
        }
    }
}
