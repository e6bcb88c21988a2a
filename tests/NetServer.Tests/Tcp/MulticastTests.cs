using System;
using System.Collections.Generic;
using System.Linq;
using System.Net.Sockets;
using System.Threading.Tasks;
using NetServer.Tests.Infrastructure;
using Xunit;
using Xunit.Abstractions;

namespace NetServer.Tests.Tcp;

/// <summary>
/// Multicast shares one pooled copy of the payload between all sessions; a session whose queue
/// cannot take it is disconnected (SendBufferFull) while the others go on; MulticastAsync waits.
/// </summary>
public class MulticastTests(ITestOutputHelper output)
{
    private const int ManySessions = 2000;
    private const int BigPayload = 64 * 1024;
    private const int Message = 16 * 1024;
    private const int Messages = 1000;
    private const int SlowLimit = 64 * 1024;

    [Theory]
    [MemberData(nameof(Transports.All), MemberType = typeof(Transports))]
    public async Task Multicast_to_2000_sessions_delivers_intact_and_copies_the_payload_once(TransportKind kind)
    {
        await using var harness = new ServerHarness(kind);
        Assert.True(harness.Start());
        var peers = new List<Socket>(ManySessions);
        try
        {
            // Connect in batches, well inside the listen backlog.
            while (peers.Count < ManySessions)
            {
                var batch = Enumerable.Range(0, Math.Min(200, ManySessions - peers.Count)).Select(_ => harness.ConnectRawAsync());
                peers.AddRange(await Task.WhenAll(batch));

                // A Unix socket refuses connects (EAGAIN) once the backlog is full: let the server catch up.
                await Wait.UntilAsync(() => harness.Probe.Sessions.Count >= peers.Count, "the server to accept the batch", TimeSpan.FromSeconds(30));
            }

            await harness.Probe.WaitForSessionsAsync(ManySessions, TimeSpan.FromSeconds(30));
            Assert.Equal(ManySessions, harness.ConnectedSessions);

            var payload = Framing.Pattern(0, BigPayload);
            var reads = peers.Select(peer => Wait.ReadExactlyAsync(peer, BigPayload, TimeSpan.FromSeconds(30))).ToArray();
            var rentedBefore = harness.Pool.RentedBytes;
            var rentsBefore = harness.Pool.Rents;

            Assert.True(harness.Multicast(payload));
            var received = await Task.WhenAll(reads).WaitAsync(TimeSpan.FromSeconds(30));
            foreach (var data in received)
                Assert.Equal(payload, data);

            var rented = harness.Pool.RentedBytes - rentedBefore;
            var rents = harness.Pool.Rents - rentsBefore;
            output.WriteLine($"multicast of {BigPayload} bytes to {ManySessions} sessions rented {rented} bytes in {rents} rents");

            // One shared copy (a per-session copy would be 2000 x 64 KiB = 125 MiB).
            Assert.True(rented < 4 * BigPayload, $"The multicast rented {rented} bytes in {rents} rents: the payload was copied per session.");
            Assert.Equal(0, harness.BytesPending);
            Assert.Equal((long)ManySessions * BigPayload, harness.BytesSent);
        }
        finally
        {
            foreach (var peer in peers)
                peer.Dispose();
        }
    }

    [Theory]
    [MemberData(nameof(Transports.All), MemberType = typeof(Transports))]
    public async Task Multicast_disconnects_a_session_whose_queue_is_full_and_the_others_keep_receiving(TransportKind kind)
    {
        await using var harness = new ServerHarness(kind);
        Assert.True(harness.Start());
        var (slowPeer, slow, slowProbe, fast) = await ConnectSlowAndFastAsync(harness);
        try
        {
            const long total = (long)Messages * Message;
            var reads = fast.Select(f => Wait.ReadExactlyAsync(f.Peer, (int)total, TimeSpan.FromSeconds(30))).ToArray();
            var message = new byte[Message];
            int? disconnectedAt = null;
            for (var i = 0; i < Messages; i++)
            {
                Framing.FillPattern(message, (long)i * Message);
                Assert.True(harness.Multicast(message));
                // The multicast marks the session closed synchronously; its hooks run later on the pool.
                if (disconnectedAt is null && !slow.IsConnected)
                    disconnectedAt = i;
            }

            Assert.Equal(DisconnectReason.SendBufferFull, await slowProbe.DisconnectedSignal.Task.WaitAsync(Wait.Default));
            Assert.Equal(DisconnectReason.SendBufferFull, slow.DisconnectReason);
            output.WriteLine($"the slow session was disconnected by message {disconnectedAt} of {Messages}");
            Assert.True(disconnectedAt < Messages - 10, "The slow session was not disconnected until the very end: nothing shows the others kept receiving.");

            // Every other session got every message, in order, and is still connected.
            foreach (var data in await Task.WhenAll(reads).WaitAsync(TimeSpan.FromSeconds(30)))
                Assert.Equal(-1, Framing.FindPatternMismatch(data, 0));
            foreach (var (_, session, probe) in fast)
            {
                Assert.True(session.IsConnected);
                Assert.Equal(0, probe.DisconnectedCount);
            }

            // The slow peer got a clean prefix of the stream, then the end.
            byte[] got;
            try
            {
                got = await Wait.ReadToEndAsync(slowPeer);
            }
            catch (SocketException e) when (e.SocketErrorCode == SocketError.ConnectionReset)
            {
                got = [];
            }

            Assert.True(got.Length < total);
            Assert.Equal(-1, Framing.FindPatternMismatch(got, 0));
            Assert.Equal(0, slow.BytesPending);
        }
        finally
        {
            slowPeer.Dispose();
            foreach (var (peer, _, _) in fast)
                peer.Dispose();
        }
    }

    [Theory]
    [MemberData(nameof(Transports.All), MemberType = typeof(Transports))]
    public async Task MulticastAsync_waits_for_a_session_whose_queue_is_full_instead_of_disconnecting_it(TransportKind kind)
    {
        await using var harness = new ServerHarness(kind);
        Assert.True(harness.Start());
        var (slowPeer, slow, slowProbe, fast) = await ConnectSlowAndFastAsync(harness);
        try
        {
            // Fill the slow session's queue and the kernel buffers behind it first (the pattern from 0),
            // so the multicast (the pattern from `start` on) finds it full and it stays full.
            var start = await HarnessExtensions.FillToTheLimitAsync(slow);
            const long total = (long)Messages * Message;
            var reads = fast.Select(f => Wait.ReadExactlyAsync(f.Peer, (int)total, TimeSpan.FromSeconds(30))).ToArray();
            Task<byte[]>? slowRead = null;
            var message = new byte[Message];
            int? waitedAt = null;
            for (var i = 0; i < Messages; i++)
            {
                Framing.FillPattern(message, start + ((long)i * Message));
                var sending = harness.MulticastAsync(message);
                if (!sending.IsCompleted && waitedAt is null)
                {
                    // The slow session is full: the multicast waits for it rather than dropping it.
                    waitedAt = i;
                    var task = sending.AsTask();
                    await Task.Delay(200);
                    Assert.False(task.IsCompleted, "MulticastAsync stopped waiting although the slow peer reads nothing.");
                    Assert.True(slow.IsConnected);
                    Assert.Equal(0, slowProbe.DisconnectedCount);

                    slowRead = Wait.ReadExactlyAsync(slowPeer, (int)(start + total), TimeSpan.FromSeconds(30));
                    Assert.True(await task.WaitAsync(Wait.Default));
                }
                else
                {
                    Assert.True(await sending.AsTask().WaitAsync(Wait.Default));
                }
            }

            output.WriteLine($"MulticastAsync first waited at message {waitedAt} of {Messages}");
            Assert.NotNull(slowRead);

            // Everyone, the slow session included, got every message in order.
            Assert.Equal(0, waitedAt);
            foreach (var data in await Task.WhenAll(reads).WaitAsync(TimeSpan.FromSeconds(30)))
                Assert.Equal(-1, Framing.FindPatternMismatch(data, start));
            Assert.Equal(-1, Framing.FindPatternMismatch(await slowRead.WaitAsync(TimeSpan.FromSeconds(30)), 0));
            Assert.Equal(0, slowProbe.DisconnectedCount);
            Assert.All(fast, f => Assert.Equal(0, f.Probe.DisconnectedCount));
        }
        finally
        {
            slowPeer.Dispose();
            foreach (var (peer, _, _) in fast)
                peer.Dispose();
        }
    }

    /// <summary>One session with a small send limit whose peer will not read, and three with no limit.</summary>
    private static async Task<(Socket SlowPeer, StreamSession Slow, Probe SlowProbe, List<(Socket Peer, StreamSession Session, Probe Probe)> Fast)> ConnectSlowAndFastAsync(ServerHarness harness)
    {
        var (slowPeer, slow, slowProbe) = await harness.ConnectPeerAsync();
        slow.OptionSendBufferLimit = SlowLimit;
        var fast = new List<(Socket, StreamSession, Probe)>();
        for (var i = 0; i < 3; i++)
        {
            var connected = await harness.ConnectPeerAsync();
            connected.Session.OptionSendBufferLimit = 0;
            fast.Add(connected);
        }

        return (slowPeer, slow, slowProbe, fast);
    }
}
