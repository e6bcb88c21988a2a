using System;
using System.Linq;
using System.Threading.Tasks;
using NetServer.P2P.Tests.Infrastructure;
using Xunit;

namespace NetServer.P2P.Tests.Datagrams;

/// <summary>The UDP layer under abuse: pair keys of departed peers, floods, bad input.</summary>
public sealed class UdpHardeningTests
{
    private static readonly TimeSpan s_ready = TimeSpan.FromSeconds(10);

    [Fact]
    public async Task A_peer_that_pairs_with_a_victim_and_leaves_again_and_again_does_not_fill_the_victims_pair_keys()
    {
        await using var harness = new RelayHarness(new RelayServerOptions { MaxUdpPairsPerPeer = 2 });
        var victim = await harness.ConnectAsync("victim");
        Assert.True(await victim.UdpReady.WaitAsync(s_ready));

        for (var i = 0; i < 6; i++)
        {
            var attacker = new TestPeer(harness.Endpoint) { Name = $"attacker-{i}" };
            await attacker.ConnectAsync().WaitAsync(Wait.Default);
            Assert.True(await attacker.UdpReady.WaitAsync(s_ready));
            Assert.True(await attacker.SendDatagramAsync(victim.PeerId, "x"u8.ToArray()), $"pair {i}");
            await attacker.DisposeAsync();
            await Wait.UntilAsync(() => victim.LeftIds.Count == i + 1 && victim.PairSessionForTests(attacker.PeerId) is null, () => $"victim to see attacker {i} leave");
        }

        var friend = await harness.ConnectAsync("friend");
        Assert.True(await friend.UdpReady.WaitAsync(s_ready));
        Assert.True(await victim.SendDatagramAsync(friend.PeerId, "hello"u8.ToArray()));
        await Wait.UntilAsync(() => friend.Datagrams.Any(d => d.From == victim.PeerId), () => "friend to get the victim's datagram");
    }
}
