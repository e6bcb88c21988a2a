using System;
using System.Collections.Generic;
using System.Threading;
using NetServer.P2P.Internal;

namespace NetServer.P2P;

/// <summary>
/// The limits of a <see cref="RelayServer"/>, each with a documented outcome (docs/p2p.md,
/// "Limits"). Set them before <see cref="RelayServer.Start"/>; they are checked there.
/// </summary>
public sealed class RelayServerOptions
{
    /// <summary>How long a connection may take from its TCP accept to its registration, TLS handshake included (default 10 s). Later: closed with <see cref="DisconnectReason.ProtocolError"/>.</summary>
    public TimeSpan RegistrationTimeout { get; set; } = TimeSpan.FromSeconds(10);

    /// <summary>Registered peers from one source IP address at once (default 64; 0: no limit), an IPv6 source counted by its /64 prefix (one host's share; link-local ones by address; an IPv4 client behind a translator of <see cref="Nat64Prefixes"/>, Teredo or 6to4 by its IPv4 address if that is global). One more is refused with <see cref="RelayStatus.TooManyRegistrations"/> and disconnected.</summary>
    public int MaxPeersPerAddress { get; set; } = 64;

    /// <summary>
    /// Registered peers from one IPv6 /48 at once (default 1024, 16 times <see cref="MaxPeersPerAddress"/>'s default; 0: no limit),
    /// whatever /64s inside it they come from: a site given a /48 holds 65,536 /64s, each one
    /// <see cref="MaxPeersPerAddress"/> would count apart. IPv4 sources (and IPv6 ones counted by an
    /// IPv4 address) and link-local ones are not counted. One more is refused with
    /// <see cref="RelayStatus.TooManyRegistrations"/> and disconnected.
    /// </summary>
    public int MaxPeersPerIPv6Site { get; set; } = 1024;

    /// <summary>
    /// The prefixes of the IPv4/IPv6 translators (NAT64, SIIT) in front of the relay, as
    /// "prefix/length" (default: the well-known "64:ff9b::/96"). A source address under one carries
    /// an IPv4 client's address (RFC 6052, lengths 32, 40, 48, 56, 64 or 96), and counts against
    /// <see cref="MaxPeersPerAddress"/> as that IPv4 address, not as the /64 every client of the
    /// translator shares. Add the local-use prefix (64:ff9b:1::/48 or one inside it, RFC 8215) or an
    /// operator's own when the relay is behind such a translator. A non-global IPv4 address (private,
    /// loopback, link-local...) under the well-known prefix, which never carries one, counts as an
    /// ordinary IPv6 source; under another prefix, as its translated address. <see cref="RelayServer.Start"/>
    /// refuses an IPv4 prefix, another length, bits set past the length, a non-zero u octet (bits 64 to 71),
    /// a scope id, or a prefix inside ::/16, Teredo (2001::/32), 6to4 (2002::/16), link-local or multicast
    /// addresses, which the registration key reads its own way. Do not change the list while <see cref="RelayServer.Start"/> runs.
    /// </summary>
    public IList<string> Nat64Prefixes { get; set; } = ["64:ff9b::/96"];

    /// <summary>Connections at once, registered or not (default 0: no limit); one over it is closed at accept.</summary>
    public int MaxConnections { get; set; }

    /// <summary>The longest envelope a peer may send, in bytes (default 1 MiB). A longer one closes its connection with <see cref="DisconnectReason.ProtocolError"/> (the message layer's rule); <see cref="RelayClient"/> refuses to send one.</summary>
    public int MaxMessageSize { get; set; } = 1024 * 1024;

    /// <summary>The longest peer name, in UTF-8 bytes (default 64). Longer: registration refused with <see cref="RelayStatus.InvalidRequest"/>.</summary>
    public int MaxNameLength { get; set; } = 64;

    /// <summary>
    /// Messages per second a peer may have relayed (default 50,000; 0: no limit): a token bucket
    /// holding one second's worth. A message to a room or to everyone counts once per recipient;
    /// control messages count once. Over it: refused with <see cref="RelayStatus.RateLimited"/>.
    /// </summary>
    public int PeerMessageRate { get; set; } = 50_000;

    /// <summary>Envelope bytes per second a peer may have relayed (default 32 MiB; 0: no limit), counted as <see cref="PeerMessageRate"/> counts messages.</summary>
    public long PeerByteRate { get; set; } = 32L * 1024 * 1024;

    /// <summary>
    /// Bytes that may wait in one peer's send queue for routed messages (default 4 MiB; at least
    /// <see cref="MaxMessageSize"/>). A message that would pass it is refused to its sender with
    /// <see cref="RelayStatus.ResourceLimitExceeded"/>. Control messages (peer deltas, statuses)
    /// have <see cref="ControlQueueReserve"/> above it; a peer that lets even those pile up (it does
    /// not read) is disconnected (<see cref="DisconnectReason.ProtocolError"/>) rather than miss any of them.
    /// </summary>
    public int DestinationQueueLimit { get; set; } = 4 * 1024 * 1024;

    /// <summary>Room above <see cref="DestinationQueueLimit"/> in a peer's send queue for the relay's own messages (default 1 MiB).</summary>
    public int ControlQueueReserve { get; set; } = 1024 * 1024;

    /// <summary>
    /// Requests a peer may have in flight to other peers through the relay (default 1024). The
    /// relay remembers each until its reply passes, so only the asked peer can answer it; one more
    /// is refused with <see cref="RelayStatus.ResourceLimitExceeded"/>.
    /// </summary>
    public int MaxRequestsInFlight { get; set; } = 1024;

    /// <summary>How long the relay remembers an unanswered request before its slot may be reused (default 2 min).</summary>
    public TimeSpan RequestLifetime { get; set; } = TimeSpan.FromMinutes(2);

    /// <summary>Whether the relay opens a UDP port (default true): server-reflexive addresses, relayed datagrams, hole punching. Without it peers' datagrams go over TLS.</summary>
    public bool UdpEnabled { get; set; } = true;

    /// <summary>The UDP port, on the TLS listener's address (default 0: a free port, announced in the welcome).</summary>
    public int UdpPort { get; set; }

    /// <summary>Peers one peer may hold a UDP pair key with (default 1024). One more: <see cref="RelayStatus.ResourceLimitExceeded"/>.</summary>
    public int MaxUdpPairsPerPeer { get; set; } = 1024;

    /// <summary>Rooms one peer may be in (default 16). One more: <see cref="RelayStatus.TooManyRooms"/>.</summary>
    public int MaxRoomsPerPeer { get; set; } = 16;

    /// <summary>Members of one room (default 1024). One more: <see cref="RelayStatus.RoomFull"/>.</summary>
    public int MaxMembersPerRoom { get; set; } = 1024;

    /// <summary>Rooms on the relay (default 10,000). A new one past it: <see cref="RelayStatus.TooManyRooms"/>.</summary>
    public int MaxRooms { get; set; } = 10_000;

    /// <summary>The longest room name, in UTF-8 bytes (default 64). Longer or empty: <see cref="RelayStatus.InvalidRequest"/>.</summary>
    public int MaxRoomNameLength { get; set; } = 64;

    /// <summary>The least time between two peer-list snapshots sent to one peer on its request (default 1 s). Sooner: <see cref="RelayStatus.RateLimited"/>.</summary>
    public TimeSpan SnapshotInterval { get; set; } = TimeSpan.FromSeconds(1);

    /// <summary>
    /// The link to the other relay nodes of a cluster (default null: this relay is alone). With one,
    /// peers registered on any node are in every node's peer list and messages, typed payloads and
    /// requests reach them, and a room spans the nodes (its id is a hash of its name). Room
    /// membership, UDP and hole punching stay on each node (docs/scale-out.md, "Relay nodes").
    /// </summary>
    public IRelayBackplane? Backplane { get; set; }

    /// <summary>How often this node tells the others it is alive and at which registry change it is (default 1 s); with a backplane only.</summary>
    public TimeSpan NodeHeartbeatInterval { get; set; } = TimeSpan.FromSeconds(1);

    /// <summary>
    /// How long a node may stay silent before the others take it for dead and its peers leave their
    /// lists (default 5 s; more than <see cref="NodeHeartbeatInterval"/>). A node that loses the
    /// backplane drops the other nodes' peers after the same time.
    /// </summary>
    public TimeSpan NodeTimeout { get; set; } = TimeSpan.FromSeconds(5);

    /// <summary><see cref="Nat64Prefixes"/> read (in a copy made by <see cref="Clone"/>; entries <see cref="Validate"/> refuses are left out).</summary>
    internal Nat64Prefix[] Translators { get; private set; } = [];

    /// <summary>A copy, so a running server's limits cannot change under it.</summary>
    internal RelayServerOptions Clone()
    {
        var clone = (RelayServerOptions)MemberwiseClone();
        clone.Nat64Prefixes = Nat64Prefixes is null ? null! : [.. Nat64Prefixes]; // null stays null for Validate to refuse
        var translators = new List<Nat64Prefix>();
        foreach (var text in clone.Nat64Prefixes ?? [])
        {
            if (Nat64Prefix.TryParse(text, out var prefix, out _))
                translators.Add(prefix);
        }

        clone.Translators = translators.ToArray();
        return clone;
    }

    /// <summary>Throws for a limit out of range.</summary>
    internal void Validate()
    {
        Positive(RegistrationTimeout, nameof(RegistrationTimeout), infiniteAllowed: true);
        Positive(RequestLifetime, nameof(RequestLifetime), infiniteAllowed: true);
        NotNegative(MaxPeersPerAddress, nameof(MaxPeersPerAddress));
        NotNegative(MaxPeersPerIPv6Site, nameof(MaxPeersPerIPv6Site));
        if (Nat64Prefixes is null)
            throw new ArgumentNullException(nameof(Nat64Prefixes), "Set an empty list for no translator prefix.");
        foreach (var text in Nat64Prefixes)
        {
            if (!Nat64Prefix.TryParse(text, out _, out var reason))
                throw new ArgumentException("A translator prefix (RFC 6052) is not valid: " + reason, nameof(Nat64Prefixes));
        }

        NotNegative(MaxConnections, nameof(MaxConnections));
        NotNegative(PeerMessageRate, nameof(PeerMessageRate));
        NotNegative(PeerByteRate, nameof(PeerByteRate));
        AtLeast(MaxMessageSize, 256, nameof(MaxMessageSize));
        AtLeast(MaxNameLength, 0, nameof(MaxNameLength));
        AtLeast(DestinationQueueLimit, MaxMessageSize, nameof(DestinationQueueLimit));
        AtLeast(ControlQueueReserve, 64 * 1024, nameof(ControlQueueReserve));
        AtLeast(MaxRequestsInFlight, 1, nameof(MaxRequestsInFlight));
        AtLeast(MaxUdpPairsPerPeer, 1, nameof(MaxUdpPairsPerPeer));
        if (UdpPort is < 0 or > 65_535)
            throw new ArgumentOutOfRangeException(nameof(UdpPort), UdpPort, "A UDP port is 0 to 65535.");
        AtLeast(MaxRoomsPerPeer, 0, nameof(MaxRoomsPerPeer));
        AtLeast(MaxMembersPerRoom, 1, nameof(MaxMembersPerRoom));
        AtLeast(MaxRooms, 0, nameof(MaxRooms));
        AtLeast(MaxRoomNameLength, 1, nameof(MaxRoomNameLength));
        if (SnapshotInterval < TimeSpan.Zero)
            throw new ArgumentOutOfRangeException(nameof(SnapshotInterval), SnapshotInterval, "The interval cannot be negative.");
        Positive(NodeHeartbeatInterval, nameof(NodeHeartbeatInterval), infiniteAllowed: false);
        if (NodeTimeout <= NodeHeartbeatInterval)
            throw new ArgumentOutOfRangeException(nameof(NodeTimeout), NodeTimeout, "The node timeout must be longer than the heartbeat interval.");
        if (Backplane is not null && MaxNameLength > ushort.MaxValue)
            throw new ArgumentOutOfRangeException(nameof(MaxNameLength), MaxNameLength, "With a backplane a peer name is at most 65,535 UTF-8 bytes (what the nodes' messages carry).");
        if ((long)DestinationQueueLimit + ControlQueueReserve + MaxMessageSize > int.MaxValue)
            throw new ArgumentOutOfRangeException(nameof(DestinationQueueLimit), DestinationQueueLimit, "The queue limit, the control reserve and the message size together must fit in 2 GiB.");
    }

    private static void Positive(TimeSpan value, string name, bool infiniteAllowed)
    {
        if (value <= TimeSpan.Zero && !(infiniteAllowed && value == Timeout.InfiniteTimeSpan))
            throw new ArgumentOutOfRangeException(name, value, "The time must be positive (or Timeout.InfiniteTimeSpan).");
    }

    private static void NotNegative(long value, string name)
    {
        if (value < 0)
            throw new ArgumentOutOfRangeException(name, value, "The limit cannot be negative (0: none).");
    }

    private static void AtLeast(int value, int minimum, string name)
    {
        if (value < minimum)
            throw new ArgumentOutOfRangeException(name, value, $"The limit must be at least {minimum}.");
    }
}
