using System.Collections.Generic;
using System.Net;
using NetServer.P2P.Internal;

namespace NetServer.P2P.Server;

/// <summary>
/// The registrations held under each <see cref="RegistrationKey"/>: by address (<c>MaxPeersPerAddress</c>)
/// and by IPv6 site (<c>MaxPeersPerIPv6Site</c>). Not thread-safe: the relay holds its view lock.
/// </summary>
internal sealed class RegistrationCounts
{
    private readonly Dictionary<IPAddress, int> _perAddress = [];
    private readonly Dictionary<IPAddress, int> _perSite = [];

    /// <summary>
    /// Counts one more registration under <paramref name="key"/>, or none and false if either limit
    /// (0: none) is reached.
    /// </summary>
    public bool TryAdd(RegistrationKey key, int maxPerAddress, int maxPerSite)
    {
        if (IsFull(_perAddress, key.Address, maxPerAddress) || (key.Site is { } site && IsFull(_perSite, site, maxPerSite)))
            return false;
        Increment(_perAddress, key.Address);
        if (key.Site is { } counted)
            Increment(_perSite, counted);
        return true;
    }

    /// <summary>Takes back a registration <see cref="TryAdd"/> counted under <paramref name="key"/>.</summary>
    public void Remove(RegistrationKey key)
    {
        Decrement(_perAddress, key.Address);
        if (key.Site is { } site)
            Decrement(_perSite, site);
    }

    /// <summary>Registrations now under this address key (an IPv4 address, an IPv6 /64).</summary>
    public int OfAddress(IPAddress key) => _perAddress.TryGetValue(key, out var count) ? count : 0;

    /// <summary>Registrations now under this IPv6 /48.</summary>
    public int OfSite(IPAddress site) => _perSite.TryGetValue(site, out var count) ? count : 0;

    private static bool IsFull(Dictionary<IPAddress, int> counts, IPAddress key, int max) =>
        max > 0 && counts.TryGetValue(key, out var count) && count >= max;

    private static void Increment(Dictionary<IPAddress, int> counts, IPAddress key) =>
        counts[key] = counts.TryGetValue(key, out var count) ? count + 1 : 1;

    private static void Decrement(Dictionary<IPAddress, int> counts, IPAddress key)
    {
        if (!counts.TryGetValue(key, out var count))
            return;
        if (count <= 1)
            counts.Remove(key);
        else
            counts[key] = count - 1;
    }
}
