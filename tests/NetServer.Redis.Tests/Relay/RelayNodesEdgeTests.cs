using System;
using System.Diagnostics;
using System.Linq;
using System.Threading.Tasks;
using NetServer.P2P;
using NetServer.P2P.Wire;
using NetServer.Protobuf;
using NetServer.Tests.Infrastructure;
using Xunit;

namespace NetServer.Redis.Tests.Relay;

/// <summary>
/// Relay nodes at their edges: a node id that comes back with a new relay after its Bye was lost,
/// a message to everyone that the sender's relay refused over its rate, and a node whose heartbeats
/// are lost but whose peers' messages arrive.
/// </summary>
public sealed class RelayNodesEdgeTests
{
    [RedisFact]
    public async Task A_relay_started_again_on_the_same_node_id_after_a_lost_Bye_replaces_the_old_peers_with_its_own()
    {
        await using var nodes = await RelayNodes.StartAsync(1);
        var alice = await nodes.ConnectAsync(0, "alice");
        FilteringBackplane? lossy = null;
        var first = await nodes.AddNodeAsync(wrap: b => lossy = new FilteringBackplane(b) { Kind = ClusterKind.Bye, Silently = true });
        var bob = await nodes.ConnectAsync(first, "bob");
        await RelayNodes.AllSeeAsync([alice, bob], alice, bob);

        // The relay stops but its Bye never arrives (Redis blinked); a new relay takes the same backplane, so the same node id with a new count.
        Assert.True(nodes.Relays[first].Stop());
        Assert.Equal(1, lossy!.Filtered);
        var again = nodes.AddRelay(lossy);
        var carol = await nodes.ConnectAsync(again, "carol");

        // Alice must lose bob (gone with the old relay) and get carol, although the node was never silent.
        await RelayNodes.AllSeeAsync([alice, carol], alice, carol);
        Assert.Equal(1, nodes.Relays[0].RemotePeerCount);
    }

    [RedisFact]
    public async Task A_message_to_everyone_refused_over_the_senders_rate_reaches_no_other_node_either()
    {
        // Two messages a second: a message to everyone with three local recipients is always over it.
        await using var nodes = await RelayNodes.StartAsync(2, configure: o => o.PeerMessageRate = 2);
        var sender = await nodes.ConnectAsync(0, "sender");
        var anna = await nodes.ConnectAsync(0, "anna");
        var dave = await nodes.ConnectAsync(0, "dave");
        var erin = await nodes.ConnectAsync(0, "erin");
        var bob = await nodes.ConnectAsync(1, "bob");
        await RelayNodes.AllSeeAsync([sender, anna, dave, erin, bob], sender, anna, dave, erin, bob);

        Assert.True(sender.Broadcast(new MessageEnvelope("all")));
        await Wait.UntilAsync(() => !sender.Failures.IsEmpty, () => "the broadcast's refusal");
        Assert.Equal(RelayStatus.RateLimited, sender.Failures.Single().Status);

        // A later message from node 0 to bob: node messages arrive in order, so a published broadcast would be there before it.
        Assert.True(dave.Send(bob.PeerId, new MessageEnvelope("marker")));
        await Wait.UntilAsync(() => bob.Messages.Any(m => m.Header == "marker"), () => "dave's marker");
        Assert.DoesNotContain(bob.Messages, m => m.Header == "all");
        Assert.Equal((0, 0, 0), (anna.Received, dave.Received, erin.Received));
    }

    [RedisFact]
    public async Task A_node_whose_heartbeats_are_lost_stays_alive_while_its_peers_messages_arrive_and_is_dropped_once_they_stop()
    {
        await using var nodes = await RelayNodes.StartAsync(1);
        FilteringBackplane? lossy = null;
        var quiet = await nodes.AddNodeAsync(wrap: b => lossy = new FilteringBackplane(b) { Silently = true });
        var alice = await nodes.ConnectAsync(0, "alice");
        var bob = await nodes.ConnectAsync(quiet, "bob");
        await RelayNodes.AllSeeAsync([alice, bob], alice, bob);

        // From now on none of bob's node's heartbeats reach node 0; bob's messages do, for three node timeouts.
        lossy!.Kind = ClusterKind.Heartbeat;
        var bobId = bob.PeerId;
        var talking = Stopwatch.StartNew();
        var sent = 0;
        while (talking.Elapsed < 3 * RelayNodes.NodeTimeout)
        {
            Assert.True(bob.Send(alice.PeerId, new MessageEnvelope("alive")));
            sent++;
            await Task.Delay(RelayNodes.Heartbeat);
            Assert.DoesNotContain(bobId, alice.LeftIds);
        }

        Assert.True(lossy.Filtered >= 10, $"{lossy.Filtered} heartbeats lost");
        await Wait.UntilAsync(() => alice.Received == sent, () => $"alice got {alice.Received} of {sent}");
        Assert.Equal(1, nodes.Relays[0].RemotePeerCount);

        // Silent now (no heartbeat, no message): taken for dead within the node timeout and a tick.
        var silent = Stopwatch.StartNew();
        await Wait.UntilAsync(() => alice.LeftIds.Contains(bobId), () => "node 0 to drop the silent node's peer");
        Assert.True(silent.Elapsed < 2 * RelayNodes.NodeTimeout, $"dropped after {silent.Elapsed}");
        Assert.Equal(0, nodes.Relays[0].RemotePeerCount);
    }
}
