using System;
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
/// and a message to everyone that the sender's relay refused over its rate.
/// </summary>
public sealed class RelayNodesEdgeTests
{
    [RedisFact]
    public async Task A_relay_started_again_on_the_same_node_id_after_a_lost_Bye_replaces_the_old_peers_with_its_own()
    {
        await using var nodes = await RelayNodes.StartAsync(1);
        var alice = await nodes.ConnectAsync(0, "alice");
        ByeDropping? lossy = null;
        var first = await nodes.AddNodeAsync(wrap: b => lossy = new ByeDropping(b));
        var bob = await nodes.ConnectAsync(first, "bob");
        await RelayNodes.AllSeeAsync([alice, bob], alice, bob);

        // The relay stops but its Bye never arrives (Redis blinked); a new relay takes the same backplane, so the same node id with a new count.
        Assert.True(nodes.Relays[first].Stop());
        Assert.Equal(1, lossy!.Dropped);
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

    /// <summary>A backplane that loses this node's Bye (as when Redis is away at the stop) and passes everything else.</summary>
    private sealed class ByeDropping(IRelayBackplane inner) : IRelayBackplane
    {
        private int _dropped;

        public int Dropped => System.Threading.Volatile.Read(ref _dropped);

        public Guid NodeId => inner.NodeId;

        public bool IsConnected => inner.IsConnected;

        public void Attach(IRelayNodeReceiver receiver) => inner.Attach(receiver);

        public void Detach(IRelayNodeReceiver receiver) => inner.Detach(receiver);

        public Task<bool> PublishAsync(Guid node, ReadOnlyMemory<byte> message, RelayNodeTraffic traffic)
        {
            if (ClusterMessage.TryReadKind(message.Span, out var kind) && kind == ClusterKind.Bye)
            {
                System.Threading.Interlocked.Increment(ref _dropped);
                return Task.FromResult(true);
            }

            return inner.PublishAsync(node, message, traffic);
        }
    }
}
