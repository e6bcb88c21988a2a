using System.Linq;
using System.Net;
using NetServer.P2P.Internal;
using Xunit;

namespace NetServer.P2P.Tests.Internal;

/// <summary>
/// What the per-address registration limit counts a peer under: an IPv6 host owns a /64 and can
/// take any address in it, so IPv6 addresses count by their /64; IPv4 ones, mapped or not, by address.
/// </summary>
public sealed class IpAddressesTests
{
    [Theory]
    [InlineData("2001:db8:1:2::1", "2001:db8:1:2::")]
    [InlineData("2001:db8:1:2:ffff:ffff:ffff:ffff", "2001:db8:1:2::")]
    [InlineData("fd00:1:2:3:4:5:6:7", "fd00:1:2:3::")]
    [InlineData("::1", "::")]
    [InlineData("10.0.0.1", "10.0.0.1")]
    [InlineData("::ffff:10.0.0.1", "10.0.0.1")]
    [InlineData("fe80::1", "fe80::1")] // fe80::/64 is every host's on the link
    public void A_peer_counts_under_its_IPv6_64_or_its_IPv4_address(string address, string key) =>
        Assert.Equal(IPAddress.Parse(key), KeyOf(IPAddress.Parse(address)));

    [Fact]
    public void Many_addresses_of_one_64_are_one_key_and_neighbouring_64s_are_not()
    {
        var keys = Enumerable.Range(1, 1000).Select(i => KeyOf(IPAddress.Parse($"2001:db8:aa:bb:{i:x}::{i:x}"))).Distinct().ToArray();
        Assert.Equal(IPAddress.Parse("2001:db8:aa:bb::"), Assert.Single(keys));
        Assert.NotEqual(KeyOf(IPAddress.Parse("2001:db8:aa:bb::1")), KeyOf(IPAddress.Parse("2001:db8:aa:bc::1")));
        Assert.NotEqual(KeyOf(IPAddress.Parse("10.0.0.1")), KeyOf(IPAddress.Parse("10.0.0.2")));
    }

    private static IPAddress KeyOf(IPAddress address) => IpAddresses.RegistrationKeyOf(address, [Nat64Prefix.WellKnown]).Address;
}
