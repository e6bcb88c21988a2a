using System;
using System.Collections.Concurrent;
using System.Linq;
using System.Net;
using System.Net.Sockets;
using System.Threading;
using System.Threading.Tasks;
using NetServer.Buffers;
using NetServer.Tests.Infrastructure;
using Xunit;

namespace NetServer.Tests.Udp;

/// <summary>
/// A UDP socket on a loop of an <see cref="IoService"/> when the application shuts a side of it
/// down (<c>Socket.Shutdown</c>) or the service stops under it: it behaves as in the default mode,
/// and the loop neither spins nor hangs.
/// </summary>
public sealed class UdpLoopShutdownTests
{
    private const string Reason = "the loops poll sockets with epoll on Linux in the net10.0 build";

    private static IoService StartService()
    {
        var service = new IoService(1);
        Assert.True(service.Start());
        Assert.Null(service.NativeTransportUnavailableReason);
        return service;
    }

    /// <summary>A connected client (so <c>Socket.Shutdown</c> succeeds) of <paramref name="server"/>, on <paramref name="service"/>'s loop or, with none, in the default mode.</summary>
    private static ProbeUdpClient Connect(RawUdp server, IoService? service, BufferPool pool)
    {
        var client = new ProbeUdpClient(server.Endpoint, pool) { Service = service, OptionAutoReceive = true };
        Assert.True(client.Connect());
        Assert.Equal(service is not null || IoService.Ambient is not null, UdpTest.OnLoop(client));
        return client;
    }

    [Net10Fact(Reason)]
    public async Task A_send_after_the_application_shut_the_send_side_fails_as_in_the_default_mode()
    {
        // sendmmsg says EPIPE, the runtime's sendto the same, and both read it as SocketError.Shutdown:
        // the socket's own doing, refused at once without an OnError (an unknown errno read as
        // SocketError.SocketError made the loops report it).
        using var service = StartService();
        var pool = new LeakCheckingBufferPool();
        foreach (var mode in new[] { service, null })
        {
            using var server = new RawUdp(IPAddress.Loopback);
            await using var client = Connect(server, mode, pool);
            Assert.True(client.SendAsync(new byte[] { 1 }));
            Assert.Equal(new byte[] { 1 }, (await server.ReceiveAsync()).Data);

            client.Socket!.Shutdown(SocketShutdown.Send);
            Assert.False(client.SendAsync(new byte[] { 2 })); // sent from this thread (the queue is idle), and refused
            Assert.Equal(0, client.Send(new byte[] { 3 }));
            Assert.True(client.IsConnected);
            client.Probe.AssertNoErrors();
            Assert.Equal(1, client.DatagramsSent);
        }
    }

    [Net10Fact(Reason)]
    public async Task After_the_application_shut_the_receive_side_the_loop_goes_round_and_datagrams_still_arrive_as_in_the_default_mode()
    {
        // Linux still queues datagrams for a UDP socket whose receive side is shut, and a read that
        // finds none says EAGAIN: the hang-up epoll reports is no end. A receiver that took it for
        // one read again at once, for ever, on the loop's thread.
        using var service = StartService();
        var pool = new LeakCheckingBufferPool();
        foreach (var mode in new[] { service, null })
        {
            using var server = new RawUdp(IPAddress.Loopback);
            await using var client = Connect(server, mode, pool);
            var clientEndpoint = new IPEndPoint(IPAddress.Loopback, client.LocalEndpoint.Port); // bound to any address

            // A zero-length datagram reaches OnReceived: recvmmsg counts it, with 0 bytes.
            server.Send(clientEndpoint, ReadOnlySpan<byte>.Empty);
            await Wait.UntilAsync(() => client.Probe.ReceivedCount == 1, "the zero-length datagram");

            foreach (var how in new[] { SocketShutdown.Receive, SocketShutdown.Both })
            {
                client.Socket!.Shutdown(how);

                // The loop runs other work (a receiver that spun on the hang-up would hold its thread).
                var ran = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
                Assert.True(service.Loops[0].Post(() => ran.SetResult()));
                await ran.Task.WaitAsync(Wait.Default);

                var before = client.Probe.ReceivedCount;
                server.Send(clientEndpoint, UdpTest.Datagram(7, 16));
                server.Send(clientEndpoint, ReadOnlySpan<byte>.Empty);
                await Wait.UntilAsync(() => client.Probe.ReceivedCount == before + 2, $"the datagrams sent after Shutdown({how})");
            }

            Assert.Equal(new[] { 0, 16, 0, 16, 0 }, client.Probe.Received.ToArray().Select(r => r.Data.Length));
            client.Probe.AssertNoErrors();
        }
    }

    [Net10Fact(Reason)]
    public async Task A_service_stopped_while_UDP_sockets_start_on_its_loop_stops_and_leaves_none_on_the_stopped_loop()
    {
        // The loop gives up every registration at its stop; one made a moment before its owner
        // stored it must end as the others do, not leave the loop waiting in the socket's close.
        var pool = new LeakCheckingBufferPool();
        for (var round = 0; round < 100; round++)
        {
            var service = StartService();
            var servers = new ConcurrentQueue<ProbeUdpServer>();
            var stopped = 0;
            using var go = new Barrier(3);
            var starters = new Task[2];
            for (var i = 0; i < starters.Length; i++)
            {
                starters[i] = Task.Factory.StartNew(() =>
                {
                    Assert.True(go.SignalAndWait(Wait.Default));
                    // Until three more after the stop (bounded, should the stop hang).
                    for (var after = 0; after < 3 && servers.Count < 1000; after += Volatile.Read(ref stopped))
                    {
                        var server = new ProbeUdpServer(new IPEndPoint(IPAddress.Loopback, 0), pool) { Service = service };
                        servers.Enqueue(server);
                        Assert.True(server.Start());
                    }
                }, CancellationToken.None, TaskCreationOptions.LongRunning, TaskScheduler.Default);
            }

            try
            {
                Assert.True(go.SignalAndWait(Wait.Default));
                var stop = Task.Run(service.Stop);
                Assert.True(await Task.WhenAny(stop, Task.Delay(Wait.Default)) == stop, $"round {round}: the service did not stop");
            }
            finally
            {
                Volatile.Write(ref stopped, 1);
            }

            await Task.WhenAll(starters).WaitAsync(Wait.Default);
            foreach (var server in servers)
            {
                // Closed with the loop, or started after it (the default mode): none is left on it.
                Assert.False(server.IsStarted && UdpTest.OnLoop(server), $"round {round}: a server started on the stopped loop");
                if (server.IsStarted)
                    Assert.True(await server.StopAsync().WaitAsync(Wait.Default));
                await server.Probe.Finished.Task.WaitAsync(Wait.Default);
                Assert.Null(server.Probe.LateHook);
                await server.DisposeAsync();
            }

            service.Dispose();
        }

        await pool.AssertAllReturnedAsync();
    }
}
