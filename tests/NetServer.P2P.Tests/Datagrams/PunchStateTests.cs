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
    [InlineData("fec0::1", 4000, false, false)] // site-local, deprecated (fec0::/10)
    [InlineData("feff:1::1", 4000, false, false)]
    [InlineData("::192.0.2.10", 4000, false, false)] // IPv4-compatible, deprecated (::/96)
    [InlineData("::8.8.8.8", 4000, false, false)]
    [InlineData("::0.0.0.2", 4000, true, false)]
    [InlineData("64:ff9b::10.1.2.3", 4000, false, false)] // NAT64 of a private IPv4 address
    [InlineData("64:ff9b::172.16.0.1", 4000, false, false)]
    [InlineData("64:ff9b::172.31.255.1", 4000, false, false)]
    [InlineData("64:ff9b::192.168.1.1", 4000, false, false)]
    [InlineData("64:ff9b::100.64.0.1", 4000, false, false)] // shared (carrier-grade NAT)
    [InlineData("64:ff9b::127.0.0.1", 4000, true, false)]
    [InlineData("64:ff9b::169.254.0.1", 4000, false, false)]
    [InlineData("64:ff9b::0.1.2.3", 4000, false, false)]
    [InlineData("64:ff9b::224.0.0.1", 4000, false, false)]
    [InlineData("64:ff9b::8.8.8.8", 4000, false, true)] // NAT64 of a global one: what NAT64 is for
    [InlineData("64:ff9b::172.32.0.1", 4000, false, true)]
    [InlineData("64:ff9b::100.128.0.1", 4000, false, true)]
    [InlineData("64:ff9b:1::10.1.2.3", 4000, false, true)] // the local-use prefix (RFC 8215) is the network's own
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
