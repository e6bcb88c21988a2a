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

    [NatLabFact]
    public async Task Time_to_direct_between_endpoint_independent_NATs()
    {
        var times = new List<long>();
        for (var i = 0; i < 5; i++)
        {
            await using var setup = await PairSetup.CreateAsync(NatType.EndpointIndependent, NatType.EndpointIndependent);
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

                var relayEndpoint = $"{lab.Relay.Address}:{RelayPort}";
                setup._owned.Add(await lab.StartAgentAsync(lab.Relay.Namespace, "relay", pfx, relayEndpoint));
                var keepalive = keepaliveMilliseconds.ToString(System.Globalization.CultureInfo.InvariantCulture);
                setup.A = await lab.StartAgentAsync(lab.Peers[0].Namespace, "peer", ca, relayEndpoint, "a", keepalive);
                setup._owned.Add(setup.A);
                setup.B = await lab.StartAgentAsync(lab.Peers[1].Namespace, "peer", ca, relayEndpoint, "b", keepalive);
                setup._owned.Add(setup.B);
                setup.AStart = setup.A.StartLines.First(l => l.Verb == "registered");
                setup.BStart = setup.B.StartLines.First(l => l.Verb == "registered");
                Assert.Equal("found", (await setup.A.CommandAsync("find b 5000", "found", "timeout")).Verb);
                Assert.Equal("found", (await setup.B.CommandAsync("find a 5000", "found", "timeout")).Verb);
                return setup;
            }
            catch
            {
                await setup.DisposeAsync();
                throw;
            }
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
