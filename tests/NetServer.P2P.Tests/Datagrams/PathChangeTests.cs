using System;
using System.Net;
using NetServer.P2P.Client;
using Xunit;

namespace NetServer.P2P.Tests.Datagrams;

/// <summary>
/// A pair's path changes by exchange and compare-exchange, so that of two threads that change it at
/// once (a punch's acknowledgement and the peer's nomination; a fallback and a roaming datagram)
/// only the one that changed it reports the change. The race itself is too narrow to hit in a
/// test; these check the rules each change follows.
/// </summary>
public sealed class PathChangeTests
{
    private static readonly IPEndPoint s_first = new(IPAddress.Loopback, 40001);
    private static readonly IPEndPoint s_second = new(IPAddress.Loopback, 40002);

    [Fact]
    public void A_fallback_from_an_endpoint_the_peer_roamed_away_from_changes_nothing_and_roaming_does_not_undo_a_fallback()
    {
        var pair = new PeerUdp(Guid.NewGuid(), null!, initiator: true);
        Assert.True(pair.GoDirect(s_first));
        Assert.False(pair.GoDirect(s_first)); // already direct: not a change

        pair.Roam(s_first, s_second);
        Assert.Same(s_second, pair.Direct);
        Assert.False(pair.FallBack(s_first)); // the silence was measured on the old endpoint
        Assert.Same(s_second, pair.Direct);

        Assert.True(pair.FallBack(s_second));
        Assert.Null(pair.Direct);
        pair.Roam(s_second, s_first); // a datagram read before the fallback: the path stays relayed
        Assert.Null(pair.Direct);
        Assert.False(pair.FallBack(s_second));
    }
}
