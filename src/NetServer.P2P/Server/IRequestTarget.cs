namespace NetServer.P2P.Server;

/// <summary>A peer a request can be waiting for: one on this relay (<see cref="RelayPeerState"/>) or on another node (<see cref="RemotePeerState"/>).</summary>
internal interface IRequestTarget
{
    /// <summary>True once the peer left; its requests' slots may be reused.</summary>
    bool HasLeft { get; }
}
