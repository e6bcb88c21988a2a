namespace NetServer;

/// <summary>
/// What opening a secure datagram found. Only <see cref="Ok"/> delivers a payload; every other
/// status means the datagram was dropped (and counted) without changing the session's state: a
/// datagram that did not authenticate never moves the replay window or the receive epoch.
/// </summary>
public enum SecureDatagramStatus
{
    /// <summary>Authentic and new: the payload was decrypted.</summary>
    Ok,

    /// <summary>Shorter than a header and a tag (<see cref="SecureUdpSession.Overhead"/> bytes).</summary>
    Truncated,

    /// <summary>The type byte is not one of <see cref="SecureDatagramType"/>'s values (checked before any cryptography).</summary>
    UnknownType,

    /// <summary>The receiver index names no session here (or the session was closed).</summary>
    UnknownIndex,

    /// <summary>The epoch byte names no receive key this session holds or may derive now.</summary>
    UnknownEpoch,

    /// <summary>The counter lies at or past the number of datagrams a key may seal: no honest sender uses it.</summary>
    InvalidCounter,

    /// <summary>The counter lies left of the replay window: too old to tell whether it was seen.</summary>
    TooOld,

    /// <summary>A datagram with this counter (and epoch) was already accepted.</summary>
    Replay,

    /// <summary>The tag did not verify: a forged, corrupted, reflected or misdirected datagram, or one sealed with other keys.</summary>
    AuthenticationFailed,

    /// <summary>The caller's destination is smaller than the payload (opening into a separate span).</summary>
    DestinationTooSmall,

    /// <summary>
    /// Dropped unopened: the session (or its table) has had too many authentication failures in
    /// the last second, so no AEAD runs until its failure budget refills (docs/secure-udp.md).
    /// </summary>
    RateLimited,

    /// <summary>The session has had as many authentication failures as its AEAD allows (RFC 9001 section 6.6): it refuses every datagram; set up a new one.</summary>
    IntegrityLimitReached,
}
