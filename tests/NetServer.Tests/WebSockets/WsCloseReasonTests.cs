using System;
using System.Net;
using System.Threading.Tasks;
using NetServer.Tests.Infrastructure;
using Xunit;

namespace NetServer.Tests.WebSockets;

/// <summary>Close reasons given as text: up to 123 bytes of UTF-8 go whole, one byte more is refused as out of range by every close method.</summary>
public sealed class WsCloseReasonTests
{
    [Fact]
    public void A_text_reason_over_123_bytes_of_UTF_8_is_refused_as_out_of_range_by_every_close_method_of_sessions_and_clients()
    {
        var reason = new string('é', 62); // 62 characters, 124 bytes
        using var server = new WsServer(IPAddress.Loopback, 0);
        using var session = new WsSession(server);
        using var client = new WsClient(IPAddress.Loopback, 1);
        using var secureServer = new WssServer(TestCertificates.ServerContext(), IPAddress.Loopback, 0);
        using var secureSession = new WssSession(secureServer);
        using var secureClient = new WssClient(TestCertificates.ClientContext(), IPAddress.Loopback, 1);

        Assert.Throws<ArgumentOutOfRangeException>(() => session.Close(4001, reason));
        Assert.Throws<ArgumentOutOfRangeException>(() => session.Close(4001, reason.AsSpan()));
        Assert.Throws<ArgumentOutOfRangeException>(() => session.SendClose(4001, reason));
        Assert.Throws<ArgumentOutOfRangeException>(() => session.SendCloseAsync(4001, reason));
        Assert.Throws<ArgumentOutOfRangeException>(() => client.Close(4001, reason));
        Assert.Throws<ArgumentOutOfRangeException>(() => client.CloseAsync(4001, reason));
        Assert.Throws<ArgumentOutOfRangeException>(() => client.CloseAsync(4001, reason.AsSpan()));
        Assert.Throws<ArgumentOutOfRangeException>(() => client.SendClose(4001, reason));
        Assert.Throws<ArgumentOutOfRangeException>(() => client.SendCloseAsync(4001, reason));
        Assert.Throws<ArgumentOutOfRangeException>(() => secureSession.Close(4001, reason));
        Assert.Throws<ArgumentOutOfRangeException>(() => secureSession.SendCloseAsync(4001, reason));
        Assert.Throws<ArgumentOutOfRangeException>(() => secureClient.CloseAsync(4001, reason));
        Assert.Throws<ArgumentOutOfRangeException>(() => secureClient.SendClose(4001, reason));
    }

    [Fact]
    public void CloseAll_refuses_a_bad_reason_whether_or_not_a_session_is_connected()
    {
        var reason = new string('é', 62); // 124 bytes
        using var server = new WsServer(IPAddress.Loopback, 0);
        using var secureServer = new WssServer(TestCertificates.ServerContext(), IPAddress.Loopback, 0);

        Assert.Throws<ArgumentOutOfRangeException>(() => server.CloseAll(4001, reason));
        Assert.Throws<ArgumentOutOfRangeException>(() => server.CloseAll(4001, new byte[124]));
        Assert.Throws<ArgumentOutOfRangeException>(() => secureServer.CloseAll(4001, reason));

        // A status that may not be sent is not an error (it goes out as a close without a status).
        Assert.False(server.CloseAll(WsCloseStatus.NoStatus));
        Assert.False(secureServer.CloseAll(100));

        // A valid close with nobody to close: false.
        Assert.False(server.CloseAll(4001, new string('€', 41)));
    }

    [Fact]
    public async Task A_text_reason_of_exactly_123_bytes_of_three_byte_characters_reaches_the_peer_whole()
    {
        var reason = new string('€', 41); // 123 bytes
        using var server = new WsInteropServer(secure: false, deflate: false);
        Assert.True(server.Start());
        using var client = new WsInteropClient(secure: false, server.Port);
        Assert.True(await client.ConnectAsync());

        Assert.True(await client.SendAsync("close 4001 " + reason));
        Assert.Equal((4001, reason), await client.Closed.Task.WaitAsync(WsInteropPeers.Timeout));
        await client.DisconnectedAsync();
        Assert.Empty(server.Errors);
    }
}
