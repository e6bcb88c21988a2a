namespace NetServer;

/// <summary>
/// The type byte of a secure datagram: the registry of every type there is, kept in this one
/// place. It is part of the authenticated header, so it cannot be changed in flight; a datagram
/// whose type is not listed here is dropped before any cryptography. Standalone secure UDP
/// (<see cref="SecureUdpServer"/>, <see cref="SecureUdpClient"/>) sends and delivers
/// <see cref="Data"/> only; the others are reserved for the relay and P2P layer (docs/secure-udp.md).
/// </summary>
public enum SecureDatagramType : byte
{
    /// <summary>Application data.</summary>
    Data = 1,

    /// <summary>An empty datagram that keeps a path (and NAT mappings) alive.</summary>
    Keepalive = 2,

    /// <summary>P2P: a hole-punching probe sent to a candidate endpoint.</summary>
    Punch = 3,

    /// <summary>P2P: the answer to an authenticated <see cref="Punch"/>.</summary>
    PunchAck = 4,

    /// <summary>Relay: an outer datagram (client and relay) whose payload holds a destination and an inner, already sealed peer datagram.</summary>
    Relayed = 5,

    /// <summary>Relay: a request for the endpoint the relay sees this client at (its server-reflexive address).</summary>
    Bind = 6,

    /// <summary>Relay: the answer to <see cref="Bind"/>, never larger than the request.</summary>
    BindAck = 7,
}
