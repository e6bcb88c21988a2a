using System;
using System.Collections.Generic;
using System.Linq;
using System.Net;
using System.Threading;
using System.Threading.Tasks;
using NetServer.Tests.Infrastructure;
using NetServer.Udp;
using Xunit;

namespace NetServer.Tests.Udp;

/// <summary>
/// Senders parked for room that give up: an application that retries with timeouts against a
/// stalled queue must not leave one waiter record behind per attempt, or the queue (and the check
/// every send makes of it) grows without bound.
/// </summary>
public partial class UdpSendQueueTests
{
    /// <summary>An awaitable send of datagram <paramref name="id"/> (100 bytes) that gives up after <paramref name="timeout"/>: true sent, false refused, null gave up.</summary>
    private static async Task<bool?> SendWithTimeoutAsync(ProbeUdpServer server, IPEndPoint target, int id, TimeSpan timeout)
    {
        using var cts = new CancellationTokenSource(timeout);
        try
        {
            return await server.SendAsync(target, UdpTest.Datagram(id, 100).AsMemory(), cts.Token);
        }
        catch (OperationCanceledException)
        {
            return null;
        }
    }

    /// <summary>Starts <paramref name="count"/> sends of datagrams 1000, 1001, ... that give up after 1 to <paramref name="longest"/> ms.</summary>
    private static Task<bool?>[] SendAllWithTimeouts(ProbeUdpServer server, IPEndPoint target, int count, int longest) =>
        Enumerable.Range(0, count)
            .Select(i => SendWithTimeoutAsync(server, target, 1000 + i, TimeSpan.FromMilliseconds(1 + (i % longest))))
            .ToArray();

    [Theory]
    [MemberData(nameof(UdpModes.All), MemberType = typeof(UdpModes))]
    public async Task Senders_that_time_out_leave_the_parked_queue_at_once_and_the_patient_ones_keep_their_order(UdpIo io)
    {
        const int limit = 1024;
        const int rounds = 20;
        const int perRound = 50;
        var pool = new LeakCheckingBufferPool();
        using var receiver = new RawUdp(IPAddress.Loopback);
        var (server, gate) = HeldServer(pool, limit, io);
        await using (server)
        {
            List<int> accepted;
            Task<bool> first;
            Task<bool> ahead;
            Task<bool> behind = Task.FromResult(false);
            try
            {
                first = await HoldFlusherAsync(server, gate, receiver.Endpoint);
                (accepted, _, _) = FillQueue(server, receiver.Endpoint);
                var channel = server.Channel!;

                // One sender waits for good ahead of the ones that give up, and (from the first round on) one behind them.
                ahead = server.SendAsync(receiver.Endpoint, UdpTest.Datagram(500, 600).AsMemory()).AsTask();
                for (var round = 0; round < rounds; round++)
                {
                    var attempts = SendAllWithTimeouts(server, receiver.Endpoint, perRound, 10);
                    if (round == 0)
                        behind = server.SendAsync(receiver.Endpoint, UdpTest.Datagram(501, 601).AsMemory()).AsTask();
                    var outcomes = await Task.WhenAll(attempts).WaitAsync(Wait.Default);
                    Assert.All(outcomes, outcome => Assert.Null(outcome));

                    // Every attempt that gave up has left the queue: only the two patient senders are parked.
                    Assert.Equal(2, channel.ParkedLength);
                }

                Assert.False(ahead.IsCompleted);
                Assert.False(behind.IsCompleted);
            }
            finally
            {
                gate.Open();
            }

            Assert.True(await first.WaitAsync(Wait.Default));
            Assert.True(await ahead.WaitAsync(Wait.Default));
            Assert.True(await behind.WaitAsync(Wait.Default));
            var expected = new[] { 0 }.Concat(accepted).Append(500).Append(501).ToList();
            var got = await receiver.ReceiveManyAsync(expected.Count);
            Assert.Equal(expected.Order(), got.Select(d => UdpTest.IdOf(d)).Order());
            await Wait.UntilAsync(() => server.BytesPending == 0 && server.DatagramsSent == expected.Count, "the queue to drain");
            Assert.Equal(expected.Select(id => 100L + id), server.Probe.SentSizes);
            Assert.Equal(0, server.Channel!.ParkedLength);
        }

        await pool.AssertAllReturnedAsync();
    }

    [Theory]
    [MemberData(nameof(UdpModes.All), MemberType = typeof(UdpModes))]
    public async Task Timeouts_racing_the_release_end_each_sender_once_and_send_exactly_the_released_datagrams(UdpIo io)
    {
        const int limit = 1024;
        const int senders = 200;
        var pool = new LeakCheckingBufferPool();
        using var receiver = new RawUdp(IPAddress.Loopback);
        var (server, gate) = HeldServer(pool, limit, io);
        await using (server)
        {
            List<int> accepted;
            Task<bool> first;
            Task<bool?>[] attempts;
            try
            {
                first = await HoldFlusherAsync(server, gate, receiver.Endpoint);
                (accepted, _, _) = FillQueue(server, receiver.Endpoint);
                attempts = SendAllWithTimeouts(server, receiver.Endpoint, senders, 30);
                await Task.Delay(10);
            }
            finally
            {
                gate.Open(); // the queue drains while the timeouts fire
            }

            Assert.True(await first.WaitAsync(Wait.Default));
            var outcomes = await Task.WhenAll(attempts).WaitAsync(Wait.Default);
            Assert.DoesNotContain(false, outcomes.Select(o => o ?? true)); // nothing refused: each was sent or gave up
            var released = Enumerable.Range(0, senders).Where(i => outcomes[i] == true).Select(i => 1000 + i);
            var expected = new[] { 0 }.Concat(accepted).Concat(released).ToList();
            var got = await receiver.ReceiveManyAsync(expected.Count);
            Assert.Equal(expected.Order(), got.Select(d => UdpTest.IdOf(d)).Order());
            await Wait.UntilAsync(() => server.BytesPending == 0, "the queue to drain");
            Assert.Equal(expected.Count, server.DatagramsSent);
            Assert.Equal(0, server.Channel!.ParkedLength);
        }

        await pool.AssertAllReturnedAsync();
    }

    [Theory]
    [MemberData(nameof(UdpModes.All), MemberType = typeof(UdpModes))]
    public async Task Timeouts_racing_a_stop_end_each_sender_once_and_leave_nothing_parked(UdpIo io)
    {
        const int limit = 1024;
        const int senders = 200;
        var pool = new LeakCheckingBufferPool();
        using var receiver = new RawUdp(IPAddress.Loopback);
        var (server, gate) = HeldServer(pool, limit, io);
        await using (server)
        {
            Task<bool> first;
            Task<bool> stopping;
            bool?[] outcomes;
            DatagramChannel channel;
            try
            {
                first = await HoldFlusherAsync(server, gate, receiver.Endpoint);
                FillQueue(server, receiver.Endpoint);
                channel = server.Channel!;
                var attempts = SendAllWithTimeouts(server, receiver.Endpoint, senders, 30);
                await Task.Delay(10);

                // The close fails whoever is still parked while the timeouts fire.
                stopping = server.StopAsync();
                outcomes = await Task.WhenAll(attempts).WaitAsync(Wait.Default);
            }
            finally
            {
                gate.Open();
            }

            Assert.True(await stopping.WaitAsync(Wait.Default));
            await first.WaitAsync(Wait.Default);
            Assert.DoesNotContain(true, outcomes.Select(o => o ?? false)); // nothing was sent: each was refused or gave up
            Assert.Equal(0, channel.ParkedLength);
            Assert.Equal(1, server.DatagramsSent);
        }

        await pool.AssertAllReturnedAsync();
    }
}
