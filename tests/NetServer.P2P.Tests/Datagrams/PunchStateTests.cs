using System.Linq;
using System.Net;
using NetServer.P2P.Client;
using Xunit;

namespace NetServer.P2P.Tests.Datagrams;

/// <summary>What one punch accepts: candidates worth punching, peer-reflexive ones while it runs and capped, a cap on PUNCHes.</summary>
public sealed class PunchStateTests
{
    [Theory]
    [InlineData("192.0.2.10", 4000, false, true)]
    [InlineData("2001:db8::1", 4000, false, true)]
    [InlineData("192.0.2.10", 0, false, false)]
    [InlineData("0.0.0.0", 4000, false, false)]
    [InlineData("::", 4000, false, false)]
    [InlineData("255.255.255.255", 4000, false, false)]
    [InlineData("224.0.0.1", 4000, false, false)]
    [InlineData("ff02::1", 4000, false, false)]
    [InlineData("::ffff:224.0.0.1", 4000, false, false)]
    [InlineData("127.0.0.1", 4000, false, false)]
    [InlineData("127.0.0.1", 4000, true, true)]
    [InlineData("::1", 4000, false, false)]
    [InlineData("::1", 4000, true, true)]
    [InlineData("::ffff:127.0.0.1", 4000, false, false)]
    [InlineData("fe80::1", 4000, false, false)]
    public void Only_endpoints_worth_punching_are_candidates(string address, int port, bool relayOnLoopback, bool expected) =>
        Assert.Equal(expected, PunchState.IsPunchable(new IPEndPoint(IPAddress.Parse(address), port), relayOnLoopback));

    [Fact]
    public void Peer_reflexive_candidates_are_capped_and_taken_only_while_the_punch_runs()
    {
        var punch = new PunchState([new IPEndPoint(IPAddress.Parse("192.0.2.1"), 1)]);
        var added = Enumerable.Range(2, 10).Count(i => punch.AddPeerReflexive(new IPEndPoint(IPAddress.Parse("192.0.2.1"), i)));
        Assert.Equal(PunchState.MaxPeerReflexive, added);

        var stopped = new PunchState([]);
        stopped.Stop.Cancel();
        Assert.False(stopped.AddPeerReflexive(new IPEndPoint(IPAddress.Parse("192.0.2.1"), 5)));
    }

    [Fact]
    public void A_punch_counts_at_most_MaxPunches_datagrams()
    {
        var punch = new PunchState([]);
        Assert.Equal(PunchState.MaxPunches, Enumerable.Range(0, 200).Count(_ => punch.TryCountPunch()));
    }
}
