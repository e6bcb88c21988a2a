using System.Net;

namespace NetServer.P2P.Internal;

/// <summary>
/// What a registration counts under (<see cref="IpAddresses.RegistrationKeyOf"/>): <see cref="Address"/>
/// against <c>MaxPeersPerAddress</c> (an IPv4 address, an IPv6 /64, a link-local address), and
/// <see cref="Site"/>, the /48 of an IPv6 one, against <c>MaxPeersPerIPv6Site</c> (null: not counted there).
/// </summary>
internal readonly struct RegistrationKey
{
    public RegistrationKey(IPAddress address, IPAddress? site)
    {
        Address = address;
        Site = site;
    }

    public IPAddress Address { get; }

    public IPAddress? Site { get; }
}
