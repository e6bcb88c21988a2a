using System;
using System.Threading.Tasks;

namespace NetServer.P2P;

/// <summary>
/// The link that joins relays into one cluster (<see cref="RelayServerOptions.Backplane"/>): it
/// carries opaque messages between relay nodes, in order per sending node. The relay writes and
/// reads them (the peer registry, routed envelopes, refusals, heartbeats; docs/scale-out.md); the
/// backplane only moves bytes. <c>NetServer.Redis</c>'s <c>RedisRelayBackplane</c> is one, over
/// Redis pub/sub. Every node on the backplane is trusted: what it says about its own peers is taken.
/// </summary>
public interface IRelayBackplane
{
    /// <summary>This node's id, unique in the cluster; the <c>node</c> other nodes address it by.</summary>
    Guid NodeId { get; }

    /// <summary>True while messages can be published (a relay refuses sends to other nodes at once while it is false).</summary>
    bool IsConnected { get; }

    /// <summary>Starts handing the messages other nodes publish to <paramref name="receiver"/>, one at a time, in the order each node published them (called by <see cref="RelayServer.Start"/>).</summary>
    void Attach(IRelayNodeReceiver receiver);

    /// <summary>Stops handing messages to <paramref name="receiver"/> (called by <see cref="RelayServer.Stop"/>).</summary>
    void Detach(IRelayNodeReceiver receiver);

    /// <summary>
    /// Publishes <paramref name="message"/> to the node <paramref name="node"/>, or to every other node
    /// when it is <see cref="Guid.Empty"/>. At most once, never to this node. The bytes are copied
    /// before the call returns. <paramref name="traffic"/> says what it carries: a backplane bounds
    /// what it holds, and must keep room for <see cref="RelayNodeTraffic.Control"/> that
    /// <see cref="RelayNodeTraffic.Peer"/> messages cannot take (and, on the receiving side, should
    /// drop peer messages before control ones).
    /// </summary>
    /// <returns>False when the message could not be published (the backplane is down or over its bound).</returns>
    Task<bool> PublishAsync(Guid node, ReadOnlyMemory<byte> message, RelayNodeTraffic traffic);
}
