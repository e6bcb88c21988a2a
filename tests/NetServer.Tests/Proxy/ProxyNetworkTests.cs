using System;
using System.Net;
using Xunit;

namespace NetServer.Tests.Proxy;

/// <summary>The trusted-source entries: addresses and CIDR networks, IPv4-mapped peers, bad entries.</summary>
public sealed class ProxyNetworkTests
{
    [Theory]
    [InlineData("10.0.0.0/8", "10.255.1.2", true)]
    [InlineData("10.0.0.0/8", "11.0.0.1", false)]
    [InlineData("192.168.4.0/22", "192.168.7.255", true)]
    [InlineData("192.168.4.0/22", "192.168.8.0", false)]
    [InlineData("127.0.0.1", "127.0.0.1", true)]
    [InlineData("127.0.0.1", "127.0.0.2", false)]
    [InlineData("127.0.0.0/8", "::ffff:127.0.0.9", true)]
    [InlineData("0.0.0.0/0", "8.8.8.8", true)]
    [InlineData("0.0.0.0/0", "::1", false)]
    [InlineData("fd00::/8", "fd12:3456::1", true)]
    [InlineData("fd00::/8", "fe80::1", false)]
    [InlineData("::1", "::1", true)]
    public void Contains(string network, string address, bool expected) =>
        Assert.Equal(expected, ProxyNetwork.Parse(network).Contains(IPAddress.Parse(address)));

    [Theory]
    [InlineData("")]
    [InlineData("10.0.0.0/")]
    [InlineData("10.0.0.0/33")]
    [InlineData("10.0.0.0/-1")]
    [InlineData("::1/129")]
    [InlineData("example.com")]
    [InlineData("010.0.0.0/8")] // IPAddress.TryParse: octal, 8.0.0.0/8
    [InlineData("172.16/12")] // IPAddress.TryParse: 172.0.0.16
    [InlineData("10.1/16")]
    [InlineData("0x0a.0.0.0/8")]
    [InlineData("167772160/8")]
    public void Malformed(string network) => Assert.Throws<FormatException>(() => ProxyNetwork.Parse(network));
}
