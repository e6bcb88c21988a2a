using System.Linq;
using System.Threading.Tasks;
using NetServer.P2P.Tests.Infrastructure;
using NetServer.Protobuf;
using Xunit;

namespace NetServer.P2P.Tests.Relay;

public sealed class SmokeTests
{
    [Fact]
    public async Task Two_peers_register_see_each_other_and_exchange_a_message()
    {
        await using var harness = new RelayHarness();
        var a = await harness.ConnectAsync("a");
        var b = await harness.ConnectAsync("b");
        await RelayHarness.AllSeeAsync([a, b], 2);
        Assert.True(a.Send(b.PeerId, new MessageEnvelope("hello"), new Sample { A = 7 }));
        await Wait.UntilAsync(() => b.Received == 1, () => "b to receive");
        var message = b.Messages.Single();
        Assert.Equal(a.PeerId, message.From);
        Assert.Equal(7, message.Unpack<Sample>().A);
    }
}
