using System;

namespace NetServer.P2P.Tests.Nat;

/// <summary>Knobs of a <see cref="NatLab"/>, applied when it is created (each peer can also change its own later).</summary>
internal sealed class NatLabOptions
{
    /// <summary>
    /// When set, every NAT router's conntrack forgets an idle UDP mapping after this long (whole
    /// seconds, at least 1): <c>nf_conntrack_udp_timeout</c> and <c>nf_conntrack_udp_timeout_stream</c>
    /// in the router's namespace (both are per network namespace). Unset: the kernel's 30 s / 120 s.
    /// </summary>
    public TimeSpan? UdpMappingTimeout { get; init; }

    /// <summary>
    /// When set, this delay is added to every peer's uplink in each direction (<c>tc netem</c>), so a
    /// round trip to the relay takes twice as long more. Needs a kernel with sch_netem:
    /// <see cref="NatLabFactAttribute.RequiresNetem"/>.
    /// </summary>
    public TimeSpan? Latency { get; init; }

    /// <summary>The bound of every wait on a program the lab runs (its start, each reply line).</summary>
    public TimeSpan Timeout { get; init; } = TimeSpan.FromSeconds(10);
}
