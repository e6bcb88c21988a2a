using System;
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
/// Start, Stop, Restart, Connect, Disconnect, Reconnect and Dispose: hooks in order with the final
/// one last, even while datagrams flow both ways; shutdown bounded and leaking no pooled buffer;
/// counters exact and reset at start (restarts on the same port: UdpRestartTests); lifecycle calls from inside
/// hooks; and the compatible blocking Send and Receive. Every test but the one of socket options
/// runs in both I/O modes.
/// </summary>
public partial class UdpLifecycleTests
{
    private static readonly TimeSpan s_prompt = TimeSpan.FromSeconds(5);

    /// <summary>Ways to shut a server down.</summary>
    public enum ServerShutdown
    {
        Stop,
        StopAsync,
        Dispose,
        DisposeAsync,
    }

    /// <summary>Ways to close a client.</summary>
    public enum ClientShutdown
    {
        Disconnect,
        Dispose,
        DisposeAsync,
    }

    /// <summary>
    /// Datagrams both ways until disposed: plain peers flood the server, and a pool task sends from
    /// the server to them (awaiting each send, so the queue stays bounded). The peers never read;
    /// the kernel drops what does not fit, which is fine here.
    /// </summary>
    private sealed class Traffic : IAsyncDisposable
    {
        private readonly CancellationTokenSource _stop = new();
        private readonly Task[] _tasks;

        public Traffic(UdpPeer peer, EndPoint target, int peers = 3)
        {
            Peers = Enumerable.Range(0, peers).Select(_ => new RawUdp(IPAddress.Loopback, receiveBufferSize: 64 * 1024)).ToArray();
            var floods = Peers.Select(raw => Task.Run(async () =>
            {
                var data = new byte[64];
                while (!_stop.IsCancellationRequested)
                {
                    for (var i = 0; i < 16; i++)
                        raw.Socket.SendTo(data, target);
                    await Task.Yield();
                }
            }));
            var replies = Task.Run(async () =>
            {
                var data = new byte[64];
                for (var i = 0; !_stop.IsCancellationRequested; i++)
                {
                    if (!await peer.SendAsync(Peers[i % Peers.Length].Endpoint, data.AsMemory()))
                        await Task.Delay(1);
                    if (i % 16 == 0)
                        await Task.Yield();
                }
            });
            _tasks = floods.Append(replies).ToArray();
        }

        public RawUdp[] Peers { get; }

        public async ValueTask DisposeAsync()
        {
            _stop.Cancel();
            await Task.WhenAll(_tasks).WaitAsync(Wait.Default);
            foreach (var raw in Peers)
                raw.Dispose();
            _stop.Dispose();
        }
    }

    private static async Task<TimeSpan> TimeAsync(Func<Task> action)
    {
        var watch = Stopwatch.StartNew();
        await action().WaitAsync(Wait.Default);
        return watch.Elapsed;
    }

    public static TheoryData<UdpIo, ServerShutdown> ServerShutdowns => UdpModes.Each(Enum.GetValues<ServerShutdown>());

    public static TheoryData<UdpIo, ClientShutdown> ClientShutdowns => UdpModes.Each(Enum.GetValues<ClientShutdown>());

    [Theory]
    [MemberData(nameof(UdpModes.All), MemberType = typeof(UdpModes))]
    public async Task A_server_answering_datagrams_keeps_receiving_while_other_threads_keep_its_send_queue_full(UdpIo io)
    {
        // The thread that answers a datagram finds the send queue idle and becomes its flusher;
        // senders on other threads then refill the queue much faster than it drains. A flusher
        // that kept the role for good would keep the dedicated receive thread from receiving again.
        var pool = new LeakCheckingBufferPool();
        var server = new ProbeUdpServer(UdpTest.Loopback(AddressFamily.InterNetwork), pool) { Io = io, OptionAutoReceive = true };
        var receiveThread = 0;
        var held = 0;
        var refill = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        using var filled = new ManualResetEventSlim();
        server.Probe.KeepDatagrams = false;
        server.Probe.OnReceive = (peer, from, buffer, offset, size) =>
        {
            Volatile.Write(ref receiveThread, Environment.CurrentManagedThreadId);
            peer.SendAsync(from, buffer, offset, size);
        };
        server.Probe.OnSend = (_, _, _) =>
        {
            // The first answer's OnSent, on the thread that received it (now the flusher): let the
            // other senders fill the queue before it goes on flushing.
            if (Environment.CurrentManagedThreadId == Volatile.Read(ref receiveThread) && Interlocked.Exchange(ref held, 1) == 0)
            {
                refill.TrySetResult();
                filled.Wait(Wait.Default);
            }
        };
        Assert.True(server.Start());
        using var sink = new RawUdp(IPAddress.Loopback, receiveBufferSize: 64 * 1024);
        using var stop = new CancellationTokenSource();
        var refills = Enumerable.Range(0, 4).Select(_ => Task.Run(async () =>
        {
            await refill.Task;
            var data = new byte[64];
            while (!stop.IsCancellationRequested)
            {
                if (!await server.SendAsync(sink.Endpoint, data.AsMemory()))
                    await Task.Yield();
                if (server.BytesPending > 32 * 1024)
                    filled.Set();
            }
        })).ToArray();
        try
        {
            using var flood = new RawUdp(IPAddress.Loopback, receiveBufferSize: 64 * 1024);
            var data = new byte[64];
            var sent = 0;
            await Wait.UntilAsync(
                () =>
                {
                    for (var i = 0; i < 32; i++, sent++)
                        flood.Socket.SendTo(data, server.Endpoint);
                    return server.DatagramsReceived > 1000;
                },
                () => $"the server to keep receiving (received {server.DatagramsReceived} of {sent} sent to it, sent {server.DatagramsSent}, answer held: {Volatile.Read(ref held)})");
        }
        finally
        {
            stop.Cancel();
            filled.Set();
            await Task.WhenAll(refills).WaitAsync(Wait.Default);
            await server.DisposeAsync();
        }
    }

    [Theory]
    [MemberData(nameof(ServerShutdowns))]
    public async Task Server_shutdown_while_traffic_flows_both_ways_is_prompt_leaks_nothing_and_OnStopped_comes_last(UdpIo io, ServerShutdown how)
    {
        var pool = new LeakCheckingBufferPool();
        var server = new ProbeUdpServer(UdpTest.Loopback(AddressFamily.InterNetwork), pool) { Io = io, OptionAutoReceive = true };
        server.Probe.KeepDatagrams = false;
        server.Probe.OnReceive = (peer, from, buffer, offset, size) => peer.SendAsync(from, buffer, offset, size);
        Assert.True(server.Start());
        await using (var traffic = new Traffic(server, server.Endpoint))
        {
            await Wait.UntilAsync(
                () => server.DatagramsReceived > 500 && server.DatagramsSent > 500,
                () => $"traffic both ways (received {server.DatagramsReceived}, sent {server.DatagramsSent}, pending {server.BytesPending} B, errors: {server.Probe.Errors.Count} of {string.Join(", ", server.Probe.Errors.Distinct())})");
            var took = await TimeAsync(how switch
            {
                ServerShutdown.Stop => () => HarnessExtensions.RunBlocking(server.Stop),
                ServerShutdown.StopAsync => server.StopAsync,
                ServerShutdown.Dispose => () => HarnessExtensions.RunBlocking(() =>
                {
                    server.Dispose();
                    return true;
                }),
                _ => () => server.DisposeAsync().AsTask(),
            });
            Assert.True(took < s_prompt, $"{how} took {took}.");
            Assert.False(server.IsStarted);
            Assert.True(server.IsSocketDisposed);
            Assert.Equal(new[] { "starting", "started", "stopping", "stopped" }, server.Probe.Events);

            // Traffic goes on arriving at the closed port and sends keep being tried: nothing reaches a hook.
            var sent = server.DatagramsSent;
            await Task.Delay(100);
            Assert.False(server.SendAsync(traffic.Peers[0].Endpoint, "late"));
            Assert.Equal(sent, server.DatagramsSent);
            Assert.Null(server.Probe.LateHook);
        }

        Assert.Null(server.Probe.LateHook);
        Assert.Equal(0, server.BytesPending);
        server.Dispose();
        await pool.AssertAllReturnedAsync();
    }

    [Theory]
    [MemberData(nameof(ClientShutdowns))]
    public async Task Client_shutdown_while_traffic_flows_both_ways_is_prompt_leaks_nothing_and_OnDisconnected_comes_last(UdpIo io, ClientShutdown how)
    {
        var pool = new LeakCheckingBufferPool();
        using var server = new RawUdp(IPAddress.Loopback, receiveBufferSize: 64 * 1024);
        var client = new ProbeUdpClient(server.Endpoint, pool) { Io = io, OptionAutoReceive = true };
        client.Probe.KeepDatagrams = false;
        Assert.True(client.Connect());
        var local = client.LocalEndpoint; // read once: the probe asks the socket, which the shutdown disposes
        var flood = Task.Run(async () =>
        {
            var data = new byte[64];
            for (var i = 0; client.IsConnected; i++)
            {
                server.Socket.SendTo(data, local);
                if (i % 16 == 0)
                    await Task.Yield();
            }
        });
        var sends = Task.Run(async () =>
        {
            var data = new byte[64];
            for (var i = 0; await client.SendAsync(data.AsMemory()); i++)
            {
                if (i % 16 == 0)
                    await Task.Yield();
            }
        });

        await Wait.UntilAsync(
            () => client.DatagramsReceived > 500 && client.DatagramsSent > 500,
            () => $"traffic both ways (received {client.DatagramsReceived}, sent {client.DatagramsSent}, pending {client.BytesPending} B, errors: {client.Probe.Errors.Count} of {string.Join(", ", client.Probe.Errors.Distinct())})");
        var took = await TimeAsync(how switch
        {
            ClientShutdown.Disconnect => () => HarnessExtensions.RunBlocking(client.Disconnect),
            ClientShutdown.Dispose => () => HarnessExtensions.RunBlocking(() =>
            {
                client.Dispose();
                return true;
            }),
            _ => () => client.DisposeAsync().AsTask(),
        });
        Assert.True(took < s_prompt, $"{how} took {took}.");
        await Task.WhenAll(flood, sends).WaitAsync(Wait.Default);
        Assert.False(client.IsConnected);
        Assert.Equal(new[] { "connecting", "connected", "disconnecting", "disconnected" }, client.Probe.Events);
        Assert.Null(client.Probe.LateHook);
        Assert.Equal(0, client.BytesPending);
        client.Dispose();
        await pool.AssertAllReturnedAsync();
    }

    [Theory]
    [MemberData(nameof(UdpModes.All), MemberType = typeof(UdpModes))]
    public async Task Start_and_Stop_say_false_when_they_have_nothing_to_do_and_Dispose_is_idempotent(UdpIo io)
    {
        var pool = new LeakCheckingBufferPool();
        var server = new ProbeUdpServer(UdpTest.Loopback(AddressFamily.InterNetwork), pool) { Io = io };
        Assert.True(server.Start());
        Assert.False(server.Start());
        Assert.False(server.Start(IPAddress.Parse("239.255.0.1"), 5000));
        Assert.True(server.IsStarted);
        Assert.False(server.IsSocketDisposed);
        Assert.True(server.Stop());
        Assert.False(server.Stop());
        Assert.False(await server.StopAsync());
        server.Dispose();
        server.Dispose();
        await server.DisposeAsync();
        Assert.True(server.IsDisposed);
        Assert.Equal(new[] { "starting", "started", "stopping", "stopped" }, server.Probe.Events);

        var client = new ProbeUdpClient(new IPEndPoint(IPAddress.Loopback, 9), pool) { Io = io };
        Assert.True(client.Connect());
        Assert.False(client.Connect());
        Assert.True(client.Disconnect());
        Assert.False(client.Disconnect());
        await client.DisposeAsync();
        client.Dispose();
        Assert.Equal(new[] { "connecting", "connected", "disconnecting", "disconnected" }, client.Probe.Events);
        await pool.AssertAllReturnedAsync();
    }
}
