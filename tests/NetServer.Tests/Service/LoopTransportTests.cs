using System;
using System.Collections.Concurrent;
using System.Linq;
using System.Net.Sockets;
using System.Threading;
using System.Threading.Tasks;
using NetServer.Tests.Infrastructure;
using Xunit;

namespace NetServer.Tests.Service;

/// <summary>
/// Sessions and clients on the loops of an <see cref="IoService"/>: on Linux the loop polls their
/// sockets (epoll) and runs their receive hooks on its own thread, or on the thread pool when asked.
/// </summary>
public sealed class LoopTransportTests
{
    private static readonly TimeSpan s_timeout = TimeSpan.FromSeconds(30);

    /// <summary>The loops poll sockets on Linux in the net10.0 build; the netstandard builds fall back to the default transport.</summary>
    private static bool Native => Net10FactAttribute.IsNet10Build && OperatingSystem.IsLinux();

    private static IoService StartService(int threads)
    {
        var service = new IoService(threads);
        Assert.True(service.Start());
        if (Native)
            Assert.Null(service.NativeTransportUnavailableReason);
        else
            Assert.Contains("default transport", service.NativeTransportUnavailableReason);
        return service;
    }

    private static void Use(ServerHarness harness, IoService service, bool hooksOnLoop = true)
    {
        harness.Server.Service = service;
        harness.Server.OptionHooksOnLoop = hooksOnLoop;
    }

    private static byte[] Pattern(int length, int seed)
    {
        var data = new byte[length];
        for (var i = 0; i < length; i++)
            data[i] = (byte)((i * 31) + seed);
        return data;
    }

    [Theory]
    [MemberData(nameof(Transports.All), MemberType = typeof(Transports))]
    public async Task Sessions_and_clients_on_loops_echo_in_order_with_their_hooks_on_the_loop_threads(TransportKind kind)
    {
        using var service = StartService(2);
        await using var harness = new ServerHarness(kind);
        Use(harness, service);
        var serverThreads = new ConcurrentDictionary<string, bool>();
        harness.Probe.ConfigureSession = probe => probe.Received = (session, buffer, offset, size) =>
        {
            serverThreads[Thread.CurrentThread.Name ?? "?"] = true;
            session.SendAsync(buffer, offset, size);
        };
        Assert.True(harness.Start());

        var clientProbe = new Probe();
        var received = new System.IO.MemoryStream();
        var clientThreads = new ConcurrentDictionary<string, bool>();
        clientProbe.Received = (_, buffer, offset, size) =>
        {
            clientThreads[Thread.CurrentThread.Name ?? "?"] = true;
            lock (received)
                received.Write(buffer, (int)offset, (int)size);
        };
        using var client = harness.CreateClient(clientProbe);
        client.Service = service;
        Assert.True(await client.ConnectAsync(CancellationToken.None).WaitAsync(s_timeout));
        await harness.Probe.WaitForSessionsAsync(1);
        var session = harness.Probe.Sessions.Keys.Select(harness.FindSession).Single()!;
        Assert.Equal(Native, client.Loop is not null);
        Assert.Equal(Native, session.Loop is not null);

        var data = Pattern(1 << 20, 7);
        for (var sent = 0; sent < data.Length; sent += 10_000)
            Assert.True(client.SendAsync(data, sent, Math.Min(10_000, data.Length - sent)));
        await Wait.UntilAsync(() => { lock (received) return received.Length == data.Length; }, "the whole echo", s_timeout);
        Assert.Equal(data, received.ToArray());
        if (Native)
        {
            Assert.All(serverThreads.Keys, name => Assert.StartsWith("NetServer loop", name));
            Assert.All(clientThreads.Keys, name => Assert.StartsWith("NetServer loop", name));
        }
        else
        {
            Assert.DoesNotContain(serverThreads.Keys.Concat(clientThreads.Keys), name => name.StartsWith("NetServer loop", StringComparison.Ordinal));
        }

        Assert.False(harness.Probe.Sessions.Values.Single().ReceivedOverlapped);
    }

    [Fact]
    public async Task Hooks_run_on_the_thread_pool_when_the_server_asks_so_and_a_blocking_hook_holds_up_only_itself()
    {
        using var service = StartService(1); // both sessions on the same loop
        await using var harness = new ServerHarness(TransportKind.Tcp);
        Use(harness, service, hooksOnLoop: false);
        var onPool = 0;
        var offPool = 0;
        using var release = new ManualResetEventSlim();
        harness.Probe.ConfigureSession = probe => probe.Received = (session, buffer, offset, size) =>
        {
            Interlocked.Increment(ref Thread.CurrentThread.IsThreadPoolThread ? ref onPool : ref offPool);
            if (buffer[offset] == (byte)'B')
                release.Wait(s_timeout); // a hook that blocks
            session.SendAsync(buffer, offset, size);
        };
        Assert.True(harness.Start());

        using var blocker = await harness.ConnectRawAsync();
        using var other = await harness.ConnectRawAsync();
        await harness.Probe.WaitForSessionsAsync(2);
        Assert.All(harness.Probe.Sessions.Keys.Select(harness.FindSession), s => Assert.Same(Native ? service.Loops[0] : null, s!.Loop));
        await blocker.SendAsync(new[] { (byte)'B' }, SocketFlags.None);
        await Task.Delay(100);
        await other.SendAsync(new[] { (byte)'x' }, SocketFlags.None);
        var reply = new byte[1];
        Assert.Equal(1, await other.ReceiveAsync(reply, SocketFlags.None).WaitAsync(s_timeout));
        Assert.Equal((byte)'x', reply[0]); // answered while the other session's hook still blocks
        release.Set();
        Assert.Equal(1, await blocker.ReceiveAsync(reply, SocketFlags.None).WaitAsync(s_timeout));
        Assert.Equal(0, offPool);
        Assert.Equal(2, onPool);
    }

    [Fact]
    public async Task A_send_larger_than_the_kernel_buffers_waits_for_the_poller_and_arrives_whole()
    {
        using var service = StartService(1);
        await using var harness = new ServerHarness(TransportKind.Tcp);
        Use(harness, service);
        var data = Pattern(32 << 20, 3);
        var emptied = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        harness.Probe.ConfigureSession = probe =>
        {
            probe.Connected = session =>
            {
                session.OptionSendBufferLimit = 64 << 20;
                Assert.True(session.SendAsync(data));
            };
            probe.Empty = _ => emptied.TrySetResult();
        };
        Assert.True(harness.Start());

        using var reader = await harness.ConnectRawAsync();
        await Task.Delay(300); // the kernel buffers fill and the session's flush waits for writability
        var got = new byte[data.Length];
        var total = 0;
        while (total < got.Length)
        {
            var n = await reader.ReceiveAsync(got.AsMemory(total), SocketFlags.None).AsTask().WaitAsync(s_timeout);
            Assert.NotEqual(0, n);
            total += n;
        }

        Assert.Equal(data, got);
        await emptied.Task.WaitAsync(s_timeout);
        Assert.Equal(data.Length, harness.BytesSent);
    }

    [Net10Fact("the loops poll sockets only in the net10.0 build")]
    public async Task Stopping_the_service_ends_its_connections_and_a_restarted_service_takes_new_ones()
    {
        using var service = StartService(2);
        await using var harness = new ServerHarness(TransportKind.Tcp);
        Use(harness, service);
        harness.Probe.ConfigureSession = probe => probe.Received = (session, buffer, offset, size) => session.SendAsync(buffer, offset, size);
        Assert.True(harness.Start());

        using var first = await harness.ConnectRawAsync();
        await harness.Probe.WaitForSessionsAsync(1);
        var probe = harness.Probe.Sessions.Values.Single();
        Assert.True(service.Stop());
        Assert.Equal(DisconnectReason.ServerStopped, await probe.DisconnectedSignal.Task.WaitAsync(s_timeout));
        var buffer = new byte[1];
        Assert.Equal(0, await first.ReceiveAsync(buffer, SocketFlags.None).WaitAsync(s_timeout)); // the peer sees the end

        Assert.True(service.Start());
        using var second = await harness.ConnectRawAsync();
        await second.SendAsync(new[] { (byte)'y' }, SocketFlags.None);
        Assert.Equal(1, await second.ReceiveAsync(buffer, SocketFlags.None).WaitAsync(s_timeout));
        Assert.Equal((byte)'y', buffer[0]);
        Assert.Equal(1, harness.ConnectedSessions);
    }

    [Net10Fact("the loops poll sockets only in the net10.0 build")]
    public async Task A_loop_whose_epoll_fails_ends_its_connections_and_falls_back_to_the_default_transport()
    {
        if (!Native)
            return;
        using var service = new ErrorRecordingService(1);
        Assert.True(service.Start());
        var errors = service.Errors;
        await using var harness = new ServerHarness(TransportKind.Tcp);
        Use(harness, service);
        harness.Probe.ConfigureSession = probe => probe.Received = (session, buffer, offset, size) => session.SendAsync(buffer, offset, size);
        Assert.True(harness.Start());

        using var first = await harness.ConnectRawAsync();
        await harness.Probe.WaitForSessionsAsync(1);
        var firstProbe = harness.Probe.Sessions.Values.Single();
        Assert.NotNull(harness.FindSession(harness.Probe.Sessions.Keys.Single())!.Loop);

        service.Loops[0].FailPollerForTests();
        Assert.Equal(DisconnectReason.ServerStopped, await firstProbe.DisconnectedSignal.Task.WaitAsync(s_timeout));
        await Wait.UntilAsync(() => !errors.IsEmpty, "the failure reported", s_timeout);
        Assert.Contains("epoll_wait failed", errors.Single().Message);
        Assert.Contains("epoll_wait failed", service.NativeTransportUnavailableReason);

        // The loop still runs posted work, woken on its gate now.
        var posted = new TaskCompletionSource<string?>(TaskCreationOptions.RunContinuationsAsynchronously);
        Assert.True(service.Loops[0].Post(() => posted.TrySetResult(Thread.CurrentThread.Name)));
        Assert.StartsWith("NetServer loop", await posted.Task.WaitAsync(s_timeout));

        // A new connection is served on the default transport.
        using var second = await harness.ConnectRawAsync();
        await second.SendAsync(new[] { (byte)'z' }, SocketFlags.None);
        var reply = new byte[1];
        Assert.Equal(1, await second.ReceiveAsync(reply, SocketFlags.None).WaitAsync(s_timeout));
        Assert.Equal((byte)'z', reply[0]);
        var secondId = harness.Probe.Sessions.Keys.Single(id => harness.Probe.Sessions[id] != firstProbe);
        Assert.Null(harness.FindSession(secondId)!.Loop);
    }

    private sealed class ErrorRecordingService(int threads) : IoService(threads)
    {
        public ConcurrentQueue<Exception> Errors { get; } = new();

        protected override void OnError(Exception exception) => Errors.Enqueue(exception);
    }
}
