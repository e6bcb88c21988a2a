using System;
using System.Diagnostics;
using System.Net.Sockets;
using System.Threading;
using System.Threading.Tasks;
using NetServer.Tests.Infrastructure;
using Xunit;

namespace NetServer.Tests.Streams;

/// <summary>
/// OptionSendStallTimeout: an echo session whose peer sends and never reads is paused by its send
/// backlog, then cut off once the peer took nothing for the timeout; a slow reader that takes bytes
/// now and then is not; with the timeout off the stalled session stays, paused.
/// </summary>
public sealed class SendStallTests
{
    private static async Task<(ServerHarness Harness, Socket Peer, StreamSession Session, Probe Probe)> StalledEchoAsync(TransportKind kind, TimeSpan stall)
    {
        var harness = new ServerHarness(kind);
        harness.Pool.CaptureStacks = false;
        harness.Probe.ConfigureSession = probe =>
        {
            probe.Connected = session => session.OptionSendStallTimeout = stall;
            probe.Received = (session, buffer, offset, count) => session.SendAsync(buffer, offset, count);
        };
        Assert.True(harness.Start());
        var (peer, session, sessionProbe) = await harness.ConnectPeerAsync();
        peer.ReceiveBufferSize = 64 * 1024;

        // The peer writes and never reads: the echo backlog passes the high-water mark and pauses receiving.
        _ = Task.Run(async () =>
        {
            var chunk = new byte[64 * 1024];
            try
            {
                for (var i = 0; i < 512; i++)
                    await peer.SendAsync(chunk, SocketFlags.None);
            }
            catch (Exception e) when (e is SocketException or ObjectDisposedException)
            {
            }
        });
        await Wait.UntilAsync(() => session.IsReceivingPaused, "the send backlog to pause receiving");
        return (harness, peer, session, sessionProbe);
    }

    [Theory]
    [MemberData(nameof(Transports.Plain), MemberType = typeof(Transports))]
    public async Task A_peer_that_never_reads_is_cut_off_after_the_stall_timeout(TransportKind kind)
    {
        // The stall's clock starts at the server's last send that made progress: after the peer's
        // first write, but before the pause the test sees (the backlog grows to the high-water
        // mark once sends stop), so the cut-off is timed from before the peer wrote anything.
        var started = Stopwatch.StartNew();
        var (harness, peer, session, probe) = await StalledEchoAsync(kind, TimeSpan.FromSeconds(1));
        await using (harness)
        using (peer)
        {
            var reason = await probe.DisconnectedSignal.Task.WaitAsync(TimeSpan.FromSeconds(15));
            Assert.Equal(DisconnectReason.TimedOut, reason);
            Assert.IsType<TimeoutException>(session.DisconnectException);
            Assert.Contains("OptionSendStallTimeout", session.DisconnectException!.Message, StringComparison.Ordinal);
            Assert.True(started.Elapsed >= TimeSpan.FromSeconds(0.9), $"cut off {started.Elapsed.TotalMilliseconds:F0} ms after the peer began, before the 1-s timeout");

            // The server goes on serving others.
            var (other, _, _) = await harness.ConnectPeerAsync();
            using (other)
            {
                var ping = Framing.Pattern(0, 100);
                await other.SendAsync(ping, SocketFlags.None);
                Assert.Equal(ping, await Wait.ReadExactlyAsync(other, ping.Length));
            }
        }
    }

    [Theory]
    [MemberData(nameof(Transports.Plain), MemberType = typeof(Transports))]
    public async Task A_slow_reader_that_takes_bytes_now_and_then_is_not_cut_off(TransportKind kind)
    {
        var (harness, peer, session, probe) = await StalledEchoAsync(kind, TimeSpan.FromSeconds(3));
        await using (harness)
        using (peer)
        {
            // 5 s of reads of 512 KiB every 150 ms (about 3.4 MB/s): the server's sends keep
            // completing, so the 3-s timeout never passes. On the default transport an async send
            // reports its progress only when all of it (up to eight queue segments) went out; on a
            // busy machine the pauses stretch, and at half this pace (256 KiB, 2 s timeout) a
            // send of a Unix socket occasionally took longer than the timeout (CI).
            var buffer = new byte[64 * 1024];
            for (var i = 0; i < 33; i++)
            {
                await Task.Delay(150);
                for (var read = 0; read < 512 * 1024;)
                {
                    var got = await peer.ReceiveAsync(buffer, SocketFlags.None).WaitAsync(TimeSpan.FromSeconds(5));
                    Assert.True(got > 0, $"the server closed a slow reader ({session.DisconnectException?.Message})");
                    read += got;
                }
            }

            Assert.False(probe.DisconnectedSignal.Task.IsCompleted, $"a slow reader was cut off ({session.DisconnectException?.Message})");
            Assert.True(session.IsConnected);
        }
    }

    [Theory]
    [MemberData(nameof(Transports.Plain), MemberType = typeof(Transports))]
    public async Task With_the_timeout_off_a_stalled_session_stays_paused(TransportKind kind)
    {
        var (harness, peer, session, probe) = await StalledEchoAsync(kind, Timeout.InfiniteTimeSpan);
        await using (harness)
        using (peer)
        {
            await Task.Delay(TimeSpan.FromSeconds(2.5));
            Assert.False(probe.DisconnectedSignal.Task.IsCompleted);
            Assert.True(session.IsConnected && session.IsReceivingPaused);
        }
    }

    [Fact]
    public void The_timeout_defaults_to_60_seconds_and_refuses_zero()
    {
        using var server = new TcpServer(System.Net.IPAddress.Loopback, 0);
        var session = new TcpSession(server);
        Assert.Equal(TimeSpan.FromSeconds(60), session.OptionSendStallTimeout);
        Assert.Throws<ArgumentOutOfRangeException>(() => session.OptionSendStallTimeout = TimeSpan.Zero);
    }
}
