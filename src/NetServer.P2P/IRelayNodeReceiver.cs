using System;

namespace NetServer.P2P;

/// <summary>What an <see cref="IRelayBackplane"/> hands the messages of other relay nodes to (a relay attaches one).</summary>
public interface IRelayNodeReceiver
{
    /// <summary>A message node <paramref name="node"/> published to this node or to all; the bytes are valid only during the call.</summary>
    void OnNodeMessage(Guid node, ReadOnlySpan<byte> message);

    /// <summary>
    /// A <see cref="RelayNodeTraffic.Peer"/> message node <paramref name="node"/> published to this
    /// node or to all, that the backplane dropped unhandled because this node is behind (its receive
    /// bound is full): the relay tells the sender of an envelope to one peer (at most 100 a second;
    /// what it does not answer costs it a parse). The backplane shows it every such drop. Called as the message is
    /// dropped, possibly while <see cref="OnNodeMessage"/> runs on another thread; the bytes are valid
    /// only during the call.
    /// </summary>
    void OnNodeMessageDropped(Guid node, ReadOnlySpan<byte> message);
}
