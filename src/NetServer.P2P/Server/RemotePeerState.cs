using System;
using NetServer.P2P.Internal;
using NetServer.P2P.Wire;

namespace NetServer.P2P.Server;

/// <summary>
/// A peer registered on another relay node, as this node knows it: its id, name and node, and the
/// From field this node stamps on what it delivers from it (the id its node vouched for), and what
/// it may have delivered here to the members of rooms.
/// </summary>
internal sealed class RemotePeerState(RelayPeer info, Guid node, RelayServerOptions limits, long now) : IRequestTarget
{
    private volatile bool _hasLeft;
    private PeerRate _roomRate = new(limits, now);

    public Guid Id => Info.Id;

    public RelayPeer Info { get; } = info;

    /// <summary>The node that owns the peer's connection.</summary>
    public Guid Node { get; } = node;

    public byte[] FromField { get; } = EnvelopeRewriter.FromFieldOf(info.Id);

    /// <summary>
    /// Charges a room message for <paramref name="copies"/> members of this node, at this node's
    /// rates: the sender's node charged it once, not knowing the rooms' members here. Only the
    /// reader of the node messages calls it, one message at a time.
    /// </summary>
    public bool TryChargeRoom(long copies, long envelopeBytes, long now) => _roomRate.TryCharge(copies, envelopeBytes, now);

    /// <summary>Set once, under the relay's view lock, when the peer left this node's list.</summary>
    public bool HasLeft
    {
        get => _hasLeft;
        set => _hasLeft = value;
    }
}
