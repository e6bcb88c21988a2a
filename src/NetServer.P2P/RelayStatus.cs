namespace NetServer.P2P;

/// <summary>
/// Why the relay refused something (relay/status on the wire, this number), or why the client
/// gave up on it. A refused request fails its <c>RequestAsync</c> with a <see cref="RelayException"/>
/// carrying the status; a refused plain message reaches <see cref="RelayClient.OnDeliveryFailed"/>.
/// </summary>
public enum RelayStatus
{
    /// <summary>Accepted.</summary>
    Ok = 0,

    /// <summary>No registered peer or room has the addressee's id (never had, or it left).</summary>
    UnknownPeer = 1,

    /// <summary>The connection has not registered yet: only relay/register is accepted before.</summary>
    NotRegistered = 2,

    /// <summary>The connection registered already: its id is bound to it for its lifetime.</summary>
    AlreadyRegistered = 3,

    /// <summary>The sender's token bucket (messages or bytes per second) is empty.</summary>
    RateLimited = 4,

    /// <summary>A bounded queue or table is full: the addressee's queue, the sender's requests in flight.</summary>
    ResourceLimitExceeded = 5,

    /// <summary>The envelope may not be sent: a reserved "relay/" header routed to a peer, an unknown control kind, a request to a room.</summary>
    Forbidden = 6,

    /// <summary>The control payload is malformed, or a name breaks the rules (empty, too long, not valid text).</summary>
    InvalidRequest = 7,

    /// <summary>The sender is not a member of the room it addressed, or left.</summary>
    NotMember = 8,

    /// <summary>The peer is in as many rooms as it may be, or the relay holds as many rooms as it may.</summary>
    TooManyRooms = 9,

    /// <summary>The room has as many members as it may.</summary>
    RoomFull = 10,

    /// <summary>Registration refused: as many peers from this source address as the relay allows are registered.</summary>
    TooManyRegistrations = 11,

    /// <summary>Registration refused by the server's <c>OnRegistering</c> hook.</summary>
    RegistrationRefused = 12,

    /// <summary>A reply nobody asked for: the addressee has no request with this id to the sender in flight.</summary>
    UnexpectedReply = 13,

    /// <summary>A control kind this relay does not take (relay/punch..., UDP kinds on a relay without a UDP port) or a protocol version it does not speak.</summary>
    Unsupported = 14,

    /// <summary>Client side: the addressee left while a request to it was waiting for its reply.</summary>
    PeerLeft = 15,

    /// <summary>Client side: the envelope is longer than the relay's message size limit (the relay would close the connection).</summary>
    MessageTooLarge = 16,

    /// <summary>The addressee is a peer on another relay node, and this relay cannot reach the other nodes now (its backplane is down or over its bound): nothing was delivered.</summary>
    NodeUnavailable = 17,
}
