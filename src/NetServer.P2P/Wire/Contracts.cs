using System.Collections.Generic;
using ProtoBuf;

// The payloads of the relay's control envelopes (docs/p2p.md holds them as a .proto). GUIDs are
// 16 bytes in RFC 9562 order (GuidBytes). Field numbers are never reused. The UDP kinds' payloads
// are in UdpContracts.cs.
namespace NetServer.P2P.Wire.Contracts;

/// <summary>relay/register: message Register { string name = 1; uint32 protocol = 2; }</summary>
[ProtoContract]
internal sealed class RegisterMessage
{
    [ProtoMember(1)]
    public string? Name { get; set; }

    /// <summary>The control protocol the client speaks (<see cref="RelayProtocol.Version"/>).</summary>
    [ProtoMember(2)]
    public uint Protocol { get; set; }
}

/// <summary>
/// relay/welcome: message Welcome { bytes peer_id = 1; bytes session_id = 2; Limits limits = 3;
/// Snapshot peers = 4; uint32 udp_port = 5; bytes udp_secret = 6; uint32 udp_relay_index = 7;
/// uint32 udp_client_index = 8; } (5 to 8 absent when the relay has no UDP port).
/// </summary>
[ProtoContract]
internal sealed class WelcomeMessage
{
    [ProtoMember(1)]
    public byte[]? PeerId { get; set; }

    [ProtoMember(2)]
    public byte[]? SessionId { get; set; }

    [ProtoMember(3)]
    public LimitsMessage? Limits { get; set; }

    [ProtoMember(4)]
    public SnapshotMessage? Peers { get; set; }

    /// <summary>The relay's UDP port (0: none).</summary>
    [ProtoMember(5)]
    public uint UdpPort { get; set; }

    /// <summary>The client-relay session's secret (32 random bytes, this registration's only).</summary>
    [ProtoMember(6)]
    public byte[]? UdpSecret { get; set; }

    /// <summary>The index the relay receives this client's datagrams on.</summary>
    [ProtoMember(7)]
    public uint UdpRelayIndex { get; set; }

    /// <summary>The index this client receives the relay's datagrams on (the relay assigns every index a client receives on, so they are unique per client).</summary>
    [ProtoMember(8)]
    public uint UdpClientIndex { get; set; }
}

/// <summary>
/// message Limits { uint32 max_message_size = 1; uint32 message_rate = 2; uint64 byte_rate = 3;
/// uint32 max_rooms = 4; uint32 max_room_members = 5; uint32 max_requests_in_flight = 6;
/// uint32 max_name_length = 7; }
/// </summary>
[ProtoContract]
internal sealed class LimitsMessage
{
    [ProtoMember(1)]
    public uint MaxMessageSize { get; set; }

    [ProtoMember(2)]
    public uint MessageRate { get; set; }

    [ProtoMember(3)]
    public ulong ByteRate { get; set; }

    [ProtoMember(4)]
    public uint MaxRooms { get; set; }

    [ProtoMember(5)]
    public uint MaxRoomMembers { get; set; }

    [ProtoMember(6)]
    public uint MaxRequestsInFlight { get; set; }

    [ProtoMember(7)]
    public uint MaxNameLength { get; set; }
}

/// <summary>message PeerEntry { bytes id = 1; string name = 2; }</summary>
[ProtoContract]
internal sealed class PeerEntry
{
    [ProtoMember(1)]
    public byte[]? Id { get; set; }

    [ProtoMember(2)]
    public string? Name { get; set; }
}

/// <summary>relay/snapshot: message Snapshot { int64 version = 1; repeated PeerEntry peers = 2; }</summary>
[ProtoContract]
internal sealed class SnapshotMessage
{
    [ProtoMember(1)]
    public long Version { get; set; }

    [ProtoMember(2)]
    public List<PeerEntry> Peers { get; set; } = [];
}

/// <summary>relay/peer-joined: message PeerJoined { int64 version = 1; PeerEntry peer = 2; }</summary>
[ProtoContract]
internal sealed class PeerJoinedMessage
{
    [ProtoMember(1)]
    public long Version { get; set; }

    [ProtoMember(2)]
    public PeerEntry? Peer { get; set; }
}

/// <summary>relay/peer-left: message PeerLeft { int64 version = 1; bytes peer_id = 2; }</summary>
[ProtoContract]
internal sealed class PeerLeftMessage
{
    [ProtoMember(1)]
    public long Version { get; set; }

    [ProtoMember(2)]
    public byte[]? PeerId { get; set; }
}

/// <summary>relay/snapshot-request: message SnapshotRequest { int64 known_version = 1; }</summary>
[ProtoContract]
internal sealed class SnapshotRequestMessage
{
    [ProtoMember(1)]
    public long KnownVersion { get; set; }
}

/// <summary>relay/status: message Status { uint32 status = 1; bytes message_id = 2; bytes to = 3; string detail = 4; }</summary>
[ProtoContract]
internal sealed class StatusMessage
{
    [ProtoMember(1)]
    public uint Status { get; set; }

    [ProtoMember(2)]
    public byte[]? MessageId { get; set; }

    [ProtoMember(3)]
    public byte[]? To { get; set; }

    [ProtoMember(4)]
    public string? Detail { get; set; }
}

/// <summary>relay/room-join, relay/room-leave, relay/room-members: message Room { string name = 1; bytes room_id = 2; uint32 members = 3; }</summary>
[ProtoContract]
internal sealed class RoomMessage
{
    [ProtoMember(1)]
    public string? Name { get; set; }

    [ProtoMember(2)]
    public byte[]? RoomId { get; set; }

    [ProtoMember(3)]
    public uint Members { get; set; }
}

/// <summary>The reply to relay/room-members: message RoomMembers { bytes room_id = 1; repeated bytes members = 2; }</summary>
[ProtoContract]
internal sealed class RoomMembersMessage
{
    [ProtoMember(1)]
    public byte[]? RoomId { get; set; }

    [ProtoMember(2)]
    public List<byte[]> Members { get; set; } = [];
}
