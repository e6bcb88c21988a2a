using System;
using System.Collections.Generic;
using System.Globalization;
using System.IO;
using System.Linq;
using System.Security.Cryptography.X509Certificates;
using System.Threading.Tasks;
using NetServer.Tests.Infrastructure;
using Xunit;

namespace NetServer.P2P.Tests.Nat;

/// <summary>What one punch ended in, as the asking agent timed it: from its <c>ConnectDirectAsync</c> call (pair key, candidate exchange and punching included) to the outcome.</summary>
internal readonly record struct PunchOutcome(bool Direct, long Milliseconds);

/// <summary>
/// A lab of two peers, the relay agent in the relay's namespace, a peer agent in each peer's (A
/// behind the first NAT type, B behind the second): what <see cref="NatPunchTests"/> and
/// <see cref="NatTimeToPathBenchmark"/> punch through.
/// </summary>
internal sealed class PunchPair : IAsyncDisposable
{
    /// <summary>The <c>ConnectDirectAsync</c> timeout the lab's punches are given: room for the three tries of about 2.5 s.</summary>
    public const int PunchTimeoutMilliseconds = 8000;

    private const int RelayPort = 7000;

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

    public static async Task<PunchPair> CreateAsync(NatType first, NatType second, int keepaliveMilliseconds = 1000, TimeSpan? mappingTimeout = null)
    {
        var setup = new PunchPair();
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
            setup._keepalive = keepaliveMilliseconds.ToString(CultureInfo.InvariantCulture);
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

    /// <summary>A asks for a direct path to B (<c>ConnectDirectAsync</c> with <see cref="PunchTimeoutMilliseconds"/>); the agent's <c>punched</c> line.</summary>
    public Task<AgentReply> PunchAsync() => A.CommandAsync($"punch {BId} {PunchTimeoutMilliseconds}", "punched");

    /// <summary>
    /// <paramref name="tries"/> punches from A to B, each between fresh peer agents (new clients,
    /// new sockets, so new NAT mappings and no path known from the try before) on this lab and relay.
    /// </summary>
    public async Task<List<PunchOutcome>> PunchFreshAsync(int tries)
    {
        var outcomes = new List<PunchOutcome>(tries);
        for (var i = 0; i < tries; i++)
        {
            if (i > 0)
                await StartPeersAsync();
            var punched = await PunchAsync();
            outcomes.Add(new PunchOutcome(punched["path"] == "direct", long.Parse(punched["ms"], CultureInfo.InvariantCulture)));
        }

        return outcomes;
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
