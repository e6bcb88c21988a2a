using System;
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
/// A TCP client on a loop that polls sockets connects through that loop's poller (a non-blocking
/// connect, then a wait for writability), not through the runtime's socket engine: every outcome
/// of a connect still holds there: success, refusal, a Disconnect, a cancellation or a stop of the
/// service while the connect is unanswered.
/// </summary>
public sealed class LoopConnectTests
{
    private static readonly TimeSpan s_timeout = TimeSpan.FromSeconds(20);

    private static IoService StartService()
    {
        var service = new IoService(1);
        Assert.True(service.Start());
        return service;
    }

    /// <summary>A listener whose accept queue is full: it drops further SYNs, so a connect to it stays unanswered.</summary>
    private sealed class Unanswered : IDisposable
    {
        private readonly Socket _listener = new(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        private readonly List<Socket> _fillers = new();

        public IPEndPoint Endpoint => (IPEndPoint)_listener.LocalEndPoint!;

        public static async Task<Unanswered> StartAsync()
        {
            var unanswered = new Unanswered();
            unanswered._listener.Bind(new IPEndPoint(IPAddress.Loopback, 0));
            unanswered._listener.Listen(1);
            var pending = new List<Task>();
            for (var i = 0; i < 4; i++)
            {
                var filler = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
                unanswered._fillers.Add(filler);
                pending.Add(filler.ConnectAsync(unanswered.Endpoint));
            }

            await Task.WhenAny(pending).WaitAsync(s_timeout);
            return unanswered;
        }

        public void Dispose()
        {
            foreach (var filler in _fillers)
                filler.Dispose();
            _listener.Dispose();
        }
    }

    [Net10Fact("the loops poll sockets in the net10.0 build only")]
    public async Task A_client_on_a_loop_connects_and_echoes_with_its_hooks_on_the_loop()
    {
        using var service = StartService();
        await using var harness = new ServerHarness(TransportKind.Tcp);
        harness.Probe.ConfigureSession = probe => probe.Received = (session, buffer, offset, size) => session.SendAsync(buffer, offset, size);
        Assert.True(harness.Start());

        var probe = new Probe();
        var threads = new List<string?>();
        probe.Received = (_, _, _, _) =>
        {
            lock (threads)
                threads.Add(Thread.CurrentThread.Name);
        };
        using var client = new ProbeTcpClient((IPEndPoint)harness.Endpoint, probe) { Service = service };
        Assert.True(await client.ConnectAsync(CancellationToken.None).WaitAsync(s_timeout));
        Assert.True(client.IsConnected);
        Assert.NotNull(client.Loop);
        Assert.Equal(harness.Endpoint, client.Socket!.RemoteEndPoint); // the runtime's view of the socket is up to date

        client.SendAsync("ping"u8.ToArray());
        await Wait.UntilAsync(() => probe.ReceivedBytes == 4, "the echo");
        lock (threads)
            Assert.All(threads, name => Assert.Equal($"NetServer loop {client.Loop!.Index}", name));
        Assert.True(client.Disconnect());
        Assert.Equal(DisconnectReason.LocalDisconnect, await probe.DisconnectedSignal.Task.WaitAsync(s_timeout));
    }

    [Net10Fact("the loops poll sockets in the net10.0 build only")]
    public async Task Clients_connected_one_after_another_spread_over_the_loops()
    {
        using var service = new IoService(2);
        Assert.True(service.Start());
        await using var harness = new ServerHarness(TransportKind.Tcp);
        Assert.True(harness.Start());
        var clients = new List<ProbeTcpClient>();
        try
        {
            for (var i = 0; i < 4; i++)
            {
                var client = new ProbeTcpClient((IPEndPoint)harness.Endpoint, new Probe()) { Service = service };
                clients.Add(client);
                Assert.True(await client.ConnectAsync(CancellationToken.None).WaitAsync(s_timeout));
            }

            // One loop pick per connection: the loop the connect waited on is the one it is pinned to.
            Assert.Equal(2, clients.Select(client => client.Loop!.Index).Distinct().Count());
        }
        finally
        {
            foreach (var client in clients)
                client.Dispose();
        }
    }

    [Fact]
    public async Task A_refused_connect_on_a_loop_fails_with_the_refusal()
    {
        using var service = StartService();
        using var bound = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        bound.Bind(new IPEndPoint(IPAddress.Loopback, 0)); // bound, never listening: a connect to it is refused
        var probe = new Probe();
        using var client = new ProbeTcpClient((IPEndPoint)bound.LocalEndPoint!, probe) { Service = service };

        var error = await Assert.ThrowsAsync<SocketException>(() => client.ConnectAsync(CancellationToken.None)).WaitAsync(s_timeout);
        Assert.Equal(SocketError.ConnectionRefused, error.SocketErrorCode);
        Assert.Equal(DisconnectReason.ConnectFailed, await probe.DisconnectedSignal.Task.WaitAsync(s_timeout));
        Assert.False(client.IsConnecting);
    }

    [Fact]
    public async Task Disconnect_ends_an_unanswered_connect_on_a_loop_at_once()
    {
        using var service = StartService();
        using var unanswered = await Unanswered.StartAsync();
        var probe = new Probe();
        using var client = new ProbeTcpClient(unanswered.Endpoint, probe) { Service = service };

        Assert.True(client.ConnectAsync());
        await Wait.UntilAsync(() => client.IsConnecting, "the connect under way");
        Assert.True(client.Disconnect());
        Assert.Equal(DisconnectReason.ConnectFailed, await probe.DisconnectedSignal.Task.WaitAsync(s_timeout));
        Assert.False(client.IsConnecting);
        Assert.False(client.IsConnected);
    }

    // Only where the connect waits on the loop: a connect through the runtime's engine (the netstandard
    // builds, or another OS) does not belong to the service, and its stop does not end it.
    [Net10Fact("the connect waits on the loop's poller in the net10.0 build only")]
    public async Task A_stop_of_the_service_ends_an_unanswered_connect_on_its_loop()
    {
        var service = StartService();
        using var unanswered = await Unanswered.StartAsync();
        var probe = new Probe();
        using var client = new ProbeTcpClient(unanswered.Endpoint, probe) { Service = service };

        var connecting = client.ConnectAsync(CancellationToken.None);
        await Wait.UntilAsync(() => client.IsConnecting, "the connect under way");
        service.Dispose();
        await Assert.ThrowsAsync<SocketException>(() => connecting).WaitAsync(s_timeout);
        Assert.Equal(DisconnectReason.ConnectFailed, await probe.DisconnectedSignal.Task.WaitAsync(s_timeout));
        Assert.False(client.IsConnecting);
    }
}
