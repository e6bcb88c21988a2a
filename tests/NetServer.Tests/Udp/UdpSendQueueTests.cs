using System;
using System.Collections.Generic;
using System.Linq;
using System.Net;
using System.Net.Sockets;
using System.Threading;
using System.Threading.Tasks;
using NetServer.Tests.Infrastructure;
using Xunit;

namespace NetServer.Tests.Udp;

/// <summary>
/// The bounded send queue. On Linux loopback a UDP send never blocks: the loopback device hands
/// each datagram to the receiving socket at once and frees the sender's SO_SNDBUF charge as it
/// does (a receiver that does not read makes the kernel drop datagrams at the receiver, not
/// block the sender: 200,000 sends with SO_SNDBUF 4,608 bytes to a peer that never reads got no
/// EAGAIN). So a small OptionSendBufferSize and a silent peer cannot make datagrams queue. What
/// does, deterministically, is a send in flight: the one flusher is busy, here held inside OnSent
/// (which runs on the flusher), and every other send must queue behind it. That is the case the
/// queue exists for, and the tests fill it that way. OnSent reports datagrams in the order they
/// were handed to the kernel, so distinct sizes prove the queue's order without trusting the
/// kernel's delivery order. The queue is the same in both I/O modes (with OptionDedicatedThread the
/// flusher's sends are blocking calls, and the sender that finds the queue idle sends from its own
/// bytes), so every test runs in both; the slow-link tests show the kernel making a sender wait.
/// </summary>
public partial class UdpSendQueueTests
{
    /// <summary>Holds the first OnSent (the flusher) until opened, so every send meanwhile queues.</summary>
    private sealed class FlusherGate
    {
        private readonly object _lock = new();
        private bool _open;
        private int _armed = 1;

        /// <summary>Completes when the flusher is held.</summary>
        public TaskCompletionSource Holding { get; } = new(TaskCreationOptions.RunContinuationsAsynchronously);

        /// <summary>Called from OnSent: the first call waits (bounded) until <see cref="Open"/>.</summary>
        public void Hold()
        {
            if (Interlocked.Exchange(ref _armed, 0) == 0)
                return;
            Holding.TrySetResult();
            var deadline = DateTime.UtcNow + Wait.Default;
            lock (_lock)
            {
                while (!_open)
                {
                    var left = deadline - DateTime.UtcNow;
                    if (left <= TimeSpan.Zero || !Monitor.Wait(_lock, left))
                        return;
                }
            }
        }

        public void Open()
        {
            lock (_lock)
            {
                _open = true;
                Monitor.PulseAll(_lock);
            }
        }
    }

    /// <summary>A started server with a send limit of <paramref name="sendLimit"/> bytes whose first OnSent holds the flusher.</summary>
    private static (ProbeUdpServer Server, FlusherGate Gate) HeldServer(LeakCheckingBufferPool pool, int sendLimit, UdpIo io)
    {
        var gate = new FlusherGate();
        var server = new ProbeUdpServer(UdpTest.Loopback(AddressFamily.InterNetwork), pool)
        {
            Io = io,
            OptionSendBufferLimit = sendLimit,
            OptionSendBufferSize = 4096,
        };
        server.Probe.OnSend = (_, _, _) => gate.Hold();
        Assert.True(server.Start());
        return (server, gate);
    }

    /// <summary>Sends datagram 0 (100 bytes) from a pool thread, which becomes the flusher and is held in OnSent.</summary>
    private static async Task<Task<bool>> HoldFlusherAsync(ProbeUdpServer server, FlusherGate gate, IPEndPoint target)
    {
        var first = Task.Run(() => server.SendAsync(target, UdpTest.Datagram(0, 100)));
        await gate.Holding.Task.WaitAsync(Wait.Default);
        Assert.Equal(0, server.BytesPending);
        return first;
    }

    /// <summary>Queues datagrams 1, 2, ... (100 + id bytes each) until one is refused; returns the ids accepted and the refused datagram's size.</summary>
    private static (List<int> Accepted, long Bytes, int RefusedSize) FillQueue(ProbeUdpServer server, IPEndPoint target)
    {
        var accepted = new List<int>();
        long bytes = 0;
        for (var id = 1; id < 1000; id++)
        {
            var size = 100 + id;
            if (!server.SendAsync(target, UdpTest.Datagram(id, size)))
                return (accepted, bytes, size);
            accepted.Add(id);
            bytes += size;
        }

        Assert.Fail("The send queue never refused a datagram.");
        return default;
    }

    [Theory]
    [MemberData(nameof(UdpModes.All), MemberType = typeof(UdpModes))]
    public async Task A_full_queue_refuses_SendAsync_with_NoBufferSpaceAvailable_and_sends_the_rest_in_order(UdpIo io)
    {
        const int limit = 4096;
        var pool = new LeakCheckingBufferPool();
        using var receiver = new RawUdp(IPAddress.Loopback);
        var (server, gate) = HeldServer(pool, limit, io);
        await using (server)
        {
            List<int> accepted;
            Task<bool> first;
            try
            {
                first = await HoldFlusherAsync(server, gate, receiver.Endpoint);
                (accepted, var bytes, var refusedSize) = FillQueue(server, receiver.Endpoint);

                // The limit counts each datagram's bytes plus 64 of bookkeeping.
                var cost = bytes + (64L * accepted.Count);
                Assert.True(cost <= limit, $"{cost} bytes of queue cost passed the limit of {limit}.");
                Assert.True(cost + refusedSize + 64 > limit, $"A datagram of {refusedSize} bytes was refused with only {cost} of {limit} used.");
                Assert.Equal(bytes, server.BytesPending);
                Assert.Equal(1, server.Probe.ErrorCount(SocketError.NoBufferSpaceAvailable));

                // The other sends are refused the same way, and nothing of theirs is queued.
                Assert.False(server.SendAsync(receiver.Endpoint, UdpTest.Datagram(900, refusedSize)));
                Assert.False(server.SendAsync(receiver.Endpoint, UdpTest.Datagram(901, refusedSize), 0, refusedSize));
                Assert.Equal(0, server.Send(receiver.Endpoint, UdpTest.Datagram(902, refusedSize)));
                Assert.Equal(4, server.Probe.ErrorCount(SocketError.NoBufferSpaceAvailable));
                Assert.Equal(bytes, server.BytesPending);
            }
            finally
            {
                gate.Open();
            }

            Assert.True(await first.WaitAsync(Wait.Default));
            var expected = new[] { 0 }.Concat(accepted).ToList();
            var got = await receiver.ReceiveManyAsync(expected.Count);
            Assert.Equal(expected, got.Select(d => UdpTest.IdOf(d)).Order());

            await Wait.UntilAsync(() => server.BytesPending == 0 && server.DatagramsSent == expected.Count, "the queue to drain");
            Assert.Equal(expected.Select(id => 100L + id), server.Probe.SentSizes);
            Assert.Equal(expected.Count, server.DatagramsSent);
            Assert.Equal(expected.Sum(id => 100L + id), server.BytesSent);
            Assert.All(server.Probe.Errors, e => Assert.Equal(SocketError.NoBufferSpaceAvailable, e));
        }

        await pool.AssertAllReturnedAsync();
    }

    [Theory]
    [MemberData(nameof(UdpModes.All), MemberType = typeof(UdpModes))]
    public async Task A_send_in_flight_never_makes_SendAsync_fail_and_the_blocking_Send_waits_for_its_turn(UdpIo io)
    {
        const int queued = 300;
        var pool = new LeakCheckingBufferPool();
        using var receiver = new RawUdp(IPAddress.Loopback);
        var (server, gate) = HeldServer(pool, UdpPeer.DefaultSendBufferLimit, io);
        await using (server)
        {
            Task<bool> first;
            Task<long> blocking;
            try
            {
                first = await HoldFlusherAsync(server, gate, receiver.Endpoint);
                var bytes = 0L;
                for (var id = 1; id <= queued; id++)
                {
                    Assert.True(server.SendAsync(receiver.Endpoint, UdpTest.Datagram(id, 100 + id)), $"SendAsync {id} failed while a send was in flight.");
                    bytes += 100 + id;
                }

                Assert.Equal(bytes, server.BytesPending);

                // The blocking Send queues too, and returns only once its datagram went out.
                blocking = HarnessExtensions.RunBlocking(() => server.Send(receiver.Endpoint, UdpTest.Datagram(queued + 1, 101 + queued)));
                await Wait.UntilAsync(() => server.BytesPending == bytes + 101 + queued, "the blocking Send to queue");
                Assert.False(blocking.IsCompleted);
            }
            finally
            {
                gate.Open();
            }

            Assert.True(await first.WaitAsync(Wait.Default));
            Assert.Equal(101 + queued, await blocking.WaitAsync(Wait.Default));
            var got = await receiver.ReceiveManyAsync(queued + 2);
            Assert.Equal(Enumerable.Range(0, queued + 2), got.Select(d => UdpTest.IdOf(d)).Order());
            Assert.Equal(Enumerable.Range(0, queued + 2).Select(id => 100L + id), server.Probe.SentSizes);
            Assert.Equal(0, server.BytesPending);
            server.Probe.AssertNoErrors();
        }

        await pool.AssertAllReturnedAsync();
    }

    [Theory]
    [MemberData(nameof(UdpModes.All), MemberType = typeof(UdpModes))]
    public async Task The_awaitable_SendAsync_waits_for_room_and_completes_in_arrival_order(UdpIo io)
    {
        const int limit = 1024;
        var pool = new LeakCheckingBufferPool();
        using var receiver = new RawUdp(IPAddress.Loopback);
        var (server, gate) = HeldServer(pool, limit, io);
        await using (server)
        {
            List<int> accepted;
            Task<bool> first;
            var parked = new List<Task<bool>>();
            var parkedIds = new[] { 500, 501, 502, 503 };
            try
            {
                first = await HoldFlusherAsync(server, gate, receiver.Endpoint);
                (accepted, var bytes, _) = FillQueue(server, receiver.Endpoint);
                server.Probe.Errors.Clear();

                foreach (var id in parkedIds)
                    parked.Add(server.SendAsync(receiver.Endpoint, UdpTest.Datagram(id, 100 + id).AsMemory()).AsTask());
                Assert.All(parked, task => Assert.False(task.IsCompleted));
                Assert.Equal(bytes, server.BytesPending);

                // Parked senders go first: a small datagram that would fit is refused while they wait.
                Assert.False(server.SendAsync(receiver.Endpoint, UdpTest.Datagram(999, 4)));
                Assert.Equal(SocketError.NoBufferSpaceAvailable, Assert.Single(server.Probe.Errors));
            }
            finally
            {
                gate.Open();
            }

            Assert.True(await first.WaitAsync(Wait.Default));
            foreach (var task in parked)
                Assert.True(await task.WaitAsync(Wait.Default));

            var expected = new[] { 0 }.Concat(accepted).Concat(parkedIds).ToList();
            var got = await receiver.ReceiveManyAsync(expected.Count);
            Assert.Equal(expected.Order(), got.Select(d => UdpTest.IdOf(d)).Order());
            await Wait.UntilAsync(() => server.DatagramsSent == expected.Count, "every datagram to go out");
            Assert.Equal(expected.Select(id => 100L + id), server.Probe.SentSizes);
            Assert.Equal(0, server.BytesPending);
        }

        await pool.AssertAllReturnedAsync();
    }

    [Theory]
    [MemberData(nameof(UdpModes.All), MemberType = typeof(UdpModes))]
    public async Task A_cancelled_awaitable_send_leaves_nothing_queued(UdpIo io)
    {
        const int limit = 1024;
        var pool = new LeakCheckingBufferPool();
        using var receiver = new RawUdp(IPAddress.Loopback);
        var (server, gate) = HeldServer(pool, limit, io);
        await using (server)
        {
            List<int> accepted;
            Task<bool> first;
            Task<bool> behind;
            try
            {
                first = await HoldFlusherAsync(server, gate, receiver.Endpoint);
                (accepted, var bytes, _) = FillQueue(server, receiver.Endpoint);

                using var cts = new CancellationTokenSource();
                var cancelled = server.SendAsync(receiver.Endpoint, UdpTest.Datagram(600, 700).AsMemory(), cts.Token).AsTask();
                behind = server.SendAsync(receiver.Endpoint, UdpTest.Datagram(601, 701).AsMemory()).AsTask();
                Assert.False(cancelled.IsCompleted);
                cts.Cancel();
                await Assert.ThrowsAnyAsync<OperationCanceledException>(() => cancelled.WaitAsync(Wait.Default));
                Assert.False(behind.IsCompleted);
                Assert.Equal(bytes, server.BytesPending);

                // A token cancelled before the call cancels at once, even with room to spare.
                using var already = new CancellationTokenSource();
                already.Cancel();
                await Assert.ThrowsAnyAsync<OperationCanceledException>(() => server.SendAsync(receiver.Endpoint, new byte[] { 1, 2, 3, 4 }.AsMemory(), already.Token).AsTask());
                Assert.Equal(bytes, server.BytesPending);
            }
            finally
            {
                gate.Open();
            }

            Assert.True(await first.WaitAsync(Wait.Default));
            Assert.True(await behind.WaitAsync(Wait.Default));
            var expected = new[] { 0 }.Concat(accepted).Append(601).ToList();
            var got = await receiver.ReceiveManyAsync(expected.Count);
            Assert.Equal(expected.Order(), got.Select(d => UdpTest.IdOf(d)).Order());
            await Wait.UntilAsync(() => server.DatagramsSent == expected.Count && server.BytesPending == 0, "the queue to drain");
            Assert.Equal(expected.Select(id => 100L + id), server.Probe.SentSizes);
            Assert.DoesNotContain(700L, server.Probe.SentSizes);
        }

        await pool.AssertAllReturnedAsync();
    }

    [Theory]
    [MemberData(nameof(UdpModes.All), MemberType = typeof(UdpModes))]
    public async Task Stop_refuses_parked_senders_at_once_and_drops_the_queue(UdpIo io)
    {
        const int limit = 1024;
        var pool = new LeakCheckingBufferPool();
        using var receiver = new RawUdp(IPAddress.Loopback);
        var (server, gate) = HeldServer(pool, limit, io);
        await using (server)
        {
            Task<bool> stopping;
            Task<bool> first;
            Task<long> blocking;
            Task<long> waiting;
            try
            {
                first = await HoldFlusherAsync(server, gate, receiver.Endpoint);

                // A blocking Send whose datagram queued waits for its outcome: here, the drop.
                waiting = HarnessExtensions.RunBlocking(() => server.Send(receiver.Endpoint, UdpTest.Datagram(699, 100)));
                await Wait.UntilAsync(() => server.BytesPending == 100, "the blocking Send to queue");
                var (accepted, _, _) = FillQueue(server, receiver.Endpoint);
                Assert.NotEmpty(accepted);
                var parked = server.SendAsync(receiver.Endpoint, UdpTest.Datagram(700, 100).AsMemory()).AsTask();
                Assert.False(parked.IsCompleted);

                // A blocking Send that finds the queue full is refused at once: it never parks.
                blocking = HarnessExtensions.RunBlocking(() => server.Send(receiver.Endpoint, UdpTest.Datagram(701, 100)));
                Assert.Equal(0, await blocking.WaitAsync(Wait.Default));

                // The flusher is still held in OnSent, so Stop cannot finish; the parked sender is
                // refused by the close itself, without waiting for that.
                stopping = server.StopAsync();
                Assert.False(await parked.WaitAsync(Wait.Default));
                Assert.False(stopping.IsCompleted);
                Assert.False(waiting.IsCompleted);
                Assert.False(server.SendAsync(receiver.Endpoint, UdpTest.Datagram(702, 100)));
            }
            finally
            {
                gate.Open();
            }

            Assert.True(await stopping.WaitAsync(Wait.Default));
            await first.WaitAsync(Wait.Default);
            Assert.Equal(0, await waiting.WaitAsync(Wait.Default));

            // Only the datagram that was in flight went out; the queued ones were dropped.
            Assert.Equal(1, server.DatagramsSent);
            Assert.Equal(0, server.BytesPending);
            Assert.Equal(0, UdpTest.IdOf((await receiver.ReceiveAsync("the datagram in flight")).Data));
            Assert.Equal(0, receiver.Available);
            Assert.Null(server.Probe.LateHook);
        }

        await pool.AssertAllReturnedAsync();
    }
}
