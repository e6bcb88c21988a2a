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

/// <summary>
/// Receiving: one OnReceived per datagram, never concurrently with itself; each ReceiveAsync asks
/// for exactly one datagram, and asking from inside OnReceived never recurses however fast the
/// datagrams come (the kernel already holding the next one is what makes a naive receive loop
/// recurse); OptionAutoReceive delivers all of them without asking; a hook that throws is reported
/// and receiving goes on. Every test runs in both I/O modes.
/// </summary>
public class UdpReceiveTests
{
    private const int Flood = 10_000;

    /// <summary>
    /// Floods <paramref name="server"/> from a plain socket, keeping at most a window of datagrams
    /// unread, so the kernel holds a backlog (every receive completes at once) but never drops one.
    /// </summary>
    private static async Task FloodAsync(ProbeUdpServer server, RawUdp sender, int count, int length = 16)
    {
        var window = UdpTest.Window(server.Socket!);
        for (var i = 0; i < count; i++)
        {
            if (i - server.Probe.ReceivedCount >= window)
                await Wait.UntilAsync(() => i - server.Probe.ReceivedCount < window / 2, $"the server to read datagrams (it has {server.Probe.ReceivedCount} of {i})");
            sender.Send(server.Endpoint, UdpTest.Datagram(i, length));
        }
    }

    [Theory]
    [MemberData(nameof(UdpModes.All), MemberType = typeof(UdpModes))]
    public async Task ReceiveAsync_inside_OnReceived_never_recurses_and_every_datagram_arrives(UdpIo io)
    {
        var pool = new LeakCheckingBufferPool();
        var depths = new int[Flood];
        await using (var server = new ProbeUdpServer(UdpTest.Loopback(AddressFamily.InterNetwork), pool) { Io = io, OptionReceiveBufferSize = UdpTest.LargeBuffer })
        {
            var seen = 0;
            server.Probe.Started = peer => peer.ReceiveAsync();
            server.Probe.OnReceive = (peer, _, _, _, _) =>
            {
                depths[Math.Min(seen++, Flood - 1)] = new StackTrace().FrameCount;
                peer.ReceiveAsync();
            };
            Assert.True(server.Start());
            using var sender = new RawUdp(IPAddress.Loopback);

            await FloodAsync(server, sender, Flood);
            await Wait.UntilAsync(() => server.Probe.ReceivedCount == Flood, $"{Flood} datagrams");

            Assert.Equal(Enumerable.Range(0, Flood), server.Probe.Received.Select(r => UdpTest.IdOf(r.Data, 16)).Order());
            Assert.Equal(Flood, server.DatagramsReceived);

            // A receive that completed at once and called the hook, which asked for the next one,
            // would add frames per datagram (with up to a window of 1,000 waiting, thousands); the
            // engine's loop keeps the depth bounded: 13 frames when it is started, 23 after a
            // receive that completed asynchronously, on this machine.
            var first = depths[0];
            var last = depths[Flood - 1];
            Assert.True(depths.Max() - depths.Min() <= 40, $"OnReceived ran between {depths.Min()} and {depths.Max()} frames deep (first {first}, last {last}).");
            Assert.True(last <= first + 40, $"OnReceived ran {first} frames deep at datagram 1 and {last} at datagram {Flood}.");
            Assert.False(server.Probe.ReceivedOverlapped);
            server.Probe.AssertNoErrors();
        }

        await pool.AssertAllReturnedAsync();
    }

    [Theory]
    [MemberData(nameof(UdpModes.All), MemberType = typeof(UdpModes))]
    public async Task OptionAutoReceive_delivers_a_flood_without_ReceiveAsync(UdpIo io)
    {
        var pool = new LeakCheckingBufferPool();
        var depths = new ConcurrentBag<int>();
        await using (var server = new ProbeUdpServer(UdpTest.Loopback(AddressFamily.InterNetwork), pool) { Io = io, OptionAutoReceive = true, OptionReceiveBufferSize = UdpTest.LargeBuffer })
        {
            server.Probe.OnReceive = (_, _, _, _, _) => depths.Add(new StackTrace().FrameCount);
            Assert.True(server.Start());
            using var sender = new RawUdp(IPAddress.Loopback);

            await FloodAsync(server, sender, Flood);
            await Wait.UntilAsync(() => server.Probe.ReceivedCount == Flood, $"{Flood} datagrams");

            Assert.Equal(Enumerable.Range(0, Flood), server.Probe.Received.Select(r => UdpTest.IdOf(r.Data, 16)).Order());
            Assert.True(depths.Max() - depths.Min() <= 40, $"OnReceived ran between {depths.Min()} and {depths.Max()} frames deep.");
            Assert.False(server.Probe.ReceivedOverlapped);
            server.Probe.AssertNoErrors();
        }

        await pool.AssertAllReturnedAsync();
    }

    [Theory]
    [MemberData(nameof(UdpModes.All), MemberType = typeof(UdpModes))]
    public async Task Each_ReceiveAsync_asks_for_exactly_one_datagram(UdpIo io)
    {
        var pool = new LeakCheckingBufferPool();
        await using (var server = new ProbeUdpServer(UdpTest.Loopback(AddressFamily.InterNetwork), pool) { Io = io })
        {
            Assert.True(server.Start());
            using var sender = new RawUdp(IPAddress.Loopback);
            using var witness = new RawUdp(IPAddress.Loopback);

            // Asking several times before a datagram arrives still asks for one. (The asks come
            // before the datagrams: with one already waiting, the first ask could be answered
            // between two of them, and the next would rightly ask again.)
            server.ReceiveAsync();
            server.ReceiveAsync();
            server.ReceiveAsync();
            for (var i = 0; i < 5; i++)
                sender.Send(server.Endpoint, $"d{i}");
            await Wait.UntilAsync(() => server.Probe.ReceivedCount >= 1, "the first datagram");
            await AssertReceiveLoopIdleAsync(server, witness);
            Assert.Equal(1, server.Probe.ReceivedCount);

            // Nothing asked now: the other four wait in the socket, and none is delivered.
            await Wait.UntilAsync(() => server.Socket!.Available > 0, "the other datagrams to wait in the socket");
            await AssertReceiveLoopIdleAsync(server, witness);
            Assert.Equal(1, server.Probe.ReceivedCount);

            // Each ask now gets exactly the next one.
            server.ReceiveAsync();
            await Wait.UntilAsync(() => server.Probe.ReceivedCount >= 2, "the second datagram");
            await AssertReceiveLoopIdleAsync(server, witness);
            Assert.Equal(2, server.Probe.ReceivedCount);
            Assert.Equal(new[] { "d0", "d1" }, server.Probe.Texts());

            server.ReceiveAsync();
            await Wait.UntilAsync(() => server.Probe.ReceivedCount == 3, "the third datagram");
            Assert.Equal("d2", server.Probe.Texts()[2]);
            Assert.Equal(3, server.DatagramsReceived);
            server.Probe.AssertNoErrors();
        }

        await pool.AssertAllReturnedAsync();
    }

    /// <summary>
    /// A delivery nobody asked for would come from the receive loop right after the last one: a
    /// datagram the server then sends reaching a plain socket gives it that time to show.
    /// </summary>
    private static async Task AssertReceiveLoopIdleAsync(ProbeUdpServer server, RawUdp witness)
    {
        Assert.Equal(1, server.Send(witness.Endpoint, "w"));
        await witness.ReceiveAsync("the witness datagram");
    }

    [Theory]
    [MemberData(nameof(UdpModes.All), MemberType = typeof(UdpModes))]
    public async Task The_receive_buffer_is_held_only_while_a_datagram_is_wanted(UdpIo io)
    {
        // docs/udp.md: the one receive buffer is pooled and held only while a receive is wanted;
        // a dedicated thread that waits for the next ReceiveAsync holds none either.
        var pool = new LeakCheckingBufferPool();
        await using (var server = new ProbeUdpServer(UdpTest.Loopback(AddressFamily.InterNetwork), pool) { Io = io })
        {
            Assert.True(server.Start());
            using var sender = new RawUdp(IPAddress.Loopback);
            Assert.Equal(0, pool.Outstanding);
            for (var i = 0; i < 4; i++)
            {
                // A datagram nobody asked for waits in the kernel and takes no buffer.
                sender.Send(server.Endpoint, UdpTest.Datagram(2 * i, 16));
                await Wait.UntilAsync(() => server.Socket!.Available > 0, $"datagram {2 * i} to reach the socket");
                Assert.Equal(0, pool.Outstanding);
                Assert.Equal(2 * i, server.Probe.ReceivedCount);
                server.ReceiveAsync();
                await Wait.UntilAsync(() => server.Probe.ReceivedCount == (2 * i) + 1, $"datagram {2 * i}");
                await Wait.UntilAsync(() => pool.Outstanding == 0, $"the receive buffer back in the pool after datagram {2 * i}");

                // Asked for before it comes: the buffer is held while the receive waits, and only then.
                server.ReceiveAsync();
                await Wait.UntilAsync(() => pool.Outstanding == 1, $"the receive buffer while datagram {(2 * i) + 1} is wanted");
                Assert.Equal((2 * i) + 1, server.Probe.ReceivedCount);
                sender.Send(server.Endpoint, UdpTest.Datagram((2 * i) + 1, 16));
                await Wait.UntilAsync(() => server.Probe.ReceivedCount == (2 * i) + 2, $"datagram {(2 * i) + 1}");
                await Wait.UntilAsync(() => pool.Outstanding == 0, $"the receive buffer back in the pool after datagram {(2 * i) + 1}");
            }

            Assert.Equal(Enumerable.Range(0, 8), server.Probe.Received.Select(r => UdpTest.IdOf(r.Data, 16)));
            server.Probe.AssertNoErrors();
        }

        await pool.AssertAllReturnedAsync();
    }

    [Theory]
    [MemberData(nameof(UdpModes.All), MemberType = typeof(UdpModes))]
    public async Task Each_datagram_is_one_OnReceived_with_its_exact_bytes(UdpIo io)
    {
        var pool = new LeakCheckingBufferPool();
        var sizes = new[] { 1, 4, 5, 100, 1400, 1500, 8191, 8192, 8193, 30000, 65000 };
        await using (var server = new ProbeUdpServer(UdpTest.Loopback(AddressFamily.InterNetwork), pool) { Io = io, OptionReceiveBufferSize = UdpTest.LargeBuffer })
        {
            server.Probe.KeepReceiving();
            Assert.True(server.Start());
            using var sender = new RawUdp(IPAddress.Loopback);
            var expected = sizes.Select((size, i) => size < 4 ? new byte[] { (byte)i } : UdpTest.Datagram(i, size)).ToArray();
            foreach (var datagram in expected)
                sender.Send(server.Endpoint, datagram);

            await Wait.UntilAsync(() => server.Probe.ReceivedCount == sizes.Length, "every datagram");
            var received = server.Probe.Received.Select(r => r.Data).ToArray();
            Assert.Equal(sizes.Order(), received.Select(r => r.Length).Order());
            foreach (var datagram in expected)
                Assert.Contains(received, r => r.AsSpan().SequenceEqual(datagram));
            Assert.All(server.Probe.Received, r => Assert.Equal(sender.Endpoint, r.From));
            Assert.Equal(sizes.Sum(), server.BytesReceived);
            server.Probe.AssertNoErrors();
        }

        await pool.AssertAllReturnedAsync();
    }

    [Theory]
    [MemberData(nameof(UdpModes.All), MemberType = typeof(UdpModes))]
    public async Task OnReceived_never_runs_concurrently_and_names_each_sender(UdpIo io)
    {
        const int senders = 8;
        const int perSender = 200;
        var pool = new LeakCheckingBufferPool();
        await using (var server = new ProbeUdpServer(UdpTest.Loopback(AddressFamily.InterNetwork), pool) { Io = io, OptionAutoReceive = true, OptionReceiveBufferSize = UdpTest.LargeBuffer })
        {
            Assert.True(server.Start());
            var peers = Enumerable.Range(0, senders).Select(_ => new RawUdp(IPAddress.Loopback)).ToArray();
            try
            {
                // 1,600 datagrams of 64 bytes fit in the server's socket buffer: none is dropped.
                Assert.True(server.Socket!.ReceiveBufferSize >= senders * perSender * 2048, "the receive buffer is too small for this test");
                await Task.WhenAll(peers.Select((peer, s) => Task.Run(() =>
                {
                    for (var i = 0; i < perSender; i++)
                        peer.Send(server.Endpoint, UdpTest.Datagram((s * 1000) + i, 64));
                })));

                await Wait.UntilAsync(() => server.Probe.ReceivedCount == senders * perSender, "every datagram");
                Assert.False(server.Probe.ReceivedOverlapped);
                foreach (var (from, data) in server.Probe.Received)
                {
                    var id = UdpTest.IdOf(data, 64);
                    Assert.Equal(peers[id / 1000].Endpoint, from);
                }

                Assert.Equal(senders * perSender, server.Probe.Received.Select(r => UdpTest.IdOf(r.Data)).Distinct().Count());
            }
            finally
            {
                foreach (var peer in peers)
                    peer.Dispose();
            }

            server.Probe.AssertNoErrors();
        }

        await pool.AssertAllReturnedAsync();
    }

    [Theory]
    [MemberData(nameof(UdpModes.All), MemberType = typeof(UdpModes))]
    public async Task A_throwing_OnReceived_is_reported_and_receiving_goes_on(UdpIo io)
    {
        var pool = new LeakCheckingBufferPool();
        await using (var server = new ProbeUdpServer(UdpTest.Loopback(AddressFamily.InterNetwork), pool) { Io = io })
        {
            server.Probe.Echo();
            var echo = server.Probe.OnReceive!;
            server.Probe.OnReceive = (peer, from, buffer, offset, size) =>
            {
                echo(peer, from, buffer, offset, size);
                if (buffer[offset] == (byte)'!')
                    throw new InvalidOperationException("boom");
            };
            Assert.True(server.Start());
            using var peer = new RawUdp(IPAddress.Loopback);

            peer.Send(server.Endpoint, "!1");
            Assert.Equal("!1", await peer.ReceiveTextAsync());
            peer.Send(server.Endpoint, "ok");
            Assert.Equal("ok", await peer.ReceiveTextAsync());

            var failure = Assert.Single(server.Probe.HandlerErrors);
            Assert.Equal("boom", failure.Message);
            Assert.Empty(server.Probe.Errors);
        }

        await pool.AssertAllReturnedAsync();
    }

    [Theory]
    [MemberData(nameof(UdpModes.All), MemberType = typeof(UdpModes))]
    public async Task OnReceived_never_runs_on_the_thread_that_calls_ReceiveAsync(UdpIo io)
    {
        var pool = new LeakCheckingBufferPool();
        await using (var server = new ProbeUdpServer(UdpTest.Loopback(AddressFamily.InterNetwork), pool) { Io = io })
        {
            var threads = new ConcurrentQueue<(int Id, bool Pooled)>();
            server.Probe.OnReceive = (_, _, _, _, _) => threads.Enqueue((Environment.CurrentManagedThreadId, Thread.CurrentThread.IsThreadPoolThread));
            Assert.True(server.Start());
            using var sender = new RawUdp(IPAddress.Loopback);
            sender.Send(server.Endpoint, "waiting");
            await Wait.UntilAsync(() => server.Socket!.Available > 0, "the datagram to reach the socket");

            // The datagram is already there: a receive completes at once, yet the hook is not run inline.
            var caller = await HarnessExtensions.RunBlocking(() =>
            {
                server.ReceiveAsync();
                return Environment.CurrentManagedThreadId;
            });
            await Wait.UntilAsync(() => threads.Count == 1, "the datagram");
            var (hook, pooled) = threads.Single();
            Assert.NotEqual(caller, hook);

            // The mode says where it runs instead: on the pool (or the socket's loop), or on the socket's own thread.
            Assert.Equal(io == UdpIo.Async && !UdpTest.OnLoop(server), pooled);
        }

        await pool.AssertAllReturnedAsync();
    }
}
