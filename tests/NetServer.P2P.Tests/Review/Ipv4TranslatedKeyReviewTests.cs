using System.Linq;
using System.Net;
using NetServer.P2P.Internal;
using Xunit;

namespace NetServer.P2P.Tests.Review;

/// <summary>
/// Review of branch regkey: an IPv4-translated address (::ffff:0:0:0/96, RFC 2765 SIIT) of a
/// non-global IPv4 address fell back to "ordinary IPv6" and so counted under ::/64 and ::/48,
/// the key every such client shares with the others and with ::1 and the IPv4-compatible range.
/// RFC 2765 does not restrict this prefix to global addresses (a SIIT's pool may be private), and
/// no bit of such an address is free (96 fixed bits, then the IPv4), so the whole address names
/// one host, as it does under an operator's translator prefix.
/// </summary>
public sealed class Ipv4TranslatedKeyReviewTests
{
    [Fact]
    public void Private_IPv4_translated_clients_count_apart_and_apart_from_loopback()
    {
        var keys = new[] { "::ffff:0:10.0.0.1", "::ffff:0:10.0.0.2", "::ffff:0:192.168.1.9", "::1" }.Select(KeyOf).ToArray();
        Assert.Equal(keys.Length, keys.Select(k => k.Address).Distinct().Count());
        Assert.Equal(IPAddress.Parse("::ffff:0:10.0.0.1"), keys[0].Address);
        Assert.Null(keys[0].Site); // one host, no IPv6 site of its own
        Assert.NotEqual(IPAddress.Parse("10.0.0.1"), keys[0].Address); // nor the bare private IPv4 host's key
    }

    private static RegistrationKey KeyOf(string address) =>
        IpAddresses.RegistrationKeyOf(IPAddress.Parse(address), [Nat64Prefix.WellKnown]);
}
