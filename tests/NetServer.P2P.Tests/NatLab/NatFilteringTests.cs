using System.Threading.Tasks;
using Xunit;
using Xunit.Abstractions;

namespace NetServer.P2P.Tests.Nat;

/// <summary>
/// What gets in through an endpoint-independent NAT: nothing unsolicited, and from a remote endpoint
/// only after the inside sent to it (the behaviour hole punching relies on: both sides send).
/// </summary>
public sealed class NatFilteringTests(ITestOutputHelper output)
{
    [NatLabFact]
    public async Task EndpointIndependent_drops_unsolicited_datagrams_until_the_inside_sent_to_that_endpoint()
    {
        await using var lab = await NatLab.CreateAsync(NatType.EndpointIndependent, NatType.Public);
        await using var reflector = await lab.StartReflectorAsync();
        await using var probe = await lab.StartProbeAsync(lab.Peers[0]);
        await using var stranger = await lab.StartProbeAsync(lab.Peers[1]);
        var mapped = await NatBehaviourTests.MapAsync(probe, lab.Relay.Reflector);
        var otherPort = lab.Relay.ReflectorOtherPort;

        // Sent (the agents confirm each send) before the probe listens, so the wait only has to
        // show that nothing arrived: another port of the host it talks to, and another host.
        await reflector.SendFromAsync(otherPort, mapped, "early");
        await stranger.SendAsync(mapped, "stranger");
        var unsolicited = await probe.ReceiveAsync();
        Assert.True(unsolicited is null, $"Unsolicited datagram let in: {unsolicited}");

        // The inside sends to the other port (the reflector sees the same mapped endpoint), then that port may answer.
        await probe.SendAsync(otherPort, "open");
        var opened = await reflector.WaitForAsync("received", line => line["text"] == "open");
        Assert.Equal(mapped, opened.Endpoint("from"));
        await reflector.SendFromAsync(otherPort, mapped, "answer");
        var answer = await probe.ReceiveAsync(NatBehaviourTests.ArrivalWaitMilliseconds);
        Assert.True(answer is not null, $"The answer from {otherPort} was dropped after the probe sent to it.{System.Environment.NewLine}{probe.Transcript}");
        Assert.Equal(otherPort, answer.Endpoint("from"));
        Assert.Equal("answer", answer["text"]);

        // The stranger is still out: the filter opened for that one remote endpoint only.
        await stranger.SendAsync(mapped, "stranger-again");
        var still = await probe.ReceiveAsync();
        Assert.True(still is null, $"Unsolicited datagram let in: {still}");
        output.WriteLine($"EIM filtering: {mapped} dropped {otherPort} and {lab.Peers[1].Address} until it sent to {otherPort}");
    }

    [NatLabFact]
    public async Task Two_endpoint_independent_peers_reach_each_other_once_both_have_sent()
    {
        // The hole punch itself, by hand: what the P2P client will automate.
        await using var lab = await NatLab.CreateAsync(NatType.EndpointIndependent, NatType.EndpointIndependent);
        await using var reflector = await lab.StartReflectorAsync();
        await using var a = await lab.StartProbeAsync(lab.Peers[0]);
        await using var b = await lab.StartProbeAsync(lab.Peers[1]);
        var mappedA = await NatBehaviourTests.MapAsync(a, lab.Relay.Reflector);
        var mappedB = await NatBehaviourTests.MapAsync(b, lab.Relay.Reflector);

        // A's first datagram opens A's router for B, and is dropped by B's router; B's then gets through.
        await a.SendAsync(mappedB, "punch-a");
        await b.SendAsync(mappedA, "punch-b");
        var atA = await a.ReceiveAsync(NatBehaviourTests.ArrivalWaitMilliseconds);
        Assert.True(atA is not null, a.Transcript);
        Assert.Equal(mappedB, atA.Endpoint("from"));
        Assert.Equal("punch-b", atA["text"]);

        await a.SendAsync(mappedB, "hello-b");
        var atB = await b.ReceiveAsync(NatBehaviourTests.ArrivalWaitMilliseconds);
        Assert.True(atB is not null, b.Transcript);
        Assert.Equal(mappedA, atB.Endpoint("from"));
        Assert.Equal("hello-b", atB["text"]);
    }
}
