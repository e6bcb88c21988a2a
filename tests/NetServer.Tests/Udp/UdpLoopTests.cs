using System;
using System.Collections.Concurrent;
using System.Linq;
using System.Net;
using System.Net.Sockets;
using System.Threading;
using System.Threading.Tasks;
using NetServer.Tests.Infrastructure;
using Xunit;

namespace NetServer.Tests.Udp;

/// <summary>
/// UDP sockets on the loops of an <see cref="IoService"/> (Linux, net10.0): the loop polls the
/// socket, receives in <c>recvmmsg</c> batches, runs the hooks on its thread and sends what they
/// sent in <c>sendmmsg</c> batches; sends from other threads go through the queue to the loop.
/// </summary>
public sealed class UdpLoopTests
{
    private const string Reason = "the loops poll sockets with epoll on Linux in the net10.0 build";

    private static IoService StartService(int threads = 1)
    {
        var service = new IoService(threads);
        Assert.True(service.Start());
        Assert.Null(service.NativeTransportUnavailableReason);
        return service;
    }

    private static Socket RawClient(int receiveBuffer = UdpTest.LargeBuffer)
    {
        var socket = new Socket(AddressFamily.InterNetwork, SocketType.Dgram, ProtocolType.Udp) { ReceiveBufferSize = receiveBuffer, SendBufferSize = UdpTest.LargeBuffer };
        socket.Bind(new IPEndPoint(IPAddress.Loopback, 0));
        return socket;
    }

    private static async Task<int[]> ReceiveIdsAsync(Socket socket, int count, int length)
    {
        var ids = new int[count];
        var buffer = new byte[length + 1];
        for (var i = 0; i < count; i++)
        {
            var result = await socket.ReceiveFromAsync(buffer, SocketFlags.None, new IPEndPoint(IPAddress.Loopback, 0)).WaitAsync(Wait.Default); // the family of the sender to read
            ids[i] = UdpTest.IdOf(buffer.AsSpan(0, result.ReceivedBytes), length);
        }

        return ids;
    }

    /// <summary>An echo server whose every OnReceived and OnSent records the loop it ran on (-1 off the service's loops).</summary>
    private static ProbeUdpServer EchoServer(IoService service, ConcurrentQueue<int> loops, LeakCheckingBufferPool pool)
    {
        var server = new ProbeUdpServer(new IPEndPoint(IPAddress.Loopback, 0), pool)
        {
            Service = service,
            OptionAutoReceive = true,
            OptionReceiveBufferSize = UdpTest.LargeBuffer,
            OptionMaxDatagramSize = 2048, // a batch of 32 slots (the default size makes batches of 8)
        };
        server.Probe.KeepDatagrams = false;
        server.Probe.OnReceive = (peer, from, buffer, offset, size) =>
        {
            loops.Enqueue(service.CurrentLoop?.Index ?? -1);
            Assert.True(peer.SendAsync(from, buffer, 0, size)); // NetCoreServer's echo reads from offset 0: every datagram of a batch must be there
        };
        server.Probe.OnSend = (_, _, _) => loops.Enqueue(service.CurrentLoop?.Index ?? -1);
        return server;
    }

    [Net10Fact(Reason)]
    public async Task A_burst_far_larger_than_a_batch_echoes_in_order_with_every_hook_on_the_loop_thread()
    {
        using var service = StartService(2);
        var pool = new LeakCheckingBufferPool();
        var loops = new ConcurrentQueue<int>();
        const int count = 500, length = 100;
        await using (var server = EchoServer(service, loops, pool))
        {
            Assert.True(server.Start());
            using var client = RawClient();

            // 500 datagrams at once: the server's socket holds them all, and the loop takes them in batches of 32.
            for (var i = 0; i < count; i++)
                client.SendTo(UdpTest.Datagram(i, length), server.IPEndpoint);
            Assert.Equal(Enumerable.Range(0, count), await ReceiveIdsAsync(client, count, length));

            await Wait.UntilAsync(() => server.DatagramsSent == count, "the send counter");
            Assert.Equal(count, server.DatagramsReceived);
            Assert.Equal((long)count * length, server.BytesReceived);
            Assert.Equal((long)count * length, server.BytesSent);
            Assert.Equal(count * 2, loops.Count);
            Assert.Single(loops.Distinct()); // one loop, the socket's own, ran every OnReceived and OnSent
            Assert.NotEqual(-1, loops.First());
            Assert.False(server.Probe.ReceivedOverlapped);
            server.Probe.AssertNoErrors();
        }

        await pool.AssertAllReturnedAsync();
    }

    [Net10Fact(Reason)]
    public async Task A_UdpClient_on_a_loop_echoes_with_a_server_on_another_loop()
    {
        using var service = StartService(2);
        var pool = new LeakCheckingBufferPool();
        var serverLoops = new ConcurrentQueue<int>();
        await using var server = EchoServer(service, serverLoops, pool);
        Assert.True(server.Start());

        const int count = 300, window = 50;
        var clientLoops = new ConcurrentQueue<int>();
        using var room = new SemaphoreSlim(window);
        await using var client = new ProbeUdpClient(server.IPEndpoint, pool) { Service = service, OptionAutoReceive = true, OptionReceiveBufferSize = UdpTest.LargeBuffer };
        client.Probe.OnReceive = (_, _, _, _, _) =>
        {
            clientLoops.Enqueue(service.CurrentLoop?.Index ?? -1);
            room.Release();
        };
        Assert.True(client.Connect());
        for (var i = 0; i < count; i++)
        {
            Assert.True(await room.WaitAsync(Wait.Default), "an echo did not come back");
            Assert.True(client.SendAsync(UdpTest.Datagram(i, 64)));
        }

        await Wait.UntilAsync(() => client.Probe.ReceivedCount == count, $"{count} echoes");
        Assert.Equal(Enumerable.Range(0, count), client.Probe.Received.Select(r => UdpTest.IdOf(r.Data, 64)));
        Assert.Single(clientLoops.Distinct());
        Assert.NotEqual(-1, clientLoops.First());
        Assert.Equal(count, client.DatagramsSent);
        client.Probe.AssertNoErrors();
        server.Probe.AssertNoErrors();
    }

    [Net10Fact(Reason)]
    public async Task Sends_from_other_threads_go_out_in_order_and_a_blocking_send_on_the_loop_does_not_wait_for_itself()
    {
        using var service = StartService();
        var pool = new LeakCheckingBufferPool();
        await using var server = new ProbeUdpServer(new IPEndPoint(IPAddress.Loopback, 0), pool) { Service = service };
        Assert.True(server.Start());
        Assert.True(UdpTest.OnLoop(server));
        using var client = RawClient();
        var target = (IPEndPoint)client.LocalEndPoint!;

        // Four threads at once: each one's datagrams arrive in its order.
        const int threads = 4, each = 100, length = 200;
        await Task.WhenAll(Enumerable.Range(0, threads).Select(t => Task.Run(() =>
        {
            for (var i = 0; i < each; i++)
                Assert.True(server.SendAsync(target, UdpTest.Datagram((t * each) + i, length)));
        })));
        var ids = await ReceiveIdsAsync(client, threads * each, length);
        for (var t = 0; t < threads; t++)
            Assert.Equal(Enumerable.Range(t * each, each), ids.Where(id => id / each == t));
        await Wait.UntilAsync(() => server.DatagramsSent == threads * each, "the send counter");

        // The blocking Send waits until the kernel took it, and returns its size.
        Assert.Equal(length, server.Send(target, UdpTest.Datagram(1000, length)));
        Assert.Equal(new[] { 1000 }, await ReceiveIdsAsync(client, 1, length));

        // On the loop itself (posted work, outside a hook) it cannot wait for the loop, and does not.
        var fromLoop = new TaskCompletionSource<long>(TaskCreationOptions.RunContinuationsAsynchronously);
        Assert.True(service.Loops[0].Post(() => fromLoop.SetResult(server.Send(target, UdpTest.Datagram(1001, length)))));
        Assert.Equal(length, await fromLoop.Task.WaitAsync(Wait.Default));
        Assert.Equal(new[] { 1001 }, await ReceiveIdsAsync(client, 1, length));
        server.Probe.AssertNoErrors();
    }

    [Net10Fact(Reason)]
    public async Task A_send_queue_over_its_limit_refuses_as_in_the_default_mode_and_the_rest_leaves_after_the_batch()
    {
        using var service = StartService();
        var pool = new LeakCheckingBufferPool();
        await using var server = new ProbeUdpServer(new IPEndPoint(IPAddress.Loopback, 0), pool) { Service = service, OptionSendBufferLimit = 16 * 1024, OptionAutoReceive = true };
        using var release = new ManualResetEventSlim();
        using var held = new ManualResetEventSlim();
        const int length = 1000;

        // A hook that answers, then holds the loop: its answer (and everything queued behind it) leaves when the batch ends.
        server.Probe.OnReceive = (peer, from, buffer, offset, size) =>
        {
            Assert.True(peer.SendAsync(from, UdpTest.Datagram(0, length)));
            held.Set();
            release.Wait(Wait.Default);
        };
        Assert.True(server.Start());
        using var client = RawClient();
        var target = (IPEndPoint)client.LocalEndPoint!;
        client.SendTo(new byte[] { 1 }, server.IPEndpoint);
        Assert.True(held.Wait(Wait.Default));

        var accepted = 1;
        while (server.SendAsync(target, UdpTest.Datagram(accepted, length)))
            accepted++;
        Assert.InRange(accepted, 10, 16); // 16 KiB at 1,064 bytes a datagram
        Assert.Equal(1, server.Probe.ErrorCount(SocketError.NoBufferSpaceAvailable));
        Assert.Equal((long)accepted * length, server.BytesPending);

        // The awaitable send waits for room instead, and gets it once the loop has sent.
        var parked = server.SendAsync(target, UdpTest.Datagram(accepted, length).AsMemory());
        Assert.False(parked.IsCompleted);
        release.Set();
        Assert.True(await parked.AsTask().WaitAsync(Wait.Default));
        Assert.Equal(Enumerable.Range(0, accepted + 1), await ReceiveIdsAsync(client, accepted + 1, length));
        await Wait.UntilAsync(() => server.BytesPending == 0, "the queue to drain");
    }

    [Net10Fact(Reason)]
    public async Task Stop_and_restart_on_a_loop_and_a_service_stop_ends_the_socket()
    {
        using var service = StartService();
        var pool = new LeakCheckingBufferPool();
        var loops = new ConcurrentQueue<int>();
        await using (var server = EchoServer(service, loops, pool))
        {
            server.OptionMaxDatagramSize = UdpPeer.MaxDatagramPayload;
            Assert.True(server.Start());
            using var client = RawClient();
            for (var round = 0; round < 3; round++)
            {
                client.SendTo(UdpTest.Datagram(round, 32), server.IPEndpoint);
                Assert.Equal(new[] { round }, await ReceiveIdsAsync(client, 1, 32));
                Assert.True(server.Stop());
                await server.Probe.Finished.Task.WaitAsync(Wait.Default);
                Assert.Null(server.Probe.LateHook);
                server.Probe.Rearm();
                Assert.True(server.Start());
            }

            // A stop of the service closes the socket: OnStopped, after every other hook.
            Assert.True(service.Stop());
            await server.Probe.Finished.Task.WaitAsync(Wait.Default);
            Assert.False(server.IsStarted);
            Assert.Null(server.Probe.LateHook);
            server.Probe.AssertNoErrors();
        }

        await pool.AssertAllReturnedAsync();
    }

    [Net10Fact(Reason)]
    public async Task Hooks_on_the_thread_pool_when_asked_and_a_datagram_too_large_is_reported()
    {
        using var service = StartService();
        var pool = new LeakCheckingBufferPool();
        var threads = new ConcurrentQueue<bool>();
        await using var server = new ProbeUdpServer(new IPEndPoint(IPAddress.Loopback, 0), pool)
        {
            Service = service,
            OptionHooksOnLoop = false,
            OptionAutoReceive = true,
            OptionMaxDatagramSize = 100,
        };
        server.Probe.OnReceive = (peer, from, buffer, offset, size) =>
        {
            threads.Enqueue(Thread.CurrentThread.IsThreadPoolThread && service.CurrentLoop is null);
            peer.SendAsync(from, buffer, offset, size);
        };
        Assert.True(server.Start());
        using var client = RawClient();
        client.SendTo(UdpTest.Datagram(1, 100), server.IPEndpoint);
        client.SendTo(UdpTest.Datagram(2, 101), server.IPEndpoint); // one byte over the limit
        client.SendTo(UdpTest.Datagram(3, 100), server.IPEndpoint);
        Assert.Equal(new[] { 1, 3 }, await ReceiveIdsAsync(client, 2, 100));
        Assert.Equal(new[] { true, true }, threads);
        Assert.Equal(new[] { SocketError.MessageSize }, server.Probe.Errors);
    }

    [Net10Fact(Reason)]
    public async Task A_connected_client_on_a_loop_hears_that_no_server_listens()
    {
        using var service = StartService();
        var pool = new LeakCheckingBufferPool();
        using var closed = RawClient();
        var port = ((IPEndPoint)closed.LocalEndPoint!).Port;
        closed.Dispose(); // nobody listens on that port now
        await using var client = new ProbeUdpClient(new IPEndPoint(IPAddress.Loopback, port), pool) { Service = service, OptionAutoReceive = true };
        Assert.True(client.Connect());
        Assert.True(client.SendAsync(new byte[] { 1, 2, 3 }));
        await Wait.UntilAsync(() => client.Probe.ErrorCount(SocketError.ConnectionRefused) >= 1, "ConnectionRefused");
        Assert.True(client.IsConnected);
    }

    [Net10Fact(Reason)]
    public async Task Start_and_Stop_in_work_posted_to_the_sockets_own_loop_do_not_block_that_loop()
    {
        // The receiver's start is queued on that same loop, behind this work: a Stop that waited for
        // the channel to finish would hold the loop for the whole blocking-wait timeout (30 s).
        using var service = StartService(1);
        var pool = new LeakCheckingBufferPool();
        await using var server = EchoServer(service, new ConcurrentQueue<int>(), pool);
        var ran = new TaskCompletionSource<bool>(TaskCreationOptions.RunContinuationsAsynchronously);
        var watch = System.Diagnostics.Stopwatch.StartNew();
        Assert.True(service.Loops[0].Post(() =>
        {
            server.Start();
            server.Stop();
            ran.SetResult(true);
        }));
        await ran.Task.WaitAsync(Wait.Default);
        Assert.True(watch.Elapsed < TimeSpan.FromSeconds(10), $"the posted Start and Stop took {watch.Elapsed.TotalSeconds:F1} s");
        await server.Probe.Finished.Task.WaitAsync(Wait.Default);
        Assert.False(server.IsStarted);
    }

    [Net10Fact(Reason)]
    public async Task A_flooded_socket_holds_up_no_other_socket_of_its_loop()
    {
        using var service = StartService(1); // one loop: both servers are on it
        var pool = new LeakCheckingBufferPool();
        long flooded = 0;
        await using var busy = new ProbeUdpServer(new IPEndPoint(IPAddress.Loopback, 0), pool) { Service = service, OptionAutoReceive = true, OptionMaxDatagramSize = 2048, OptionReceiveBufferSize = UdpTest.LargeBuffer };
        busy.Probe.KeepDatagrams = false;

        // Each datagram costs its hook 50 us of work (a busy wait standing for it), longer than the
        // flooder takes to send several more, so the flooded socket always has more waiting: every
        // recvmmsg comes back full.
        busy.Probe.OnReceive = (_, _, _, _, _) =>
        {
            Interlocked.Increment(ref flooded);
            var until = System.Diagnostics.Stopwatch.GetTimestamp() + (System.Diagnostics.Stopwatch.Frequency / 20_000);
            while (System.Diagnostics.Stopwatch.GetTimestamp() < until)
                Thread.SpinWait(20);
        };
        await using var other = EchoServer(service, new ConcurrentQueue<int>(), pool);
        Assert.True(busy.Start());
        Assert.True(other.Start());

        using var stop = new CancellationTokenSource();
        using var flooder = RawClient();
        var flood = Task.Run(() =>
        {
            var datagram = new byte[64];
            while (!stop.IsCancellationRequested)
                flooder.SendTo(datagram, busy.IPEndpoint);
        });
        try
        {
            await Wait.UntilAsync(() => Interlocked.Read(ref flooded) > 100, "the flooded socket to take its first datagrams");
            using var client = RawClient();
            for (var i = 0; i < 3; i++)
            {
                // Answered while the flood goes on: the flooded socket lets the loop go round after 16 batches.
                client.SendTo(UdpTest.Datagram(i, 32), other.IPEndpoint);
                Assert.Equal(new[] { i }, await ReceiveIdsAsync(client, 1, 32));
            }
        }
        finally
        {
            stop.Cancel();
            await flood.WaitAsync(Wait.Default);
        }
    }

    [Fact]
    public async Task A_socket_given_a_service_works_on_every_build_and_is_on_a_loop_only_where_the_loops_poll_sockets()
    {
        using var service = new IoService(1);
        Assert.True(service.Start());
        var native = Net10FactAttribute.IsNet10Build && OperatingSystem.IsLinux();
        if (native)
            Assert.Null(service.NativeTransportUnavailableReason);
        else
            Assert.Contains("default transport", service.NativeTransportUnavailableReason);

        var pool = new LeakCheckingBufferPool();
        await using var server = EchoServer(service, new ConcurrentQueue<int>(), pool);
        Assert.True(server.Start());
        Assert.Equal(native, UdpTest.OnLoop(server)); // elsewhere the default mode, with no error
        using var client = RawClient();
        client.SendTo(UdpTest.Datagram(7, 32), server.IPEndpoint);
        Assert.Equal(new[] { 7 }, await ReceiveIdsAsync(client, 1, 32));
        server.Probe.AssertNoErrors();
    }
}
