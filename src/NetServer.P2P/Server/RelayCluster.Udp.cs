using System;
using System.Threading;
using System.Threading.Tasks;
using NetServer.P2P.Wire;
using NetServer.P2P.Wire.Contracts;
using NetServer.Protobuf;

namespace NetServer.P2P.Server;

// UDP between peers of different nodes, over the envelopes' path (Peer traffic, the same bounds).
// The requester's node makes the pair key as for a local pair and publishes the other peer's view
// (UdpPair) to that peer's node, which checks it as a local pair would be checked and hands it to
// its peer as relay/udp-session: from then on the two peers punch (their candidates travel as
// routed p2p/punch requests) and talk directly. A relayed datagram that reaches a node's UDP port
// for a peer of another node, charged to its sender there, is published as it arrived
// (UdpDatagram: [source | destination | inner], the inner sealed end to end with the pair key)
// and the destination's node sends it from its own UDP port. Both are taken only from the node
// that lists their sender.
internal sealed partial class RelayCluster
{
    private long _datagramsIn;

    /// <summary>Relayed datagrams other nodes forwarded here for this node's peers.</summary>
    public long DatagramsFromNodes => Interlocked.Read(ref _datagramsIn);

    /// <summary>Publishes <paramref name="responderView"/>, the pair key <paramref name="initiator"/> asked for, to the node of <paramref name="responder"/>.</summary>
    public Task<bool> PublishUdpPair(RemotePeerState responder, Guid initiator, UdpPairMessage responderView)
    {
        var message = ClusterMessage.UdpPair(initiator, responder.Id, GuidBytes.Read(responderView.PairId), responderView.RemoteIndex, responderView.LocalIndex, responderView.Secret);
        try
        {
            return TryPublish(responder.Node, message, RelayNodeTraffic.Peer);
        }
        finally
        {
            Array.Clear(message, 0, message.Length); // the backplane copied it
        }
    }

    /// <summary>Publishes a relayed datagram's inner part from <paramref name="source"/> to the node of <paramref name="destination"/>.</summary>
    public Task<bool> PublishDatagram(Guid source, RemotePeerState destination, ReadOnlySpan<byte> inner)
    {
        var message = new byte[ClusterMessage.EnvelopeHeaderSize + inner.Length];
        ClusterMessage.WriteEnvelopeHeader(message, source, destination.Id, ClusterKind.UdpDatagram);
        inner.CopyTo(message.AsSpan(ClusterMessage.EnvelopeHeaderSize));
        return TryPublish(destination.Node, message, RelayNodeTraffic.Peer);
    }

    private void OnUdpPair(Guid node, ReadOnlySpan<byte> message)
    {
        if (!ClusterMessage.TryReadUdpPair(message, out var from, out var to, out var pairId, out var fromIndex, out var toIndex, out var secret)
            || _relay.FindRemote(from) is not { HasLeft: false } sender || sender.Node != node)
        {
            Interlocked.Increment(ref _ignored);
            return;
        }

        var status = RelayStatus.Ok;
        if (_relay.FindPeer(to) is not { } target)
            status = RelayStatus.UnknownPeer;
        else if (_relay.Udp is not { } udp)
            status = RelayStatus.Unsupported;
        else if (udp.AcceptFromNode(from, target, pairId, fromIndex, toIndex, secret, _relay.Limits.MaxUdpPairsPerPeer, out status) is { } view)
            target.Session.SendAsync(new MessageEnvelope(RelayKinds.UdpSession) { To = target.Id }, view);

        if (status != RelayStatus.Ok)
            PairRefused(node, from, to, status);
    }

    /// <summary>The backplane dropped a pair key for this node unhandled (this node is behind): its requester is told, as for a refused one.</summary>
    private void OnUdpPairDropped(Guid node, ReadOnlySpan<byte> message)
    {
        if (ClusterMessage.TryReadUdpPair(message, out var from, out var to, out _, out _, out _, out _)
            && _relay.FindRemote(from) is { HasLeft: false } sender && sender.Node == node)
            PairRefused(node, from, to, RelayStatus.NodeUnavailable);
    }

    /// <summary>Tells the requester of a pair key, through its node, that this node did not give it to its peer (a plain relay/status: the requester's reply is out already).</summary>
    private void PairRefused(Guid node, Guid from, Guid to, RelayStatus status)
    {
        _relay.CountRefusal(status);
        var detail = status switch
        {
            RelayStatus.UnknownPeer => $"Peer {to} left before its UDP pair key came.",
            RelayStatus.Unsupported => $"The relay node of peer {to} has no UDP port.",
            RelayStatus.NodeUnavailable => $"The relay node of peer {to} is overloaded and dropped its UDP pair key.",
            _ => $"Peer {to} holds the most UDP pair keys its relay node allows ({_relay.Limits.MaxUdpPairsPerPeer}).",
        };
        Publish(node, ClusterMessage.Status(from, status, 0, Guid.Empty, to, detail), RelayNodeTraffic.Peer);
    }

    private void OnUdpDatagram(Guid node, ReadOnlySpan<byte> message)
    {
        if (!ClusterMessage.TryReadEnvelope(message, out var from, out var to, out var inner) || inner.Length < SecureUdpSession.Overhead
            || _relay.FindRemote(from) is not { HasLeft: false } sender || sender.Node != node)
        {
            Interlocked.Increment(ref _ignored);
            return;
        }

        // A peer that left meanwhile, or a relay without UDP: a datagram lost, as UDP may lose any.
        if (_relay.FindPeer(to) is { } target && _relay.Udp is { } udp)
        {
            Interlocked.Increment(ref _datagramsIn);
            udp.DeliverFromNode(from, target, inner);
        }
    }
}
