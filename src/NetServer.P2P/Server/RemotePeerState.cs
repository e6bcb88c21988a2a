using System;
using NetServer.P2P.Wire;

namespace NetServer.P2P.Server;

/// <summary>
/// A peer registered on another relay node, as this node knows it: its id, name and node, and the
/// From field this node stamps on what it delivers from it (the id its node vouched for).
/// </summary>
internal sealed class RemotePeerState(RelayPeer info, Guid node) : IRequestTarget
{
    private volatile bool _hasLeft;

    public Guid Id => Info.Id;

    public RelayPeer Info { get; } = info;

    /// <summary>The node that owns the peer's connection.</summary>
    public Guid Node { get; } = node;

    public byte[] FromField { get; } = EnvelopeRewriter.FromFieldOf(info.Id);

    /// <summary>Set once, under the relay's view lock, when the peer left this node's list.</summary>
    public bool HasLeft
    {
        get => _hasLeft;
        set => _hasLeft = value;
    }
}
