using ProtoBuf;

// The payloads of the UDP control kinds (docs/p2p.md, "UDP"). GUIDs are 16 bytes (GuidBytes).
namespace NetServer.P2P.Wire.Contracts;

/// <summary>relay/udp-session request: message UdpPairRequest { bytes peer_id = 1; }</summary>
[ProtoContract]
internal sealed class UdpPairRequestMessage
{
    [ProtoMember(1)]
    public byte[]? PeerId { get; set; }
}

/// <summary>
/// relay/udp-session, the reply to the requester and a plain message to the other peer, each with
/// its own view: message UdpPair { bytes peer_id = 1; bytes pair_id = 2; bytes secret = 3;
/// uint32 local_index = 4; uint32 remote_index = 5; bool initiator = 6; bytes initiator_id = 7; }
/// </summary>
[ProtoContract]
internal sealed class UdpPairMessage
{
    /// <summary>The other peer of the pair.</summary>
    [ProtoMember(1)]
    public byte[]? PeerId { get; set; }

    /// <summary>A random id of this pair key (part of the key context).</summary>
    [ProtoMember(2)]
    public byte[]? PairId { get; set; }

    /// <summary>The pair's secret (32 random bytes, made for this pair only).</summary>
    [ProtoMember(3)]
    public byte[]? Secret { get; set; }

    /// <summary>The index the recipient receives the other peer's datagrams on.</summary>
    [ProtoMember(4)]
    public uint LocalIndex { get; set; }

    /// <summary>The index the other peer receives on.</summary>
    [ProtoMember(5)]
    public uint RemoteIndex { get; set; }

    /// <summary>True for the peer that asked (the session's initiator).</summary>
    [ProtoMember(6)]
    public bool Initiator { get; set; }
}

/// <summary>
/// p2p/punch, a request between peers (routed by the relay, From stamped) and its reply: message
/// PunchOffer { repeated bytes candidates = 1; bool refused = 2; } (a candidate: family | port | address, UdpFraming).
/// </summary>
[ProtoContract]
internal sealed class PunchOfferMessage
{
    [ProtoMember(1)]
    public System.Collections.Generic.List<byte[]> Candidates { get; set; } = [];

    /// <summary>True when the peer refused to punch (its punch limits).</summary>
    [ProtoMember(2)]
    public bool Refused { get; set; }
}
