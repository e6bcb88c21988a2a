namespace NetServer.P2P;

/// <summary>How messages reach a peer.</summary>
public enum RelayPath
{
    /// <summary>Through the relay, over the client's TLS connection to it (the only path today).</summary>
    Relayed = 0,

    /// <summary>
    /// Straight to the peer over UDP after a hole punch. Planned (phase 2, docs/p2p.md): no peer
    /// has this path until the UDP transport and the punch exist.
    /// </summary>
    Direct = 1,
}
