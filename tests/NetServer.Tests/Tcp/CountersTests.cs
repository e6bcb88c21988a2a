using System;
using System.Collections.Generic;
using System.Linq;
using System.Net.Sockets;
using System.Threading;
using System.Threading.Tasks;
using NetServer.Tests.Infrastructure;
using Xunit;

namespace NetServer.Tests.Tcp;

/// <summary>Byte counters of sessions, clients and the server are atomic and exact.</summary>
public class CountersTests
{
    private const int Clients = 16;
    private const int ThreadsPerClient = 3;
    private const int QueuedPerSession = 12 * 1024 * 1024;
    private const int Chunk = 64 * 1024;

    private static readonly byte[] s_zeros = new byte[8192];

    [Theory]
    [MemberData(nameof(Transports.All), MemberType = typeof(Transports))]
    public async Task Sent_and_received_counters_are_exact_across_many_connections_and_threads(TransportKind kind)
    {
        await using var harness = new ServerHarness(kind);
        harness.Probe.ConfigureSession = probe =>
        {
            // Echo everything; no limit, so no echo is ever refused.
            probe.Connected = session => session.OptionSendBufferLimit = 0;
            probe.Received = (session, buffer, offset, size) => Assert.True(session.SendAsync(buffer, offset, size));
        };
        Assert.True(harness.Start());

        var clients = new List<(StreamClient Client, Probe Probe, long Total)>();
        try
        {
            for (var i = 0; i < Clients; i++)
            {
                var probe = new Probe();
                var client = harness.CreateClient(probe);
                clients.Add((client, probe, 256 * 1024 + (i * 7919)));
                Assert.True(await client.ConnectAsync(CancellationToken.None).WaitAsync(Wait.Default));
            }

            await harness.Probe.WaitForSessionsAsync(Clients);

            // Every client sends its total from several threads at once, in random pieces.
            var senders = new List<Task>();
            foreach (var (client, _, total) in clients)
            {
                for (var t = 0; t < ThreadsPerClient; t++)
                {
                    var share = (total / ThreadsPerClient) + (t == 0 ? total % ThreadsPerClient : 0);
                    var seed = senders.Count;
                    senders.Add(Task.Run(async () =>
                    {
                        var random = new Random(seed);
                        var left = share;
                        while (left > 0)
                        {
                            var size = (int)Math.Min(random.Next(1, s_zeros.Length + 1), left);
                            Assert.True(await client.SendAsync(s_zeros.AsMemory(0, size)));
                            left -= size;
                        }
                    }));
                }
            }

            await Task.WhenAll(senders).WaitAsync(TimeSpan.FromSeconds(30));
            foreach (var (_, probe, total) in clients)
                await Wait.UntilAsync(() => probe.ReceivedBytes >= total, "every echo to arrive");
            await Wait.UntilAsync(() => harness.BytesPending == 0, "the server's queues to drain");

            long grand = 0;
            foreach (var (client, probe, total) in clients)
            {
                Assert.Equal(total, probe.ReceivedBytes);
                Assert.Equal(total, client.BytesSent);
                Assert.Equal(total, client.BytesReceived);
                Assert.Equal(0, client.BytesPending);
                grand += total;
            }

            foreach (var id in harness.Probe.Sessions.Keys)
            {
                var session = harness.FindSession(id)!;
                Assert.Equal(session.BytesReceived, session.BytesSent);
                Assert.Equal(0, session.BytesPending);
                Assert.Contains(session.BytesReceived, clients.Select(c => c.Total));
            }

            Assert.Equal(grand, harness.BytesReceived);
            Assert.Equal(grand, harness.BytesSent);
            Assert.Equal(0, harness.BytesPending);
        }
        finally
        {
            foreach (var (client, _, _) in clients)
                client.Dispose();
        }
    }

    [Theory]
    [MemberData(nameof(Transports.All), MemberType = typeof(Transports))]
    public async Task Server_BytesPending_is_the_sum_of_the_sessions_and_drops_to_zero(TransportKind kind)
    {
        await using var harness = new ServerHarness(kind);
        Assert.True(harness.Start());

        var peers = new List<(Socket Peer, StreamSession Session, Probe Probe)>();
        try
        {
            for (var i = 0; i < 3; i++)
                peers.Add(await harness.ConnectPeerAsync());

            // Queue far more than the kernel buffers hold, to peers that do not read.
            foreach (var (_, session, _) in peers)
                QueuePattern(session, QueuedPerSession);

            var sum = await HarnessExtensions.WaitUntilStableAsync(() => harness.BytesPending, "the server's BytesPending");
            Assert.Equal(peers.Sum(p => p.Session.BytesPending), sum);
            foreach (var (_, session, _) in peers)
            {
                Assert.True(session.BytesPending > 0, "The kernel took everything: nothing is pending.");
                Assert.Equal(QueuedPerSession, session.BytesPending + session.BytesSent);
            }

            // Disposing a session drops its queued bytes: they leave the pending counts.
            var (droppedPeer, dropped, droppedProbe) = peers[2];
            dropped.Dispose();
            Assert.Equal(DisconnectReason.Disposed, await droppedProbe.DisconnectedSignal.Task.WaitAsync(Wait.Default));
            Assert.Equal(0, dropped.BytesPending);
            Assert.Equal(peers[0].Session.BytesPending + peers[1].Session.BytesPending, harness.BytesPending);

            // The other peers read everything, intact: the pending counts go back to exactly 0.
            var reads = peers.Take(2).Select(p => Wait.ReadExactlyAsync(p.Peer, QueuedPerSession, TimeSpan.FromSeconds(30))).ToArray();
            foreach (var data in await Task.WhenAll(reads).WaitAsync(TimeSpan.FromSeconds(30)))
                Assert.Equal(-1, Framing.FindPatternMismatch(data, 0));
            await Wait.UntilAsync(() => harness.BytesPending == 0, "the server's BytesPending to reach 0");
            foreach (var (_, session, _) in peers.Take(2))
            {
                Assert.Equal(0, session.BytesPending);
                Assert.Equal(QueuedPerSession, session.BytesSent);
            }

            Assert.Equal((2L * QueuedPerSession) + dropped.BytesSent, harness.BytesSent);
            Assert.Equal(0, harness.BytesPending);
        }
        finally
        {
            foreach (var (peer, _, _) in peers)
                peer.Dispose();
        }
    }

    [Theory]
    [MemberData(nameof(Transports.All), MemberType = typeof(Transports))]
    public async Task BytesPending_drops_to_zero_when_a_graceful_close_times_out_and_when_the_server_stops(TransportKind kind)
    {
        await using var harness = new ServerHarness(kind);
        Assert.True(harness.Start());

        var peers = new List<(Socket Peer, StreamSession Session, Probe Probe)>();
        try
        {
            for (var i = 0; i < 3; i++)
                peers.Add(await harness.ConnectPeerAsync());
            foreach (var (_, session, _) in peers)
                QueuePattern(session, QueuedPerSession);
            await HarnessExtensions.WaitUntilStableAsync(() => harness.BytesPending, "the server's BytesPending");

            // A graceful disconnect whose bytes the peer never takes gives up after the timeout.
            var (_, lingering, lingeringProbe) = peers[0];
            lingering.OptionDisconnectTimeout = TimeSpan.FromMilliseconds(300);
            Assert.True(await HarnessExtensions.RunBlocking(lingering.Disconnect).WaitAsync(Wait.Default));
            await lingeringProbe.DisconnectedSignal.Task.WaitAsync(Wait.Default); // the reason is StopDisposeTests' business
            Assert.Equal(0, lingering.BytesPending);
            Assert.Equal(peers[1].Session.BytesPending + peers[2].Session.BytesPending, harness.BytesPending);

            // Stopping drops the rest.
            Assert.True(await HarnessExtensions.RunBlocking(harness.Stop).WaitAsync(Wait.Default));
            foreach (var (_, session, probe) in peers.Skip(1))
            {
                Assert.Equal(DisconnectReason.ServerStopped, await probe.DisconnectedSignal.Task.WaitAsync(Wait.Default));
                Assert.Equal(0, session.BytesPending);
            }

            Assert.Equal(0, harness.BytesPending);
            Assert.Equal(peers.Sum(p => p.Session.BytesSent), harness.BytesSent);
        }
        finally
        {
            foreach (var (peer, _, _) in peers)
                peer.Dispose();
        }
    }

    /// <summary>Queues <paramref name="total"/> bytes of the pattern on a session with no send limit.</summary>
    private static void QueuePattern(StreamSession session, int total)
    {
        session.OptionSendBufferLimit = 0;
        var chunk = new byte[Chunk];
        for (var position = 0; position < total; position += Chunk)
        {
            Framing.FillPattern(chunk, position);
            Assert.True(session.SendAsync(chunk));
        }
    }
}
