using System;
using System.Collections.Concurrent;
using System.Diagnostics;
using System.Linq;
using System.Net;
using System.Net.Sockets;
using System.Threading;
using System.Threading.Tasks;
using NetServer.Tests.Infrastructure;
using Xunit;

namespace NetServer.Tests.Udp;

/// <summary>Many senders at once: every datagram whole and in order per thread, tiny limits, sends from OnSent.</summary>
public partial class UdpSendQueueTests
{
    /// <summary>How many datagrams of up to <paramref name="largest"/> bytes each of <paramref name="threads"/> senders may send to <paramref name="receiver"/> without the kernel dropping any, up to <paramref name="most"/>.</summary>
    private static int PerThread(RawUdp receiver, int threads, int largest, int most)
    {
        var perDatagram = largest + 2048;
        var fits = receiver.Socket.ReceiveBufferSize / 2 / perDatagram / threads;
        Assert.True(fits >= 10, $"The receive buffer ({receiver.Socket.ReceiveBufferSize} bytes) is too small for this test.");
        return Math.Min(most, fits);
    }

    [Theory]
    [MemberData(nameof(UdpModes.All), MemberType = typeof(UdpModes))]
    public async Task Concurrent_senders_on_many_threads_send_every_datagram_whole_and_each_thread_in_order(UdpIo io)
    {
        const int threads = 8;
        var pool = new LeakCheckingBufferPool();
        using var receiver = new RawUdp(IPAddress.Loopback);
        var perThread = PerThread(receiver, threads, 16 + (200 * threads) + threads, 200);
        var total = threads * perThread;

        // Datagram (t, i) is 16 + 8i + t bytes: its size alone says which thread sent it and when.
        static int SizeOf(int thread, int index) => 16 + (threads * index) + thread;

        await using (var server = new ProbeUdpServer(UdpTest.Loopback(AddressFamily.InterNetwork), pool) { Io = io })
        {
            Assert.True(server.Start());
            var receiving = receiver.ReceiveManyAsync(total);
            await SendTogetherAsync(threads, async t =>
            {
                var scratch = new byte[4096];
                for (var i = 0; i < perThread; i++)
                {
                    var datagram = UdpTest.Datagram((t * 1000) + i, SizeOf(t, i));
                    switch (i % 5)
                    {
                        case 0:
                            Assert.True(server.SendAsync(receiver.Endpoint, datagram));
                            break;
                        case 1:
                            // From the middle of a buffer that is overwritten as soon as the call returns.
                            datagram.CopyTo(scratch, 7);
                            Assert.True(server.SendAsync(receiver.Endpoint, scratch, 7, datagram.Length));
                            Array.Fill(scratch, (byte)0xEE);
                            break;
                        case 2:
                            Assert.True(server.SendAsync(receiver.Endpoint, datagram.AsSpan()));
                            break;
                        case 3:
                            Assert.True(await server.SendAsync(receiver.Endpoint, datagram.AsMemory()));
                            break;
                        default:
                            Assert.Equal(datagram.Length, server.Send(receiver.Endpoint, datagram));
                            break;
                    }
                }
            });

            var got = await receiving;
            var ids = got.Select(d =>
            {
                var id = UdpTest.IdOf(d);
                Assert.Equal(SizeOf(id / 1000, id % 1000), d.Length);
                return id;
            }).Order().ToArray();
            Assert.Equal(Enumerable.Range(0, threads).SelectMany(t => Enumerable.Range(t * 1000, perThread)), ids);

            // OnSent runs in the order the datagrams went to the kernel: per thread, in send order.
            await Wait.UntilAsync(() => server.Probe.SentCount == total, "every OnSent");
            var order = server.Probe.SentSizes.Select(size => (Thread: ((int)size - 16) % threads, Index: ((int)size - 16) / threads)).ToList();
            foreach (var group in order.GroupBy(o => o.Thread))
                Assert.Equal(Enumerable.Range(0, perThread), group.Select(o => o.Index));

            Assert.Equal(total, server.DatagramsSent);
            Assert.Equal(Enumerable.Range(0, threads).Sum(t => Enumerable.Range(0, perThread).Sum(i => (long)SizeOf(t, i))), server.BytesSent);
            Assert.Equal(0, server.BytesPending);
            server.Probe.AssertNoErrors();
        }

        await pool.AssertAllReturnedAsync();
    }

    [Theory]
    [MemberData(nameof(UdpModes.All), MemberType = typeof(UdpModes))]
    public async Task Awaitable_senders_under_a_tiny_limit_all_complete_and_none_is_lost(UdpIo io)
    {
        const int threads = 8;
        var pool = new LeakCheckingBufferPool();
        using var receiver = new RawUdp(IPAddress.Loopback);
        var perThread = PerThread(receiver, threads, 300, 150);
        var total = threads * perThread;
        await using (var server = new ProbeUdpServer(UdpTest.Loopback(AddressFamily.InterNetwork), pool) { Io = io, OptionSendBufferLimit = 1024 })
        {
            Assert.True(server.Start());
            var receiving = receiver.ReceiveManyAsync(total);
            await SendTogetherAsync(threads, async t =>
            {
                for (var i = 0; i < perThread; i++)
                    Assert.True(await server.SendAsync(receiver.Endpoint, UdpTest.Datagram((t * 1000) + i, 100 + ((i * 7) % 200)).AsMemory()));
            });

            var ids = (await receiving).Select(d => UdpTest.IdOf(d)).Order();
            Assert.Equal(Enumerable.Range(0, threads).SelectMany(t => Enumerable.Range(t * 1000, perThread)), ids);
            await Wait.UntilAsync(() => server.DatagramsSent == total, "every datagram to go out");
            Assert.Equal(0, server.BytesPending);
            server.Probe.AssertNoErrors();
        }

        await pool.AssertAllReturnedAsync();
    }

    [Theory]
    [MemberData(nameof(UdpModes.All), MemberType = typeof(UdpModes))]
    public async Task Refused_sends_under_a_tiny_limit_are_exactly_the_ones_reported_and_never_sent(UdpIo io)
    {
        const int threads = 8;
        var pool = new LeakCheckingBufferPool();
        using var receiver = new RawUdp(IPAddress.Loopback);
        var perThread = PerThread(receiver, threads, 300, 200);
        var accepted = new ConcurrentQueue<int>();
        var refused = 0;
        await using (var server = new ProbeUdpServer(UdpTest.Loopback(AddressFamily.InterNetwork), pool) { Io = io, OptionSendBufferLimit = 512 })
        {
            Assert.True(server.Start());
            await SendTogetherAsync(threads, t =>
            {
                for (var i = 0; i < perThread; i++)
                {
                    var id = (t * 1000) + i;
                    if (server.SendAsync(receiver.Endpoint, UdpTest.Datagram(id, 200 + (i % 100))))
                        accepted.Enqueue(id);
                    else
                        Interlocked.Increment(ref refused);
                }

                return Task.CompletedTask;
            });

            var got = await receiver.ReceiveManyAsync(accepted.Count);
            Assert.Equal(accepted.Order(), got.Select(d => UdpTest.IdOf(d)).Order());
            await Wait.UntilAsync(() => server.DatagramsSent == accepted.Count && server.BytesPending == 0, "the queue to drain");
            Assert.Equal(threads * perThread, accepted.Count + refused);
            Assert.Equal(refused, server.Probe.ErrorCount(SocketError.NoBufferSpaceAvailable));
            Assert.Equal(refused, server.Probe.Errors.Count);
            Assert.Equal(0, receiver.Available);
        }

        await pool.AssertAllReturnedAsync();
    }

    [Theory]
    [MemberData(nameof(UdpModes.All), MemberType = typeof(UdpModes))]
    public async Task Sending_from_OnSent_never_recurses(UdpIo io)
    {
        const int chain = 1000;
        var pool = new LeakCheckingBufferPool();
        var depths = new int[chain + 1];
        using var receiver = new RawUdp(IPAddress.Loopback, receiveBufferSize: 4096); // it never reads: drops do not matter here
        await using (var server = new ProbeUdpServer(UdpTest.Loopback(AddressFamily.InterNetwork), pool) { Io = io })
        {
            var count = 0;
            server.Probe.OnSend = (peer, to, _) =>
            {
                depths[count] = new StackTrace().FrameCount;
                if (++count <= chain)
                    Assert.True(peer.SendAsync(to, UdpTest.Datagram(count, 8)));
            };
            Assert.True(server.Start());
            Assert.True(server.SendAsync(receiver.Endpoint, UdpTest.Datagram(0, 8)));

            await Wait.UntilAsync(() => server.Probe.SentCount == chain + 1, "the chain of sends");
            Assert.Equal(chain + 1, server.DatagramsSent);
            // The first OnSent runs on the test's own (deep) stack; the flusher may later move to a
            // pool thread's shallow one. A send from OnSent that recursed would run deeper than the first.
            Assert.True(depths.Max() <= depths[0] + 40, $"OnSent ran between {depths.Min()} and {depths.Max()} frames deep (first {depths[0]}, last {depths[chain]}).");
            server.Probe.AssertNoErrors();
        }

        await pool.AssertAllReturnedAsync();
    }

    /// <summary>Runs <paramref name="threads"/> senders on the pool, released at once so they contend; bounded.</summary>
    private static async Task SendTogetherAsync(int threads, Func<int, Task> sender)
    {
        var go = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var senders = Enumerable.Range(0, threads).Select(t => Task.Run(async () =>
        {
            await go.Task;
            await sender(t);
        })).ToArray();
        go.SetResult();
        await Task.WhenAll(senders).WaitAsync(Wait.Default);
    }
}
