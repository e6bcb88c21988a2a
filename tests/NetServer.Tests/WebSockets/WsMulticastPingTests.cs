using System;
using System.Net;
using NetServer.Tests.Infrastructure;
using Xunit;

namespace NetServer.Tests.WebSockets;

/// <summary>A multicast ping carries at most 125 bytes (RFC 6455 5.5) whichever overload gives it: a longer one would make every peer fail the connection with 1002.</summary>
public sealed class WsMulticastPingTests
{
    [Fact]
    public void A_ping_over_125_bytes_is_refused_as_bytes_and_as_text()
    {
        using var server = new WsServer(IPAddress.Loopback, 0);
        using var secureServer = new WssServer(TestCertificates.ServerContext(), IPAddress.Loopback, 0);
        var text = new string('é', 63); // 63 characters, 126 bytes

        Assert.Throws<ArgumentOutOfRangeException>(() => server.MulticastPing(new byte[126]));
        Assert.Throws<ArgumentOutOfRangeException>(() => server.MulticastPing(text));
        Assert.Throws<ArgumentOutOfRangeException>(() => server.MulticastPing(text.AsSpan()));
        Assert.Throws<ArgumentOutOfRangeException>(() => server.MulticastPing(new string('p', 126)));
        Assert.Throws<ArgumentOutOfRangeException>(() => secureServer.MulticastPing(text));

        // 125 bytes is a ping (not started: nothing to send it to).
        Assert.False(server.MulticastPing(new string('p', 125)));
    }
}
