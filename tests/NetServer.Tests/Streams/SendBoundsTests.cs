using System;
using System.Diagnostics;
using System.Linq;
using System.Threading;
using System.Threading.Tasks;
using NetServer.Tests.Infrastructure;
using Xunit;

namespace NetServer.Tests.Streams;

/// <summary>
/// Bounds of the send side found in review: cancelled parked senders leave the queue at once (a
/// stalled peer and an application that retries with timeouts cannot grow it), and the blocking
/// Send gives up when the kernel takes nothing for its send timeout.
/// </summary>
public sealed class SendBoundsTests
{
    private static readonly TimeSpan s_timeout = TimeSpan.FromSeconds(30);

    [Theory]
    [MemberData(nameof(Transports.All), MemberType = typeof(Transports))]
    public async Task Senders_that_time_out_while_parked_leave_the_queue_at_once(TransportKind kind)
    {
        await using var harness = new ServerHarness(kind);
        Assert.True(harness.Start());
        var (peer, session, _) = await harness.ConnectPeerAsync();
        using (peer)
        {
            // The peer reads nothing: once the queue is full every awaitable send parks.
            session.OptionSendBufferLimit = 64 * 1024;
            await HarnessExtensions.FillToTheLimitAsync(session);
            var connection = session.CurrentConnection!;

            // One sender that waits patiently, then rounds of senders that give up after a few ms.
            var patient = session.SendAsync(new byte[100].AsMemory(), CancellationToken.None).AsTask();
            var cancelled = 0;
            for (var round = 0; round < 20; round++)
            {
                var impatient = new Task<bool>[50];
                var tokens = new CancellationTokenSource[impatient.Length];
                for (var i = 0; i < impatient.Length; i++)
                {
                    tokens[i] = new CancellationTokenSource(TimeSpan.FromMilliseconds(1 + (i % 10)));
                    impatient[i] = session.SendAsync(new byte[100].AsMemory(), tokens[i].Token).AsTask();
                }

                // Each gives up (or, if the kernel took a little meanwhile, got in behind the patient one).
                foreach (var send in impatient)
                {
                    try
                    {
                        Assert.True(await send.WaitAsync(s_timeout));
                    }
                    catch (OperationCanceledException)
                    {
                        cancelled++;
                    }
                }

                foreach (var token in tokens)
                    token.Dispose();

                // At most the patient sender is left: the cancelled ones did not stay behind it.
                Assert.True(connection.ParkedSenders <= 1, $"{connection.ParkedSenders} senders still parked after round {round}.");
            }

            Assert.True(cancelled > 500, $"Only {cancelled} of 1000 sends gave up: the queue was not full.");
            Assert.True(session.IsConnected);
            _ = patient;
        }
    }

    [Theory]
    [InlineData(TransportKind.Uds)] // over TCP the kernel keeps taking a little now and then (window probes, buffer growth)
    public async Task A_blocking_Send_that_finds_no_room_for_the_whole_send_timeout_returns_0_and_queues_nothing(TransportKind kind)
    {
        await using var harness = new ServerHarness(kind);
        Assert.True(harness.Start());
        var (peer, session, _) = await harness.ConnectPeerAsync();
        using (peer)
        {
            session.OptionSendBufferLimit = 64 * 1024;
            await HarnessExtensions.FillToTheLimitAsync(session);
            session.Socket!.SendTimeout = 300;
            var pending = session.BytesPending;

            var watch = Stopwatch.StartNew();
            var sent = await HarnessExtensions.RunBlocking(() => session.Send(new byte[1000])).WaitAsync(s_timeout);
            Assert.Equal(0, sent);
            Assert.True(watch.Elapsed >= TimeSpan.FromMilliseconds(250), $"Send gave up after {watch.Elapsed}.");
            Assert.Equal(pending, session.BytesPending); // nothing queued
            Assert.True(session.IsConnected);
        }
    }

    [Theory]
    [InlineData(TransportKind.Uds)] // over TCP the kernel keeps taking a little now and then (window probes, buffer growth)
    public async Task A_blocking_Send_that_gave_up_while_parked_does_not_hold_up_later_sends(TransportKind kind)
    {
        await using var harness = new ServerHarness(kind);
        Assert.True(harness.Start());
        var (peer, session, _) = await harness.ConnectPeerAsync();
        using (peer)
        {
            session.OptionSendBufferLimit = 64 * 1024;
            var position = await HarnessExtensions.FillToTheLimitAsync(session);
            session.Socket!.SendTimeout = 300;
            Assert.Equal(0, await HarnessExtensions.RunBlocking(() => session.Send(new byte[1000])).WaitAsync(s_timeout));

            // The peer reads everything queued: the sender that gave up must not count as parked
            // any more, or every later send waits behind it (or is refused) for good.
            Assert.Equal(Framing.Pattern(0, (int)position), await Wait.ReadExactlyAsync(peer, (int)position));
            await Wait.UntilAsync(() => session.BytesPending == 0, "the queue to drain");
            var more = Framing.Pattern(position, 1000);
            Assert.True(session.SendAsync(more), "A send into the drained queue was refused.");
            Assert.True(await session.SendAsync(more.AsMemory()).AsTask().WaitAsync(s_timeout), "An awaitable send into the drained queue failed.");
            Assert.Equal(more.Concat(more), await Wait.ReadExactlyAsync(peer, 2 * more.Length));
            Assert.Equal(0, session.CurrentConnection!.ParkedSenders);
        }
    }

    [Theory]
    [MemberData(nameof(Transports.Plain), MemberType = typeof(Transports))]
    public async Task A_blocking_Send_whose_bytes_the_kernel_never_takes_closes_the_connection_with_TimedOut(TransportKind kind)
    {
        await using var harness = new ServerHarness(kind);
        Assert.True(harness.Start());
        var (peer, session, probe) = await harness.ConnectPeerAsync();
        using (peer)
        {
            // No send limit: the bytes are accepted, but the peer reads nothing and the kernel
            // buffers are full, so they never go out.
            session.OptionSendBufferLimit = 0;
            session.Socket!.SendTimeout = 300;
            var sent = await HarnessExtensions.RunBlocking(() => session.Send(new byte[64 * 1024 * 1024])).WaitAsync(s_timeout);
            Assert.Equal(0, sent);
            Assert.Equal(DisconnectReason.TimedOut, await probe.DisconnectedSignal.Task.WaitAsync(s_timeout));
        }
    }
}

/// <summary>The idle timeout, on the shared clock.</summary>
public sealed class IdleTimeoutTests
{
    private static readonly TimeSpan s_timeout = TimeSpan.FromSeconds(30);

    [Theory]
    [MemberData(nameof(Transports.All), MemberType = typeof(Transports))]
    public async Task A_connection_on_which_nothing_moves_closes_with_IdleTimeout_and_traffic_keeps_it_open(TransportKind kind)
    {
        await using var harness = new ServerHarness(kind);
        harness.Probe.ConfigureSession = probe => probe.Connected = static session => session.OptionIdleTimeout = TimeSpan.FromMilliseconds(2500);
        Assert.True(harness.Start());

        var (busy, busySession, busyProbe) = await harness.ConnectPeerAsync();
        var (idle, _, idleProbe) = await harness.ConnectPeerAsync();
        using (busy)
        using (idle)
        {
            // One byte every 100 ms (a 25th of the timeout, so a loaded machine's late timers and a
            // starved thread pool in a busy test run do not matter) keeps the busy one open while
            // the idle one starts closing.
            var watch = Stopwatch.StartNew();
            var sinceLastByte = Stopwatch.StartNew();
            while (watch.Elapsed < TimeSpan.FromSeconds(4))
            {
                await busy.SendAsync(new byte[1], System.Net.Sockets.SocketFlags.None);
                sinceLastByte.Restart();
                await Task.Delay(100);
            }

            Assert.Contains("disconnecting", idleProbe.Events);
            Assert.True(busySession.IsConnected, $"Traffic did not keep the connection open: {busySession.DisconnectReason}, received {busySession.BytesReceived}.");

            // Quiet now: it starts closing too, never before its timeout (counted from its last byte,
            // which arrived after the last send).
            await Wait.UntilAsync(() => busyProbe.Events.Contains("disconnecting"), "the quiet connection to time out");
            Assert.True(sinceLastByte.Elapsed >= TimeSpan.FromMilliseconds(2500), $"Closing after {sinceLastByte.Elapsed} of quiet.");

            // The close is graceful (our end of stream first): it ends when the peers end theirs.
            idle.Shutdown(System.Net.Sockets.SocketShutdown.Send);
            busy.Shutdown(System.Net.Sockets.SocketShutdown.Send);
            Assert.Equal(DisconnectReason.IdleTimeout, await idleProbe.DisconnectedSignal.Task.WaitAsync(s_timeout));
            Assert.Equal(DisconnectReason.IdleTimeout, await busyProbe.DisconnectedSignal.Task.WaitAsync(s_timeout));
        }
    }
}
