using System;
using System.Collections.Generic;
using System.Linq;
using System.Net.Sockets;
using System.Threading;
using System.Threading.Tasks;
using NetServer.Tests.Infrastructure;
using Xunit;

namespace NetServer.Tests.Tcp;

/// <summary>
/// Stop, Dispose and Disconnect never hang: not with megabytes queued to peers that do not read,
/// not with a thread blocked in the synchronous Send, not with an awaitable send parked on a full
/// queue (it completes with false). Disconnect is idempotent; Restart reuses the endpoint.
/// </summary>
// Restarts bind the same port again: alone, see PortRebindCollection.
[Collection(nameof(PortRebindCollection))]
public class StopDisposeTests
{
    private const int SendLimit = 64 * 1024;
    private const int Queued = 8 * 1024 * 1024;
    private static readonly TimeSpan s_bound = TimeSpan.FromSeconds(10);

    /// <summary>Ways to shut a server down.</summary>
    public enum Shutdown
    {
        Stop,
        StopAsync,
        Dispose,
        DisposeAsync,
    }

    [Theory]
    [MemberData(nameof(Transports.All), MemberType = typeof(Transports))]
    public Task Server_Stop_returns_promptly_while_sessions_are_stuck_sending(TransportKind kind) =>
        ShutdownWhileStuckAsync(kind, Shutdown.Stop);

    [Theory]
    [MemberData(nameof(Transports.All), MemberType = typeof(Transports))]
    public Task Server_StopAsync_returns_promptly_while_sessions_are_stuck_sending(TransportKind kind) =>
        ShutdownWhileStuckAsync(kind, Shutdown.StopAsync);

    [Theory]
    [MemberData(nameof(Transports.All), MemberType = typeof(Transports))]
    public Task Server_Dispose_returns_promptly_while_sessions_are_stuck_sending(TransportKind kind) =>
        ShutdownWhileStuckAsync(kind, Shutdown.Dispose);

    [Theory]
    [MemberData(nameof(Transports.All), MemberType = typeof(Transports))]
    public Task Server_DisposeAsync_returns_promptly_while_sessions_are_stuck_sending(TransportKind kind) =>
        ShutdownWhileStuckAsync(kind, Shutdown.DisposeAsync);

    [Theory]
    [MemberData(nameof(Transports.All), MemberType = typeof(Transports))]
    public Task Client_Dispose_returns_promptly_while_stuck_sending(TransportKind kind) =>
        ClientCloseWhileStuckAsync(kind, client => HarnessExtensions.RunBlocking(() =>
        {
            client.Dispose();
            return true;
        }), DisconnectReason.Disposed);

    [Theory]
    [MemberData(nameof(Transports.All), MemberType = typeof(Transports))]
    public Task Client_DisposeAsync_returns_promptly_while_stuck_sending(TransportKind kind) =>
        ClientCloseWhileStuckAsync(kind, async client =>
        {
            await client.DisposeAsync();
            return true;
        }, DisconnectReason.Disposed);

    [Theory]
    [MemberData(nameof(Transports.All), MemberType = typeof(Transports))]
    public Task Client_Disconnect_returns_promptly_while_stuck_sending(TransportKind kind) =>
        ClientCloseWhileStuckAsync(kind, client =>
        {
            client.OptionDisconnectTimeout = TimeSpan.FromMilliseconds(300);
            return HarnessExtensions.RunBlocking(client.Disconnect);
        }, null);

    [Theory]
    [MemberData(nameof(Transports.All), MemberType = typeof(Transports))]
    public async Task A_graceful_Disconnect_the_peer_never_drains_ends_after_the_timeout_with_TimedOut(TransportKind kind)
    {
        await using var harness = new ServerHarness(kind);
        Assert.True(harness.Start());
        var (peer, session, probe) = await harness.ConnectPeerAsync();
        using (peer)
        {
            session.OptionSendBufferLimit = 0;
            session.OptionDisconnectTimeout = TimeSpan.FromMilliseconds(300);
            QueuePattern(session, Queued);
            await HarnessExtensions.WaitUntilStableAsync(() => session.BytesPending, "the session's BytesPending");

            var started = DateTime.UtcNow;
            Assert.True(await HarnessExtensions.RunBlocking(session.Disconnect).WaitAsync(s_bound));
            Assert.True(DateTime.UtcNow - started >= TimeSpan.FromMilliseconds(250), "Disconnect did not try to send the queued bytes first.");
            Assert.Equal(1, probe.DisconnectedCount); // Disconnect returns after OnDisconnected
            Assert.Equal(0, session.BytesPending);

            // DisconnectReason.TimedOut: "a graceful close whose queued bytes the peer never took".
            Assert.Equal(DisconnectReason.TimedOut, await probe.DisconnectedSignal.Task.WaitAsync(Wait.Default));
        }
    }

    [Theory]
    [MemberData(nameof(Transports.All), MemberType = typeof(Transports))]
    public async Task Disconnect_from_many_threads_at_once_disconnects_exactly_once(TransportKind kind)
    {
        await using var harness = new ServerHarness(kind);
        Assert.True(harness.Start());
        var (peer, session, probe) = await harness.ConnectPeerAsync();
        using (peer)
        {
            using var go = new ManualResetEventSlim();
            var calls = Enumerable.Range(0, 8).Select(_ => HarnessExtensions.RunBlocking(() =>
            {
                go.Wait(s_bound);
                return session.Disconnect();
            })).ToArray();

            // The peer closes once it read our end, as a client does: the graceful close then
            // completes at once instead of lingering for the disconnect timeout (5 s, half the
            // bound, which a loaded CI machine overran once).
            var peerCloses = Task.Run(async () =>
            {
                await Wait.ReadToEndAsync(peer);
                peer.Shutdown(System.Net.Sockets.SocketShutdown.Send);
            });
            go.Set();
            var results = await Task.WhenAll(calls).WaitAsync(s_bound);
            await peerCloses.WaitAsync(s_bound);

            Assert.Equal(1, results.Count(r => r));
            Assert.Equal(DisconnectReason.LocalDisconnect, await probe.DisconnectedSignal.Task.WaitAsync(Wait.Default));
            Assert.False(session.Disconnect());
            Assert.False(await session.DisconnectAsync().WaitAsync(s_bound));
            await Task.Delay(100);
            Assert.Equal(1, probe.DisconnectedCount);
        }
    }

    [Theory]
    [MemberData(nameof(Transports.All), MemberType = typeof(Transports))]
    public async Task Restart_reuses_the_endpoint_and_serves_again(TransportKind kind)
    {
        await using var harness = new ServerHarness(kind);
        harness.Probe.ConfigureSession = probe => probe.Received = (session, buffer, offset, size) => session.SendAsync(buffer, offset, size);
        Assert.True(harness.Start());
        var endpoint = harness.Endpoint;

        // A live session with traffic, so the old endpoint has connections on it when it closes.
        var (peer, _, probe) = await harness.ConnectPeerAsync();
        using (peer)
        {
            var data = Framing.Pattern(0, 1000);
            peer.Send(data);
            Assert.Equal(data, await Wait.ReadExactlyAsync(peer, data.Length));

            var restarted = await HarnessExtensions.RunBlocking(harness.Server.Restart).WaitAsync(s_bound);
            Assert.True(restarted);
            Assert.Equal(DisconnectReason.ServerStopped, await probe.DisconnectedSignal.Task.WaitAsync(Wait.Default));
            Assert.True(harness.IsStarted);
            Assert.Equal(endpoint.ToString(), harness.Endpoint.ToString());
            Assert.Equal(new[] { "started", "stopped", "started" }, harness.Probe.Events.Where(e => e is "started" or "stopped").ToArray());

            // The same endpoint serves a new connection.
            var (again, _, _) = await harness.ConnectPeerAsync();
            using (again)
            {
                again.Send(data);
                Assert.Equal(data, await Wait.ReadExactlyAsync(again, data.Length));
            }
        }
    }

    // --- Scenarios ---

    /// <summary>
    /// Three sessions stuck in three ways (megabytes queued to a peer that does not read; a thread
    /// blocked in Send; an awaitable send parked on a full queue), then the server is shut down
    /// <paramref name="how"/>: it must return promptly and release every stuck sender.
    /// </summary>
    private static async Task ShutdownWhileStuckAsync(TransportKind kind, Shutdown how)
    {
        await using var harness = new ServerHarness(kind);
        Assert.True(harness.Start());
        var peers = new List<(Socket Peer, StreamSession Session, Probe Probe)>();
        try
        {
            for (var i = 0; i < 3; i++)
                peers.Add(await harness.ConnectPeerAsync());

            var queued = peers[0].Session;
            queued.OptionSendBufferLimit = 0;
            QueuePattern(queued, Queued);

            var blocked = peers[1].Session;
            var big = Framing.Pattern(0, 2 * Queued);
            var blockedSend = HarnessExtensions.RunBlocking(() => blocked.Send(big));

            var parked = peers[2].Session;
            parked.OptionSendBufferLimit = SendLimit;
            await HarnessExtensions.FillToTheLimitAsync(parked);
            var parkedSend = parked.SendAsync(new byte[SendLimit].AsMemory()).AsTask();

            await HarnessExtensions.WaitUntilStableAsync(() => harness.BytesPending, "the server's BytesPending");
            Assert.False(blockedSend.IsCompleted, "The blocking Send returned although the peer reads nothing.");
            Assert.False(parkedSend.IsCompleted, "The awaitable send completed although the queue had no room.");

            var server = harness.Server;
            var stopping = how switch
            {
                Shutdown.Stop => HarnessExtensions.RunBlocking(harness.Stop),
                Shutdown.StopAsync => harness.StopAsync(),
                Shutdown.Dispose => HarnessExtensions.RunBlocking(() =>
                {
                    server.Dispose();
                    return true;
                }),
                _ => DisposeAsync(server),
            };
            Assert.True(await stopping.WaitAsync(s_bound));

            Assert.Equal(0, await blockedSend.WaitAsync(s_bound));
            Assert.False(await parkedSend.WaitAsync(s_bound));
            foreach (var (_, session, probe) in peers)
            {
                Assert.Equal(DisconnectReason.ServerStopped, await probe.DisconnectedSignal.Task.WaitAsync(Wait.Default));
                Assert.Equal(1, probe.DisconnectedCount);
                Assert.Equal(0, session.BytesPending);
            }

            Assert.False(harness.IsStarted);
            Assert.Equal(0, harness.ConnectedSessions);
            Assert.Equal(0, harness.BytesPending);
            Assert.Contains("stopped", harness.Probe.Events);
        }
        finally
        {
            foreach (var (peer, _, _) in peers)
                peer.Dispose();
        }
    }

    /// <summary>
    /// A client stuck in three ways at once (queue full towards a server that stopped reading, a
    /// thread blocked in Send, an awaitable send parked), then closed by <paramref name="close"/>.
    /// </summary>
    private static async Task ClientCloseWhileStuckAsync(TransportKind kind, Func<StreamClient, Task<bool>> close, DisconnectReason? expected)
    {
        await using var harness = new ServerHarness(kind);

        // The session stops reading (its first OnReceived blocks), so TCP flow control stalls the client.
        using var gate = new ManualResetEventSlim();
        harness.Probe.ConfigureSession = probe => probe.Received = (_, _, _, _) => gate.Wait(TimeSpan.FromSeconds(20));
        Assert.True(harness.Start());

        var probe = new Probe();
        var client = harness.CreateClient(probe);
        try
        {
            client.OptionSendBufferLimit = SendLimit;
            Assert.True(await client.ConnectAsync(CancellationToken.None).WaitAsync(Wait.Default));
            await HarnessExtensions.FillToTheLimitAsync(client);

            var big = Framing.Pattern(0, 1024 * 1024);
            var blockedSend = HarnessExtensions.RunBlocking(() => client.Send(big));
            var parkedSend = client.SendAsync(new byte[SendLimit].AsMemory()).AsTask();
            await Task.Delay(200);
            Assert.False(blockedSend.IsCompleted, "The blocking Send returned although the queue had no room.");
            Assert.False(parkedSend.IsCompleted, "The awaitable send completed although the queue had no room.");

            Assert.True(await close(client).WaitAsync(s_bound));
            Assert.Equal(0, await blockedSend.WaitAsync(s_bound));
            Assert.False(await parkedSend.WaitAsync(s_bound));
            var reason = await probe.DisconnectedSignal.Task.WaitAsync(Wait.Default);
            if (expected is not null)
                Assert.Equal(expected, reason);
            Assert.Equal(1, probe.DisconnectedCount);
            Assert.Equal(0, client.BytesPending);
            Assert.False(client.IsConnected);
        }
        finally
        {
            gate.Set();
            client.Dispose();
        }
    }

    private static async Task<bool> DisposeAsync(IAsyncDisposable server)
    {
        await server.DisposeAsync();
        return true;
    }

    /// <summary>Queues <paramref name="total"/> bytes of the pattern with the non-waiting send.</summary>
    private static void QueuePattern(StreamConnection connection, int total)
    {
        var chunk = new byte[64 * 1024];
        for (var position = 0; position < total; position += chunk.Length)
        {
            Framing.FillPattern(chunk, position);
            Assert.True(connection.SendAsync(chunk));
        }
    }
}
