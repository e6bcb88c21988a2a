namespace NetServer;

/// <summary>
/// The side of a secure session. Both sides derive the same two direction keys from one secret;
/// the role says which one seals and which one opens, so the initiator's datagrams are sealed with
/// the key the responder opens with, and a datagram reflected back to its sender does not open.
/// Exactly one side of a session is the <see cref="Initiator"/> (for a relay: the client).
/// </summary>
public enum SecureUdpRole
{
    /// <summary>Seals with the initiator-to-responder key, opens with the responder-to-initiator key.</summary>
    Initiator,

    /// <summary>Seals with the responder-to-initiator key, opens with the initiator-to-responder key.</summary>
    Responder,
}
