using System.Linq;
using System.Threading;
using System.Threading.Tasks;
using NetServer.Tests.Infrastructure;
using Xunit;

namespace NetServer.Tests.Tcp;

/// <summary>Regressions 4 and 5: a reconnect right after DisconnectAsync; the blocking Send on a connection that closes.</summary>
public partial class ReviewRegressionTests
{
    // --- 4. Reconnect at once after DisconnectAsync ---

    /// <summary>How the client connects again right after <c>DisconnectAsync()</c>.</summary>
    public enum Reconnect
    {
        ConnectAsync,
        AwaitedConnectAsync,
        Connect,
    }

    [Theory]
    [MemberData(nameof(Transports.All), MemberType = typeof(Transports))]
    public Task ConnectAsync_right_after_DisconnectAsync_starts_after_the_previous_OnDisconnected(TransportKind kind) =>
        ReconnectRightAfterDisconnectAsync(kind, Reconnect.ConnectAsync);

    [Theory]
    [MemberData(nameof(Transports.All), MemberType = typeof(Transports))]
    public Task Awaited_ConnectAsync_right_after_DisconnectAsync_starts_after_the_previous_OnDisconnected(TransportKind kind) =>
        ReconnectRightAfterDisconnectAsync(kind, Reconnect.AwaitedConnectAsync);

    [Theory]
    [MemberData(nameof(Transports.All), MemberType = typeof(Transports))]
    public Task Connect_right_after_DisconnectAsync_waits_for_the_previous_OnDisconnected(TransportKind kind) =>
        ReconnectRightAfterDisconnectAsync(kind, Reconnect.Connect);

    private static async Task ReconnectRightAfterDisconnectAsync(TransportKind kind, Reconnect reconnect)
    {
        const int Reconnects = 20;
        await using var harness = new ServerHarness(kind);
        Assert.True(harness.Start());
        var probe = new Probe();
        using var client = harness.CreateClient(probe);
        if (reconnect == Reconnect.Connect)
            Assert.True(await HarnessExtensions.RunBlocking(client.Connect).WaitAsync(s_timeout));
        else
            Assert.True(await client.ConnectAsync(CancellationToken.None).WaitAsync(s_timeout));

        // Still in flight when the disconnect starts: the old connection sends (and counts) for a while.
        var tail = new byte[2 * 1024 * 1024];
        for (var i = 0; i < Reconnects; i++)
        {
            Assert.True(client.SendAsync(tail));
            switch (reconnect)
            {
                case Reconnect.ConnectAsync:
                    Assert.True(client.DisconnectAsync());
                    Assert.True(client.ConnectAsync());
                    await Wait.UntilAsync(() => probe.Events.Count(static e => e == "connected") == i + 2 && client.IsConnected, "the reconnect");
                    break;
                case Reconnect.AwaitedConnectAsync:
                    Assert.True(client.DisconnectAsync());
                    Assert.True(await client.ConnectAsync(CancellationToken.None).WaitAsync(s_timeout));
                    break;
                default:
                    Assert.True(await HarnessExtensions.RunBlocking(() => client.DisconnectAsync() && client.Connect()).WaitAsync(s_timeout));
                    break;
            }

            // The counters are the new connection's alone.
            Assert.Equal(0, client.BytesSent);
            var fresh = new byte[1000 + i];
            Assert.True(client.SendAsync(fresh));
            await Wait.UntilAsync(() => client.BytesSent >= fresh.Length, "the new connection's send");
            Assert.Equal(fresh.Length, client.BytesSent);
        }

        Assert.True(await client.DisconnectAsync(CancellationToken.None).WaitAsync(s_timeout));

        // One connection at a time: each one's hooks, ending with OnDisconnected, before the next one's.
        Assert.Equal(Enumerable.Repeat(s_connectionEvents, Reconnects + 1).SelectMany(static e => e), probe.Events);
    }

    // --- 5. The blocking Send on a connection that closes before the kernel took the bytes ---

    [Theory]
    [MemberData(nameof(Transports.All), MemberType = typeof(Transports))]
    public Task Blocking_Send_returns_0_when_another_thread_disposes_the_connection(TransportKind kind) =>
        BlockingSendInterruptedAsync(kind, Interruption.DisposeFromAnotherThread);

    [Theory]
    [MemberData(nameof(Transports.All), MemberType = typeof(Transports))]
    public Task Blocking_Send_returns_0_when_the_peer_goes_away(TransportKind kind) =>
        BlockingSendInterruptedAsync(kind, Interruption.PeerCloses);

    [Theory]
    [MemberData(nameof(Transports.All), MemberType = typeof(Transports))]
    public Task Blocking_Send_returns_0_when_OnSent_disposes_the_connection_before_the_send_waits(TransportKind kind) =>
        BlockingSendInterruptedAsync(kind, Interruption.DisposeFromOnSent);

    /// <summary>What ends the connection while the blocking Send waits.</summary>
    public enum Interruption
    {
        DisposeFromAnotherThread,
        PeerCloses,
        DisposeFromOnSent,
    }

    private static async Task BlockingSendInterruptedAsync(TransportKind kind, Interruption interruption)
    {
        await using var harness = new ServerHarness(kind);
        if (interruption == Interruption.DisposeFromOnSent)
            harness.Probe.ConfigureSession = static probe => probe.Sent = static (c, _, _) => c.Dispose();
        Assert.True(harness.Start());
        var (peer, session, probe) = await harness.ConnectPeerAsync();
        using (peer)
        {
            // The peer does not read: the kernel takes part of the 8 MiB, the rest waits.
            var data = new byte[Big];
            var sending = HarnessExtensions.RunBlocking(() => session.Send(data));
            if (interruption != Interruption.DisposeFromOnSent)
            {
                await HarnessExtensions.WaitUntilStableAsync(() => session.BytesPending, "the session's BytesPending");
                Assert.False(sending.IsCompleted, "Send returned while the peer was not reading.");
                if (interruption == Interruption.DisposeFromAnotherThread)
                {
                    await HarnessExtensions.RunBlocking(() =>
                    {
                        session.Dispose();
                        return true;
                    }).WaitAsync(s_timeout);
                }
                else
                {
                    // Unread bytes make the close a reset (TCP); a Unix socket's sender gets EPIPE.
                    peer.Dispose();
                }
            }

            Assert.Equal(0, await sending.WaitAsync(s_timeout));
            Assert.True(session.BytesSent < Big, $"BytesSent is {session.BytesSent} of {Big}.");
            await probe.DisconnectedSignal.Task.WaitAsync(s_timeout);
        }
    }
}
