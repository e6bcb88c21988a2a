using System;

namespace NetServer.P2P.Wire;

/// <summary>What a control envelope is: the one registry of the relay's message kinds (docs/p2p.md, "Wire messages").</summary>
internal enum RelayKind
{
    /// <summary>Not a relay kind (an application header).</summary>
    None,

    /// <summary>Client to relay, first: <see cref="Contracts.RegisterMessage"/>.</summary>
    Register,

    /// <summary>Relay to client, the answer to <see cref="Register"/>: <see cref="Contracts.WelcomeMessage"/>.</summary>
    Welcome,

    /// <summary>Relay to clients: <see cref="Contracts.PeerJoinedMessage"/>.</summary>
    PeerJoined,

    /// <summary>Relay to clients: <see cref="Contracts.PeerLeftMessage"/>.</summary>
    PeerLeft,

    /// <summary>Client to relay: <see cref="Contracts.SnapshotRequestMessage"/> (a client that saw a version gap).</summary>
    SnapshotRequest,

    /// <summary>Relay to client: <see cref="Contracts.SnapshotMessage"/>.</summary>
    Snapshot,

    /// <summary>Relay to client: <see cref="Contracts.StatusMessage"/>, a refusal (a reply to a refused request, else a plain message).</summary>
    Status,

    /// <summary>Client to relay, a request answered with an empty reply (the relay's round-trip time).</summary>
    Ping,

    /// <summary>Client to relay, a request: <see cref="Contracts.RoomMessage"/> in and out.</summary>
    RoomJoin,

    /// <summary>Client to relay, a request: <see cref="Contracts.RoomMessage"/> in and out.</summary>
    RoomLeave,

    /// <summary>Client to relay, a request: <see cref="Contracts.RoomMessage"/> in, <see cref="Contracts.RoomMembersMessage"/> out.</summary>
    RoomMembers,

    /// <summary>Client to relay, a request for a peer-pair key (<see cref="Contracts.UdpPairRequestMessage"/>); the reply and a plain message to the other peer carry <see cref="Contracts.UdpPairMessage"/>.</summary>
    UdpSession,

    /// <summary>A UDP datagram carried over TLS (UDP to the relay blocked): client to relay [destination id | inner], relay to client [source id | inner], raw payload.</summary>
    UdpDatagram,

    /// <summary>Any "relay/punch..." header: refused with <see cref="RelayStatus.Unsupported"/> (peers punch with routed p2p/punch envelopes).</summary>
    Punch,
}

/// <summary>
/// The headers of the relay's control envelopes, all under the reserved prefix "relay/". The relay
/// sends them with <c>From</c> empty (routed envelopes always carry the sender's id), and refuses
/// to route an envelope whose header starts with the prefix, so no peer can forge one.
/// </summary>
internal static class RelayKinds
{
    /// <summary>The reserved prefix of control headers.</summary>
    public const string Prefix = "relay/";

    public const string Register = "relay/register";
    public const string Welcome = "relay/welcome";
    public const string PeerJoined = "relay/peer-joined";
    public const string PeerLeft = "relay/peer-left";
    public const string SnapshotRequest = "relay/snapshot-request";
    public const string Snapshot = "relay/snapshot";
    public const string Status = "relay/status";
    public const string Ping = "relay/ping";
    public const string RoomJoin = "relay/room-join";
    public const string RoomLeave = "relay/room-leave";
    public const string RoomMembers = "relay/room-members";

    /// <summary>A peer-pair key for UDP (docs/p2p.md, "UDP").</summary>
    public const string UdpSession = "relay/udp-session";

    /// <summary>A UDP datagram carried over TLS.</summary>
    public const string UdpDatagram = "relay/udp";

    /// <summary>Every "relay/punch..." header (refused: see <see cref="RelayKind.Punch"/>).</summary>
    public const string Punch = "relay/punch";

    /// <summary>A request between peers that <see cref="RelayClient"/> answers itself (a peer's round-trip time through the relay).</summary>
    public const string PeerPing = "p2p/ping";

    /// <summary>A request between peers that <see cref="RelayClient"/> answers itself: punch candidates out and back (docs/p2p.md, "Hole punching").</summary>
    public const string PeerPunch = "p2p/punch";

    /// <summary>A plain message between peers: the requester nominated the direct path.</summary>
    public const string PeerPunchNominate = "p2p/punch-nominate";

    public static ReadOnlySpan<byte> PrefixUtf8 => "relay/"u8;

    public static ReadOnlySpan<byte> PeerPingUtf8 => "p2p/ping"u8;

    /// <summary>True when <paramref name="header"/> is in the reserved "relay/" namespace.</summary>
    public static bool IsReserved(ReadOnlySpan<byte> header) => header.StartsWith(PrefixUtf8);

    /// <summary>The kind a control header names (<see cref="RelayKind.None"/> for any other).</summary>
    public static RelayKind Parse(ReadOnlySpan<byte> header)
    {
        if (!IsReserved(header))
            return RelayKind.None;
        var name = header.Slice(PrefixUtf8.Length);
        if (name.SequenceEqual("register"u8))
            return RelayKind.Register;
        if (name.SequenceEqual("welcome"u8))
            return RelayKind.Welcome;
        if (name.SequenceEqual("peer-joined"u8))
            return RelayKind.PeerJoined;
        if (name.SequenceEqual("peer-left"u8))
            return RelayKind.PeerLeft;
        if (name.SequenceEqual("snapshot-request"u8))
            return RelayKind.SnapshotRequest;
        if (name.SequenceEqual("snapshot"u8))
            return RelayKind.Snapshot;
        if (name.SequenceEqual("status"u8))
            return RelayKind.Status;
        if (name.SequenceEqual("ping"u8))
            return RelayKind.Ping;
        if (name.SequenceEqual("room-join"u8))
            return RelayKind.RoomJoin;
        if (name.SequenceEqual("room-leave"u8))
            return RelayKind.RoomLeave;
        if (name.SequenceEqual("room-members"u8))
            return RelayKind.RoomMembers;
        if (name.SequenceEqual("udp-session"u8))
            return RelayKind.UdpSession;
        if (name.SequenceEqual("udp"u8))
            return RelayKind.UdpDatagram;
        if (name.StartsWith("punch"u8))
            return RelayKind.Punch;
        return RelayKind.None;
    }
}

/// <summary>The version of the control protocol (relay/register carries it; a relay refuses one it does not speak).</summary>
internal static class RelayProtocol
{
    public const uint Version = 1;
}
