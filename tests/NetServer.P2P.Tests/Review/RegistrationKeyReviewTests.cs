using System.Net;
using NetServer.P2P.Internal;
using Xunit;

namespace NetServer.P2P.Tests.Review;

/// <summary>
/// Review of 0b25008: addresses whose low 64 bits carry the host (an IPv4 client behind a stateless
/// translator, RFC 6052/7915/7755; a Teredo client, RFC 4380) must not share one registration key:
/// under the /64 rule every IPv4 client of a relay behind SIIT shares 64:ff9b::/64, so 64 peers of
/// anyone lock the whole IPv4 internet out.
/// </summary>
public sealed class RegistrationKeyReviewTests
{
    [Theory]
    [InlineData("64:ff9b::198.51.100.1", "64:ff9b::203.0.113.7")] // NAT64/SIIT well-known prefix
    [InlineData("::ffff:0:198.51.100.1", "::ffff:0:203.0.113.7")] // IPv4-translated (RFC 2765)
    [InlineData("2001:0:4136:e378:8000:63bf:3fff:fdd2", "2001:0:4136:e378:8000:63bf:3fff:fdd3")] // two Teredo clients of one server
    public void Different_hosts_embedded_in_the_low_64_bits_get_different_keys(string a, string b) =>
        Assert.NotEqual(KeyOf(IPAddress.Parse(a)), KeyOf(IPAddress.Parse(b)));

    [Theory]
    [InlineData("64:ff9b::198.51.100.1", "198.51.100.1")]
    [InlineData("::ffff:0:198.51.100.1", "198.51.100.1")]
    [InlineData("2002:c633:6401:1::1", "198.51.100.1")] // 6to4: every /64 of one IPv4 site counts as that IPv4 host
    [InlineData("2002:c633:6401:ffff::2", "198.51.100.1")]
    [InlineData("2001:0:4136:e378:8000:63bf:3fff:fdd2", "192.0.2.45")] // Teredo: the client's IPv4, whatever server, flags and port
    [InlineData("2001:0:4136:e378:8abc:63be:3fff:fdd2", "192.0.2.45")]
    [InlineData("2001:0:c000:201:8000:63bf:3fff:fdd2", "192.0.2.45")]
    public void A_host_embedded_as_IPv4_counts_under_its_IPv4_address(string address, string key) =>
        Assert.Equal(IPAddress.Parse(key), KeyOf(IPAddress.Parse(address)));

    private static IPAddress KeyOf(IPAddress address) => IpAddresses.RegistrationKeyOf(address, [Nat64Prefix.WellKnown]).Address;
}
