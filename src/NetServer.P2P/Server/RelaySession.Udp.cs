using System;
using System.Buffers;
using NetServer.P2P.Wire;
using NetServer.P2P.Wire.Contracts;
using NetServer.Protobuf;

namespace NetServer.P2P.Server;

// The UDP kinds over TLS: a pair key asked for (relay/udp-session), and a datagram carried over
// TLS by a peer whose UDP to the relay is blocked (relay/udp), forwarded as the UDP port forwards.
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
        if (_relay.FindPeer(otherId) is not { } other || other == peer)
        {
            Refuse(peer, in message, RelayStatus.UnknownPeer, $"No other registered peer {otherId}.");
            return;
        }

        if (udp.Pair(peer, other, _relay.Limits.MaxUdpPairsPerPeer, out var theirs) is not { } mine)
        {
            Refuse(peer, in message, RelayStatus.ResourceLimitExceeded, $"At most {_relay.Limits.MaxUdpPairsPerPeer} UDP pair keys per peer.");
            return;
        }

        if (theirs is not null)
            other.Session.SendAsync(new MessageEnvelope(RelayKinds.UdpSession) { To = other.Id }, theirs); // before the reply: it may reach the other peer first
        Reply(in message, To(RelayServer.Control(RelayKinds.UdpSession), peer).Pack(mine));
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
