namespace NetServer.P2P;

/// <summary>How messages reach a peer.</summary>
public enum RelayPath
{
    /// <summary>Through the relay: envelopes over TLS; datagrams by UDP through the relay's port (over TLS when UDP to the relay is blocked).</summary>
    Relayed = 0,

    /// <summary>Datagrams straight to the peer over UDP, after a hole punch (<see cref="RelayClient.ConnectDirectAsync"/>); envelopes still go through the relay.</summary>
    Direct = 1,
}
