using System;
using System.Buffers;
using System.Threading.Tasks;
using NetServer.P2P.Wire;
using NetServer.P2P.Wire.Contracts;
using NetServer.Protobuf;

namespace NetServer.P2P.Server;

// The UDP kinds over TLS: a pair key asked for (relay/udp-session; with a peer of another node,
// made here and sent to its node over the backplane), and a datagram carried over TLS by a peer
// whose UDP to the relay is blocked (relay/udp), forwarded as the UDP port forwards.
internal sealed partial class RelaySession
{
    private void PairKey(RelayPeerState peer, in ProtoMessage message)
    {
        if (_relay.Udp is not { } udp)
        {
            Refuse(peer, in message, RelayStatus.Unsupported, "This relay has no UDP port (RelayServerOptions.UdpEnabled).");
            return;
        }

        UdpPairRequestMessage request;
        try
        {
            request = message.Unpack<UdpPairRequestMessage>();
        }
        catch (Exception e) when (e is not OutOfMemoryException)
        {
            Refuse(peer, in message, RelayStatus.InvalidRequest, "Not a UdpPairRequest message: " + e.Message);
            return;
        }

        var otherId = GuidBytes.Read(request.PeerId);
        var other = _relay.FindPeer(otherId);
        var remote = other is null ? _relay.FindRemote(otherId) : null;
        if ((other is null && remote is not { HasLeft: false }) || other == peer)
        {
            Refuse(peer, in message, RelayStatus.UnknownPeer, $"No other registered peer {otherId}.");
            return;
        }

        var cluster = _relay.Cluster;
        if (remote is not null && (cluster is null || !cluster.IsConnected))
        {
            Refuse(peer, in message, RelayStatus.NodeUnavailable, Unreachable(otherId));
            return;
        }

        if (udp.Pair(peer, otherId, other, _relay.Limits.MaxUdpPairsPerPeer, out var theirs) is not { } mine)
        {
            Refuse(peer, in message, RelayStatus.ResourceLimitExceeded, $"At most {_relay.Limits.MaxUdpPairsPerPeer} UDP pair keys per peer.");
            return;
        }

        if (theirs is not null && remote is not null)
        {
            // The other node delivers its peer's view; the reply waits until the backplane took it,
            // so that it reaches the other peer before this one's first punch request or datagram.
            _ = ReplyOncePublishedAsync(peer, message.RequestId, mine, cluster!.PublishUdpPair(remote, peer.Id, theirs), udp);
            return;
        }

        if (theirs is not null)
            other!.Session.SendAsync(new MessageEnvelope(RelayKinds.UdpSession) { To = other.Id }, theirs); // before the reply: it may reach the other peer first
        Reply(in message, To(RelayServer.Control(RelayKinds.UdpSession), peer).Pack(mine));
    }

    /// <summary>Answers a relay/udp-session for a peer of another node once its node has the pair (NodeUnavailable, and the pair taken back, when the backplane did not take it).</summary>
    private async Task ReplyOncePublishedAsync(RelayPeerState peer, ulong requestId, UdpPairMessage mine, Task<bool> published, RelayUdp udp)
    {
        bool taken;
        try
        {
            taken = await published.ConfigureAwait(false);
        }
        catch (Exception e) when (e is not OutOfMemoryException)
        {
            taken = false;
        }

        var other = GuidBytes.Read(mine.PeerId);
        if (!taken)
        {
            udp.Unpair(peer.Id, other, mine.PairId);
            _relay.CountRefusal(RelayStatus.NodeUnavailable);
            SendStatus(peer, RelayStatus.NodeUnavailable, requestId, Guid.Empty, other, $"Peer {other} is on another relay node, and the backplane did not take its pair key (full or down).");
            return;
        }

        Reply(new MessageEnvelope { RequestId = requestId, Flags = ProtoFlags.Request }, To(RelayServer.Control(RelayKinds.UdpSession), peer).Pack(mine));
    }

    private void ForwardDatagram(RelayPeerState peer, in ProtoMessage message)
    {
        if (_relay.Udp is not { } udp)
            return;
        var payload = message.Payload;
        udp.ObserveForTests?.Invoke(payload.ToArray());
        var scratch = ArrayPool<byte>.Shared.Rent(payload.Length + (2 * SecureUdpSession.Overhead));
        try
        {
            udp.Forward(peer, payload, scratch);
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(scratch);
        }
    }
}
