using System;
using System.Collections.Concurrent;
using System.Collections.Generic;
using System.Diagnostics;
using System.Linq;
using System.Threading;
using System.Threading.Tasks;
using NetServer.Tests.Infrastructure;
using Xunit;

namespace NetServer.Tests.Tcp;

/// <summary>Reconnecting, also in a loop from OnDisconnected.</summary>
public partial class ClientTests
{
    // --- Reconnecting ---

    [Theory]
    [MemberData(nameof(Transports.All), MemberType = typeof(Transports))]
    public async Task Reconnect_and_ReconnectAsync_run_a_whole_connection_each(TransportKind kind)
    {
        await using var harness = new ServerHarness(kind);
        Assert.True(harness.Start());
        var probe = new Probe();
        using var client = harness.CreateClient(probe);
        Assert.False(client.Reconnect());
        Assert.False(client.ReconnectAsync());

        Assert.True(await client.ConnectAsync(CancellationToken.None).WaitAsync(s_timeout));
        var known = new List<Guid>();
        await NextSessionAsync(harness, known);

        Assert.True(await Task.Run(client.Reconnect).WaitAsync(s_timeout));
        Assert.True(client.IsConnected);
        Assert.Equal(Repeat(s_connectionEvents, 1).Concat(["connecting", "connected"]), probe.Events);
        await NextSessionAsync(harness, known);

        Assert.True(client.ReconnectAsync());
        await Wait.UntilAsync(() => probe.Events.Count(static e => e == "connected") == 3 && client.IsConnected, "the asynchronous reconnect");
        var (third, _) = await NextSessionAsync(harness, known);

        // The asynchronous reconnect starts the receive loop.
        var session = harness.FindSession(third)!;
        Assert.True(session.SendAsync(new byte[] { 42 }));
        await Wait.UntilAsync(() => probe.ReceivedBytes == 1, "data on the reconnected client");

        Assert.True(client.Disconnect());
        var (connected, failed) = AssertWholeAttempts(probe.Events);
        Assert.Equal(3, connected);
        Assert.Equal(0, failed);
        Assert.Equal(3, probe.DisconnectedCount);
        await Wait.UntilAsync(() => harness.ConnectedSessions == 0, "the server to drop every session");
        Assert.All(harness.Probe.Sessions.Values, static p => Assert.Equal(1, p.DisconnectedCount));
    }

    [Theory]
    [MemberData(nameof(Transports.All), MemberType = typeof(Transports))]
    public async Task Reconnect_loop_in_OnDisconnected_survives_a_server_that_drops_every_session(TransportKind kind)
    {
        const int Cycles = 50;
        await using var harness = new ServerHarness(kind);
        harness.Probe.ConfigureSession = static p => p.Connected = static c => c.Disconnect();
        Assert.True(harness.Start());

        var probe = new Probe();
        using var client = harness.CreateClient(probe);
        var reasons = new ConcurrentQueue<DisconnectReason>();
        var refused = 0;
        var maxNesting = 0;
        var maxFrames = 0;
        var done = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        probe.Disconnected = (c, reason) =>
        {
            reasons.Enqueue(reason);
            var nesting = ++t_disconnectedNesting;
            try
            {
                maxNesting = Math.Max(maxNesting, nesting);
                maxFrames = Math.Max(maxFrames, new StackTrace().FrameCount);
                if (probe.DisconnectedCount < Cycles)
                {
                    if (!((StreamClient)c).ConnectAsync())
                        Interlocked.Increment(ref refused);
                }
                else
                {
                    done.TrySetResult();
                }
            }
            finally
            {
                t_disconnectedNesting--;
            }
        };

        Assert.True(client.ConnectAsync());
        await done.Task.WaitAsync(TimeSpan.FromSeconds(30));

        // Over TLS the session closes before its handshake, which it abandons: the client's
        // handshake fails (the server hung up on its hello) instead of the connection ending after it.
        var expected = kind == TransportKind.Ssl ? DisconnectReason.HandshakeFailed : DisconnectReason.PeerClosed;
        Assert.Equal(0, refused);
        Assert.Equal(Repeat(s_connectionEvents, Cycles), probe.Events);
        Assert.All(reasons, r => Assert.Equal(expected, r));
        Assert.True(maxNesting == 1, $"OnDisconnected of a new connection ran nested inside the previous one's (depth {maxNesting}, {maxFrames} frames): the reconnect loop grows the stack.");
        Assert.False(client.IsConnected);

        await Wait.UntilAsync(() => harness.ConnectedSessions == 0, "the server to drop the last session");
        Assert.Equal(Cycles, harness.Probe.Sessions.Count);
        Assert.All(harness.Probe.Sessions.Values, static p => Assert.Equal(s_connectionEvents, p.Events));
    }

    [Theory]
    [MemberData(nameof(Transports.All), MemberType = typeof(Transports))]
    public async Task Immediate_reconnect_loop_against_a_closed_endpoint_does_not_recurse(TransportKind kind)
    {
        const int Attempts = 100;
        using var closed = new ClosedEndpoint(kind);
        var probe = new Probe();
        using var client = closed.CreateClient(probe);
        var reasons = new ConcurrentQueue<DisconnectReason>();
        var maxNesting = 0;
        var maxFrames = 0;
        var done = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        probe.Disconnected = (c, reason) =>
        {
            reasons.Enqueue(reason);
            var nesting = ++t_disconnectedNesting;
            try
            {
                maxNesting = Math.Max(maxNesting, nesting);
                maxFrames = Math.Max(maxFrames, new StackTrace().FrameCount);
                if (probe.DisconnectedCount < Attempts)
                    ((StreamClient)c).ConnectAsync();
                else
                    done.TrySetResult();
            }
            finally
            {
                t_disconnectedNesting--;
            }
        };

        Assert.True(client.ConnectAsync());
        await done.Task.WaitAsync(TimeSpan.FromSeconds(30));

        Assert.Equal(Repeat(s_failedAttemptEvents, Attempts), probe.Events);
        Assert.All(reasons, static r => Assert.Equal(DisconnectReason.ConnectFailed, r));
        Assert.True(maxNesting == 1, $"A failed attempt's OnDisconnected ran nested inside the previous one's (depth {maxNesting}, {maxFrames} frames): a reconnect loop in OnDisconnected recurses and can overflow the stack.");
        await closed.Pool.AssertAllReturnedAsync();
    }

    [Theory]
    [MemberData(nameof(Transports.All), MemberType = typeof(Transports))]
    public async Task Reconnect_loop_in_OnDisconnected_survives_server_stop_and_restart(TransportKind kind)
    {
        const int Restarts = 3;
        await using var harness = new ServerHarness(kind);
        if (harness.Tcp is not null)
            harness.Tcp.OptionReuseAddress = true; // the port's old connections sit in TIME_WAIT
        Assert.True(harness.Start());

        var probe = new Probe();
        using var client = harness.CreateClient(probe);
        using var stopLoop = new CancellationTokenSource();
        var failed = 0;
        var delayed = 0;
        probe.Disconnected = (c, reason) =>
        {
            if (stopLoop.IsCancellationRequested)
                return;
            var self = (StreamClient)c;
            if (reason != DisconnectReason.ConnectFailed)
            {
                self.ConnectAsync();
                return;
            }

            // While the server is down, retry after a short pause (the chat client's pattern, without blocking a thread).
            Interlocked.Increment(ref failed);
            Interlocked.Increment(ref delayed);
            _ = Task.Delay(10).ContinueWith(
                _ =>
                {
                    if (!stopLoop.IsCancellationRequested)
                        self.ConnectAsync();
                    Interlocked.Decrement(ref delayed);
                },
                TaskScheduler.Default);
        };

        Assert.True(await client.ConnectAsync(CancellationToken.None).WaitAsync(s_timeout));
        for (var round = 1; round <= Restarts; round++)
        {
            var failedBefore = Volatile.Read(ref failed);
            Assert.True(await Task.Run(harness.Stop).WaitAsync(s_timeout));
            await Wait.UntilAsync(() => Volatile.Read(ref failed) > failedBefore, "a reconnect attempt refused while the server is down");
            Assert.True(harness.Start());
            await Wait.UntilAsync(() => client.IsConnected && harness.ConnectedSessions == 1, $"the client to reconnect after restart {round}");
        }

        await stopLoop.CancelAsync();
        await Wait.UntilAsync(() => Volatile.Read(ref delayed) == 0 && !client.IsConnecting, "the loop to settle");
        Assert.True(client.Disconnect());

        var (connected, refusedAttempts) = AssertWholeAttempts(probe.Events);
        Assert.Equal(Restarts + 1, connected);
        Assert.Equal(Volatile.Read(ref failed), refusedAttempts);
        Assert.Equal(connected + refusedAttempts, probe.DisconnectedCount);
        await Wait.UntilAsync(() => harness.ConnectedSessions == 0, "the server to drop the last session");
        Assert.All(harness.Probe.Sessions.Values, static p => Assert.Equal(1, p.DisconnectedCount));
    }
}
