using System;

namespace NetServer.P2P;

/// <summary>What an <see cref="IRelayBackplane"/> hands the messages of other relay nodes to (a relay attaches one).</summary>
public interface IRelayNodeReceiver
{
    /// <summary>A message node <paramref name="node"/> published to this node or to all; the bytes are valid only during the call.</summary>
    void OnNodeMessage(Guid node, ReadOnlySpan<byte> message);
}
