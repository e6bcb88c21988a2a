using System;
using System.Collections.Concurrent;
using System.Collections.Generic;
using System.Linq;
using System.Net;
using System.Net.Sockets;
using System.Threading;
using System.Threading.Tasks;
using NetServer.Tests.Infrastructure;
using Xunit;

namespace NetServer.Tests.Service;

/// <summary>
/// A server on a service whose loops poll sockets accepts on the loops themselves: each loop
/// polls the listener and accepts there, and each connection is set up on the next loop in turn,
/// its connect hooks on that loop's thread (or on the thread pool when the hooks run there). A
/// stop lets the listener go; a service that stops under a listening server hands accepting back
/// to the runtime's engine.
/// </summary>
public sealed class LoopAcceptTests
{
    private static readonly TimeSpan s_timeout = TimeSpan.FromSeconds(20);

    private static IoService StartService(int threads)
    {
        var service = new IoService(threads);
        Assert.True(service.Start());
        return service;
    }

    /// <summary>Raw sockets connected to the server under test, closed together.</summary>
    private sealed class RawSockets(List<Socket> sockets) : IDisposable
    {
        public async Task EchoAllAsync()
        {
            foreach (var socket in sockets)
                await EchoAsync(socket);
        }

        public void Dispose()
        {
            foreach (var socket in sockets)
                socket.Dispose();
        }
    }

    private static async Task<RawSockets> ConnectAsync(ServerHarness harness, int count)
    {
        var sockets = new List<Socket>();
        var connected = new RawSockets(sockets);
        try
        {
            for (var i = 0; i < count; i++)
                sockets.Add(await harness.ConnectRawAsync());
            await harness.Probe.WaitForSessionsAsync(count, s_timeout);
            return connected;
        }
        catch
        {
            connected.Dispose();
            throw;
        }
    }

    private static async Task EchoAsync(Socket socket)
    {
        await socket.SendAsync("ping"u8.ToArray(), SocketFlags.None).WaitAsync(s_timeout);
        var buffer = new byte[4];
        var read = 0;
        while (read < 4)
        {
            var n = await socket.ReceiveAsync(buffer.AsMemory(read), SocketFlags.None).AsTask().WaitAsync(s_timeout);
            Assert.True(n > 0, "the server closed instead of echoing");
            read += n;
        }

        Assert.Equal("ping"u8.ToArray(), buffer);
    }

    private static void Echo(ServerHarness harness) =>
        harness.Probe.ConfigureSession = probe => probe.Received = (session, buffer, offset, size) => session.SendAsync(buffer, offset, size);

    [Net10Fact("the loops poll sockets in the net10.0 build only")]
    public Task Tcp_connections_are_set_up_on_the_loops_in_turn_with_their_connect_hooks_there() => SetUpOnTheLoopsAsync(TransportKind.Tcp);

    [Net10Fact("the loops poll sockets in the net10.0 build only")]
    public Task Unix_socket_connections_are_set_up_on_the_loops_in_turn_with_their_connect_hooks_there() => SetUpOnTheLoopsAsync(TransportKind.Uds);

    private static async Task SetUpOnTheLoopsAsync(TransportKind kind)
    {
        using var service = StartService(2);
        await using var harness = new ServerHarness(kind);
        harness.Server.Service = service;
        Echo(harness);
        var connectThreads = new ConcurrentQueue<string?>();
        var loops = new ConcurrentQueue<int>();
        harness.Probe.Connected = session =>
        {
            connectThreads.Enqueue(Thread.CurrentThread.Name);
            loops.Enqueue(session.Loop?.Index ?? -1);
        };
        Assert.True(harness.Start());

        using var sockets = await ConnectAsync(harness, 6);
        // OnConnected ran on the thread of the loop its session is pinned to, and the six
        // sessions went to the two loops in turn.
        Assert.All(connectThreads, name => Assert.StartsWith("NetServer loop ", name));
        Assert.Equal([3, 3], loops.GroupBy(index => index).Select(g => g.Count()).OrderBy(n => n));
        await sockets.EchoAllAsync();
    }

    [Net10Fact("the loops poll sockets in the net10.0 build only")]
    public async Task With_hooks_on_the_thread_pool_the_connect_hooks_stay_off_the_loops()
    {
        using var service = StartService(2);
        await using var harness = new ServerHarness(TransportKind.Tcp);
        harness.Server.Service = service;
        harness.Server.OptionHooksOnLoop = false;
        Echo(harness);
        var connectThreads = new ConcurrentQueue<string?>();
        harness.Probe.Connected = session => connectThreads.Enqueue(Thread.CurrentThread.Name);
        Assert.True(harness.Start());

        using var sockets = await ConnectAsync(harness, 4);
        Assert.All(connectThreads, name => Assert.False(name?.StartsWith("NetServer loop ", StringComparison.Ordinal) ?? false, name));
        await sockets.EchoAllAsync();
    }

    [Net10Fact("the loops poll sockets in the net10.0 build only")]
    public async Task A_stopped_server_lets_its_listener_go_and_starts_again_on_the_same_port()
    {
        using var service = StartService(2);
        await using var harness = new ServerHarness(TransportKind.Tcp);
        harness.Server.Service = service;
        Echo(harness);
        Assert.True(harness.Start());
        var endpoint = (IPEndPoint)harness.Endpoint;
        using (var first = await ConnectAsync(harness, 1))
            await first.EchoAllAsync();

        Assert.True(harness.Stop());

        // Closed, not merely no longer polled: a connect is refused (a listener the loops still
        // held would take it into its backlog).
        using (var refused = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp))
        {
            var failure = await Assert.ThrowsAsync<SocketException>(() => refused.ConnectAsync(endpoint).WaitAsync(s_timeout));
            Assert.Equal(SocketError.ConnectionRefused, failure.SocketErrorCode);
        }

        Assert.True(harness.Start());
        Assert.Equal(endpoint, harness.Endpoint);
        using var second = await harness.ConnectRawAsync();
        await EchoAsync(second);
    }

    [Net10Fact("the loops poll sockets in the net10.0 build only")]
    public async Task A_server_whose_service_stops_goes_on_accepting_on_the_default_transport()
    {
        var service = StartService(2);
        await using var harness = new ServerHarness(TransportKind.Tcp);
        harness.Server.Service = service;
        Echo(harness);
        Assert.True(harness.Start());
        using (var first = await ConnectAsync(harness, 1))
            await first.EchoAllAsync();

        service.Dispose(); // its sessions end; the listener stays open

        using var later = await harness.ConnectRawAsync();
        await harness.Probe.WaitForSessionsAsync(2, s_timeout);
        await EchoAsync(later);
        var session = harness.Probe.Sessions.Keys.Select(harness.Server.FindSession).Single(s => s is not null);
        Assert.Null(session!.Loop);
    }

    [Net10Fact("the loops poll sockets in the net10.0 build only")]
    public async Task The_session_limit_holds_for_connections_accepted_on_the_loops()
    {
        using var service = StartService(2);
        await using var harness = new ServerHarness(TransportKind.Tcp);
        harness.Server.Service = service;
        harness.Server.OptionMaxSessions = 2;
        Echo(harness);
        Assert.True(harness.Start());
        using var sockets = await ConnectAsync(harness, 2);
        using var third = await harness.ConnectRawAsync();
        await Wait.UntilAsync(() => harness.Server.RejectedSessions == 1, "the third connection refused");
        var n = await third.ReceiveAsync(new byte[1], SocketFlags.None).WaitAsync(s_timeout);
        Assert.Equal(0, n); // closed by the server
        Assert.Equal(2, harness.Server.ConnectedSessions);
        await sockets.EchoAllAsync();
    }
}
