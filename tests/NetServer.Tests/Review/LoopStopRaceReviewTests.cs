using System.Collections.Concurrent;
using System.Net.Sockets;
using System.Threading;
using System.Threading.Tasks;
using NetServer.Tests.Infrastructure;
using Xunit;

namespace NetServer.Tests.Review;

/// <summary>
/// A service stopped while stream servers start on it and sessions are set up on it from the thread
/// pool (from a read-only review): a loop's stop gives up sockets whose owner has not stored their
/// registration yet, and acceptors registering while the loops go.
/// </summary>
public sealed class LoopStopRaceReviewTests
{
    private const string Reason = "the loops poll sockets in the net10.0 build only";

    [Net10Fact(Reason)]
    public async Task A_service_stopped_while_sessions_are_set_up_from_the_thread_pool_stops_and_the_server_serves_on()
    {
        // Sessions set up on the pool register with the loop from there; a stop between the
        // registration and its owner storing it closed the socket while the poller still held it,
        // and the close (with the loop's stop) waited for ever.
        for (var round = 0; round < 50; round++)
        {
            var service = new IoService(1);
            Assert.True(service.Start());
            await using var harness = new ServerHarness(TransportKind.Tcp);
            harness.Server.Service = service;
            harness.Server.OptionHooksOnLoop = false;
            harness.Probe.ConfigureSession = probe => probe.Received = (session, buffer, offset, size) => session.SendAsync(buffer, offset, size);
            Assert.True(harness.Start());

            var sockets = new ConcurrentQueue<Socket>();
            var stopped = 0;
            var connectors = new Task[2];
            for (var i = 0; i < connectors.Length; i++)
            {
                connectors[i] = Task.Run(async () =>
                {
                    // Until a few more after the stop (bounded, should the stop hang).
                    for (var after = 0; after < 5 && sockets.Count < 400; after += Volatile.Read(ref stopped))
                    {
                        var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
                        sockets.Enqueue(socket);
                        await socket.ConnectAsync(harness.Endpoint).WaitAsync(Wait.Default);
                    }
                });
            }

            try
            {
                await Wait.UntilAsync(() => sockets.Count >= 10, "the first connects");
                var stop = Task.Run(service.Stop);
                Assert.True(await Task.WhenAny(stop, Task.Delay(Wait.Default)) == stop, $"round {round}: the service did not stop");
                await stop;
            }
            finally
            {
                Volatile.Write(ref stopped, 1);
                await Task.WhenAll(connectors).WaitAsync(Wait.Default);
            }

            // The server goes on, on the default transport: a new connection is echoed.
            using (var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp))
            {
                await socket.ConnectAsync(harness.Endpoint).WaitAsync(Wait.Default);
                await socket.SendAsync("ping"u8.ToArray(), SocketFlags.None);
                var buffer = await Wait.ReadExactlyAsync(socket, 4);
                Assert.Equal("ping"u8.ToArray(), buffer);
            }

            foreach (var socket in sockets)
                socket.Dispose();
            service.Dispose();
        }
    }

    [Net10Fact(Reason)]
    public async Task A_server_started_while_its_service_stops_still_accepts()
    {
        // The acceptors' count was set after every loop had registered: a loop abandoned meanwhile
        // went uncounted, the last abandon never handed accepting back to the runtime, and the
        // listener stayed open with nobody accepting.
        for (var round = 0; round < 30; round++)
        {
            var service = new IoService(2);
            Assert.True(service.Start());
            await using var harness = new ServerHarness(TransportKind.Tcp);
            harness.Server.Service = service;
            using var go = new Barrier(2);
            var start = Task.Factory.StartNew(() =>
            {
                Assert.True(go.SignalAndWait(Wait.Default));
                return harness.Start();
            }, CancellationToken.None, TaskCreationOptions.LongRunning, TaskScheduler.Default);
            Assert.True(go.SignalAndWait(Wait.Default));
            if (round % 2 == 1)
                Thread.SpinWait(round * 200); // the stop at a different point of the start in each round
            service.Stop();
            Assert.True(await start.WaitAsync(Wait.Default));

            using var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
            await socket.ConnectAsync(harness.Endpoint).WaitAsync(Wait.Default);
            await Wait.UntilAsync(() => harness.Probe.Sessions.Count == 1, $"round {round}: the connection accepted after the service stopped");
            service.Dispose();
        }
    }
}
