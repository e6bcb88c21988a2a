namespace NetServer.P2P.Tests.Nat;

/// <summary>How a lab peer reaches the public segment (docs/nat-lab.md has the iptables rules of each).</summary>
public enum NatType
{
    /// <summary>No NAT: the peer's own address is on the public segment, next to the relay.</summary>
    Public,

    /// <summary>
    /// Endpoint-independent mapping (<c>MASQUERADE</c>, which keeps the source port): one internal
    /// socket gets one external port whatever it sends to. Filtering is address-and-port dependent
    /// (conntrack; INPUT/FORWARD let only ESTABLISHED,RELATED in): the common home router that
    /// hole punching works through.
    /// </summary>
    EndpointIndependent,

    /// <summary>Symmetric: <c>MASQUERADE --random-fully</c>, a new random external port per destination.</summary>
    Symmetric,

    /// <summary>
    /// Full cone: static <c>SNAT</c> of the LAN host's UDP to the router's address (the port kept)
    /// and <c>DNAT</c> of every UDP port back to it, so anyone may send to the mapped endpoint.
    /// </summary>
    FullCone,

    /// <summary>As <see cref="EndpointIndependent"/>, and the router drops all forwarded UDP: only TCP gets out.</summary>
    UdpBlocked,
}
