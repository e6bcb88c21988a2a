using System;
using System.Globalization;
using System.Linq;
using System.Threading.Tasks;
using NetServer.Tests.Infrastructure;
using Xunit;

namespace NetServer.Tests.WebSockets;

/// <summary>Our WsClient against Kestrel's WebSockets (benchmarks/KestrelReference's /ws echo, run as a child process): a server we did not write.</summary>
public sealed class WsInteropKestrelTests
{
    [Net10Fact("kestrel-reference is built for net10.0 next to the tests.")]
    public async Task Our_client_talks_to_kestrel_which_declines_deflate_and_echoes_large_messages_in_parts()
    {
        await using var kestrel = ProgramProcess.Start("kestrel-reference", WsInteropPeers.Timeout, "--port", "0");
        var line = await kestrel.WaitForLineAsync("listening on http://");
        var port = int.Parse(line[(line.LastIndexOf(':') + 1)..].TrimEnd('/'), NumberStyles.None, CultureInfo.InvariantCulture);
        using var client = new WsInteropClient(secure: false, port) { Path = "/ws" };
        client.WsOptions.SubProtocols.Add("chat");
        client.WsOptions.Deflate = new WsDeflateOptions();

        // The /ws endpoint accepts without compression or a subprotocol: offered, declined, and the connection goes on without them.
        Assert.True(await client.ConnectAsync());
        Assert.False(client.IsWsCompressed);
        Assert.Null(client.WsSubProtocol);

        // Kestrel echoes frame by frame as it reads (64 KiB at a time): the large messages come back as continuation frames.
        await WsInteropScenarios.EchoAsync(client);

        Assert.True(client.SendPingAsync("kestrel?"));
        await Wait.UntilAsync(() => client.Pongs.Contains("kestrel?"), "Kestrel's pong", WsInteropPeers.Timeout);

        // Kestrel answers our close with our status and reason, then ends the connection.
        Assert.True(client.Close(WsCloseStatus.Normal, "bye kestrel"));
        Assert.Equal((WsCloseStatus.Normal, "bye kestrel"), await client.Closed.Task.WaitAsync(WsInteropPeers.Timeout));
        await client.DisconnectedAsync();
        Assert.Empty(client.Errors);
    }
}
