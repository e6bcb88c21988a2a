using System;
using System.Linq;
using System.Net;
using NetServer.P2P.Internal;
using NetServer.P2P.Server;
using NetServer.Tests.Infrastructure;
using Xunit;

namespace NetServer.P2P.Tests.Review;

/// <summary>
/// Issue 19, what a review of the per-address registration limit left: translator prefixes other
/// than 64:ff9b::/96 (every IPv4 client behind one shared one /64), no cap on a /48 (65,536 /64s,
/// 65,536 keys), and 6to4 or NAT64 addresses of non-global IPv4 sharing that IPv4 host's key.
/// </summary>
public sealed class RegistrationLimitReviewTests
{
    /// <summary>RFC 6052 2.4: 192.0.2.33 under each prefix length.</summary>
    [Theory]
    [InlineData("2001:db8::/32", "2001:db8:c000:221::")]
    [InlineData("2001:db8:100::/40", "2001:db8:1c0:2:21::")]
    [InlineData("2001:db8:122::/48", "2001:db8:122:c000:2:2100::")]
    [InlineData("2001:db8:122:300::/56", "2001:db8:122:3c0:0:221::")]
    [InlineData("2001:db8:122:344::/64", "2001:db8:122:344:c0:2:2100:0")]
    [InlineData("2001:db8:122:344::/96", "2001:db8:122:344::192.0.2.33")]
    [InlineData("64:ff9b::/96", "64:ff9b::192.0.2.33")]
    public void The_IPv4_address_is_read_from_each_RFC_6052_layout(string prefix, string translated)
    {
        var translator = Parse(prefix);
        Span<byte> v4 = stackalloc byte[4];
        Assert.True(translator.TryExtract(IPAddress.Parse(translated).GetAddressBytes(), v4));
        Assert.Equal(IPAddress.Parse("192.0.2.33"), new IPAddress(v4));
        Assert.Equal(IPAddress.Parse(translated), translator.Embed(IPAddress.Parse("192.0.2.33").GetAddressBytes()));
        Assert.Equal(IPAddress.Parse("192.0.2.33"), KeyOf(translated, prefix).Address);
        Assert.Null(KeyOf(translated, prefix).Site);
        Assert.False(translator.TryExtract(IPAddress.Parse("2001:db9::1").GetAddressBytes(), v4));
    }

    [Fact]
    public void Clients_behind_a_local_use_translator_count_apart_once_its_prefix_is_configured()
    {
        // 198.51.100.1 and 203.0.113.7 under 64:ff9b:1:ab::/96, inside the local-use 64:ff9b:1::/48 (RFC 8215: any length inside it).
        const string a = "64:ff9b:1:ab::c633:6401", b = "64:ff9b:1:ab::cb00:7107", local = "64:ff9b:1:ab::/96";
        Assert.Equal(IPAddress.Parse("64:ff9b:1:ab::"), KeyOf(a).Address); // by default: one /64 for every IPv4 client
        Assert.Equal(KeyOf(a).Address, KeyOf(b).Address);
        Assert.Equal(IPAddress.Parse("198.51.100.1"), KeyOf(a, "64:ff9b::/96", local).Address);
        Assert.Equal(IPAddress.Parse("203.0.113.7"), KeyOf(b, "64:ff9b::/96", local).Address);
        // The whole local-use /48 as a /48 translator prefix (RFC 6052 2.2's /48 layout).
        Assert.Equal(IPAddress.Parse("198.51.100.1"), KeyOf("64:ff9b:1:c633:64:100::", "64:ff9b:1::/48").Address);
    }

    [Theory]
    [InlineData("2002:a00:1:7::1", "2002:a00:1:7::", "2002:a00:1::")] // 6to4 of 10.0.0.1
    [InlineData("2002:7f00:1:7::1", "2002:7f00:1:7::", "2002:7f00:1::")] // 6to4 of 127.0.0.1
    [InlineData("2002:c0a8:101::1", "2002:c0a8:101::", "2002:c0a8:101::")] // 6to4 of 192.168.1.1
    [InlineData("64:ff9b::10.0.0.1", "64:ff9b::", "64:ff9b::")] // RFC 6052 3.1: never under the well-known prefix
    [InlineData("64:ff9b::169.254.1.1", "64:ff9b::", "64:ff9b::")]
    [InlineData("2001:0:4136:e378:8000:63bf:f5ff:fffe", "2001:0:4136:e378::", "2001:0:4136::")] // Teredo, the client 10.0.0.1
    public void An_embedded_IPv4_address_that_is_not_global_counts_as_an_ordinary_IPv6_one(string address, string key, string site)
    {
        var counted = KeyOf(address, "64:ff9b::/96");
        Assert.Equal(IPAddress.Parse(key), counted.Address);
        Assert.Equal(IPAddress.Parse(site), counted.Site);
    }

    /// <summary>An operator's prefix may carry private IPv4 (RFC 6052 restricts only the well-known one): one key per host, none shared with the bare IPv4 address.</summary>
    [Fact]
    public void A_private_IPv4_client_behind_an_operators_translator_counts_under_its_translated_address()
    {
        var first = KeyOf("2001:db8:122:344::10.0.0.1", "2001:db8:122:344::/96");
        var second = KeyOf("2001:db8:122:344::10.0.0.2", "2001:db8:122:344::/96");
        Assert.Equal(IPAddress.Parse("2001:db8:122:344::10.0.0.1"), first.Address);
        Assert.NotEqual(first.Address, second.Address);
        Assert.NotEqual(IPAddress.Parse("10.0.0.1"), first.Address);
        Assert.Null(first.Site);
        // Its u octet and suffix, were they not zero, name the same host.
        Assert.Equal(IPAddress.Parse("2001:db8:122:a00:1::"), KeyOf("2001:db8:122:a00:5501:ff:1:2", "2001:db8:122::/48").Address);
    }

    [Theory]
    [InlineData("2001:db8:aa:bb::1", "2001:db8:aa::")]
    [InlineData("2001:db8:aa:ffff:1:2:3:4", "2001:db8:aa::")]
    [InlineData("fd12:3456:789a:1::1", "fd12:3456:789a::")]
    public void An_IPv6_64_is_counted_under_its_48(string address, string site) =>
        Assert.Equal(IPAddress.Parse(site), KeyOf(address).Site);

    [Theory]
    [InlineData("198.51.100.1")]
    [InlineData("::ffff:198.51.100.1")]
    [InlineData("fe80::1")]
    [InlineData("2002:c633:6401:1::1")]
    [InlineData("64:ff9b::198.51.100.1")]
    public void IPv4_and_link_local_sources_have_no_site(string address) => Assert.Null(KeyOf(address).Site);

    [Fact]
    public void The_48_cap_refuses_a_new_64_of_a_full_site_and_a_departure_frees_its_place()
    {
        var counts = new RegistrationCounts();
        var keys = Enumerable.Range(1, 4).Select(i => KeyOf($"2001:db8:aa:{i:x}::1")).ToArray();
        Assert.True(counts.TryAdd(keys[0], maxPerAddress: 2, maxPerSite: 3));
        Assert.True(counts.TryAdd(keys[0], 2, 3));
        Assert.False(counts.TryAdd(keys[0], 2, 3)); // the /64's limit
        Assert.True(counts.TryAdd(keys[1], 2, 3));
        Assert.False(counts.TryAdd(keys[2], 2, 3)); // a fresh /64, but the /48 is full
        Assert.Equal(0, counts.OfAddress(keys[2].Address));
        Assert.Equal(3, counts.OfSite(keys[2].Site!));
        Assert.True(counts.TryAdd(KeyOf("2001:db8:ab::1"), 2, 3)); // the next /48

        counts.Remove(keys[0]);
        Assert.True(counts.TryAdd(keys[3], 2, 3));
        Assert.Equal(3, counts.OfSite(keys[3].Site!));
        counts.Remove(keys[0]);
        counts.Remove(keys[1]);
        counts.Remove(keys[3]);
        Assert.Equal(0, counts.OfSite(keys[3].Site!));
        Assert.Equal(0, counts.OfAddress(keys[0].Address));
    }

    [Fact]
    public void The_48_cap_leaves_IPv4_sources_alone()
    {
        var counts = new RegistrationCounts();
        for (var i = 0; i < 10; i++)
            Assert.True(counts.TryAdd(KeyOf("198.51.100.1"), maxPerAddress: 0, maxPerSite: 1));
        for (var i = 0; i < 10; i++)
            Assert.True(counts.TryAdd(KeyOf($"64:ff9b::198.51.100.{i + 2}"), maxPerAddress: 0, maxPerSite: 1));
        Assert.Equal(10, counts.OfAddress(IPAddress.Parse("198.51.100.1")));
    }

    [Theory]
    [InlineData("64:ff9b::/33", "lengths")]
    [InlineData("64:ff9b::/128", "lengths")]
    [InlineData("64:ff9b:0:0:100::/96", "u octet")]
    [InlineData("2001:db8:0:0:0:1::/64", "past its length")]
    [InlineData("2001:db8:0:0:ff00::/64", "u octet")]
    [InlineData("64:ff9b::1/96", "past its length")]
    [InlineData("64:ff9b:1::/32", "past its length")]
    [InlineData("192.0.2.0/24", "IPv4")]
    [InlineData("::ffff:192.0.2.0/96", "IPv4")]
    [InlineData("64:ff9b::", "with its length")]
    [InlineData("64:ff9b::/x", "with its length")]
    [InlineData("not an address/96", "with its length")]
    [InlineData(null, "with its length")]
    [InlineData("::/32", "::/16")]
    [InlineData("0:0:0:0:0:ffff::/96", "IPv4")]
    [InlineData("2001::/32", "Teredo")]
    [InlineData("2002:c000:200::/48", "6to4")]
    [InlineData("fe80::/64", "link-local")]
    [InlineData("febf::/32", "link-local")]
    [InlineData("ff0e::/32", "multicast")]
    [InlineData("64:ff9b::%3/96", "scope id")]
    public void The_relay_does_not_start_with_a_prefix_RFC_6052_does_not_define(string? prefix, string reason)
    {
        using var relay = new RelayServer(TestCertificates.ServerContext(), IPAddress.Loopback, 0, new RelayServerOptions { Nat64Prefixes = ["64:ff9b::/96", prefix!] });
        var refused = Assert.Throws<ArgumentException>(() => relay.Start());
        Assert.Equal(nameof(RelayServerOptions.Nat64Prefixes), refused.ParamName);
        Assert.Contains(reason, refused.Message, StringComparison.Ordinal);
        Assert.False(relay.IsStarted);
    }

    [Theory]
    [InlineData("2001:db8::/32")] // documentation, RFC 6052's examples: not Teredo's 2001:0::/32
    [InlineData("fd00:64::/96")] // a unique local (fc00::/7) network-specific prefix
    [InlineData("fec0::/64")] // the old site-local range: not link-local
    [InlineData("64:ff9b:1::/48")] // RFC 8215's local-use prefix
    [InlineData("2001:200::/40")] // another block of 2001::/23
    public void The_relay_starts_with_a_prefix_outside_the_ranges_it_reads_its_own_way(string prefix)
    {
        using var relay = new RelayServer(TestCertificates.ServerContext(), IPAddress.Loopback, 0, new RelayServerOptions { Nat64Prefixes = [prefix] });
        Assert.True(relay.Start());
        relay.Stop();
    }

    [Fact]
    public void The_relay_does_not_start_with_a_negative_site_limit_or_no_prefix_list()
    {
        using var negative = new RelayServer(TestCertificates.ServerContext(), IPAddress.Loopback, 0, new RelayServerOptions { MaxPeersPerIPv6Site = -1 });
        Assert.Equal(nameof(RelayServerOptions.MaxPeersPerIPv6Site), Assert.Throws<ArgumentOutOfRangeException>(() => negative.Start()).ParamName);
        using var none = new RelayServer(TestCertificates.ServerContext(), IPAddress.Loopback, 0, new RelayServerOptions { Nat64Prefixes = null! });
        Assert.Equal(nameof(RelayServerOptions.Nat64Prefixes), Assert.Throws<ArgumentNullException>(() => none.Start()).ParamName);
    }

    [Fact]
    public void The_relay_reads_its_prefixes_at_start_and_a_later_change_waits_for_the_next()
    {
        var options = new RelayServerOptions();
        options.Nat64Prefixes.Add("64:ff9b:1::/48");
        using var relay = new RelayServer(TestCertificates.ServerContext(), IPAddress.Loopback, 0, options);
        Assert.True(relay.Start());
        options.Nat64Prefixes.Clear();
        Assert.Equal(new[] { "64:ff9b::/96", "64:ff9b:1::/48" }, relay.Limits.Translators.Select(t => t.ToString()));
        relay.Stop();
    }

    private static Nat64Prefix Parse(string text)
    {
        Assert.True(Nat64Prefix.TryParse(text, out var prefix, out var reason), reason);
        return prefix;
    }

    private static RegistrationKey KeyOf(string address, params string[] prefixes) =>
        IpAddresses.RegistrationKeyOf(IPAddress.Parse(address), (prefixes.Length == 0 ? ["64:ff9b::/96"] : prefixes).Select(Parse).ToArray());
}
