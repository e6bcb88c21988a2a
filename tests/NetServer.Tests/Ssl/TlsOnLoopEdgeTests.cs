using System;
using System.Linq;
using System.Threading;
using System.Threading.Tasks;
using NetServer.Tests.Infrastructure;
using Xunit;

namespace NetServer.Tests.Ssl;

/// <summary>
/// Edges of TLS on the loops transport: a synchronous connect made on the thread of the loop the
/// client lands on, request/response rounds of every size (a lost wake-up stalls a round), a
/// service stop during a handshake, a graceful close (close_notify) of an idle session.
/// </summary>
public sealed class TlsOnLoopEdgeTests
{
    private static readonly TimeSpan s_timeout = TimeSpan.FromSeconds(30);

    [Net10Fact("the loops poll sockets only in the net10.0 build")]
    public async Task A_synchronous_TLS_connect_made_on_the_thread_of_its_own_loop_completes()
    {
        if (!OperatingSystem.IsLinux())
            return;
        await using var harness = new ServerHarness(TransportKind.Ssl);
        Assert.True(harness.Start());
        using var clientService = new IoService(1); // the client can only land on the loop that connects it
        Assert.True(clientService.Start());
        using var client = (SslClient)harness.CreateClient(new Probe());
        client.Service = clientService;
        client.Context.HandshakeTimeout = TimeSpan.FromSeconds(6);

        var connected = new TaskCompletionSource<(bool Connected, TimeSpan Took)>(TaskCreationOptions.RunContinuationsAsynchronously);
        Assert.True(clientService.Loops[0].Post(() =>
        {
            var started = DateTime.UtcNow;
            try
            {
                connected.TrySetResult((client.Connect(), DateTime.UtcNow - started));
            }
            catch (Exception e)
            {
                connected.TrySetException(e);
            }
        }));

        var (ok, took) = await connected.Task.WaitAsync(s_timeout);
        Assert.True(ok, $"the synchronous connect failed after {took.TotalSeconds:0.0} s");
        Assert.True(took < TimeSpan.FromSeconds(3), $"the synchronous connect took {took.TotalSeconds:0.0} s");
        Assert.True(client.IsHandshaked);
    }

    [Net10Fact("the loops poll sockets only in the net10.0 build")]
    public async Task Request_response_rounds_of_every_size_never_stall_on_a_lost_wake_up()
    {
        if (!OperatingSystem.IsLinux())
            return;
        foreach (var hooksOnLoop in new[] { true, false })
        {
            using var service = new IoService(1);
            Assert.True(service.Start());
            await using var harness = new ServerHarness(TransportKind.Ssl);
            harness.Server.Service = service;
            harness.Server.OptionHooksOnLoop = hooksOnLoop;
            harness.Probe.ConfigureSession = probe =>
            {
                probe.Connected = s => s.OptionSendBufferLimit = 64 << 20;
                probe.Received = (session, buffer, offset, size) => session.SendAsync(buffer, offset, size);
            };
            Assert.True(harness.Start());

            long received = 0;
            var clientProbe = new Probe { Received = (_, _, _, size) => Interlocked.Add(ref received, size) };
            using var client = harness.CreateClient(clientProbe);
            client.Service = service;
            client.OptionHooksOnLoop = hooksOnLoop;
            client.OptionSendBufferLimit = 64 << 20;
            Assert.True(await client.ConnectAsync(CancellationToken.None).WaitAsync(s_timeout));

            int[] sizes = [1, 5, 16383, 16384, 16385, 32768, 65535, 65536, 65537, 100_000, 300_000, 2, 17, 1000];
            long expected = 0;
            for (var round = 0; round < 120; round++)
            {
                var size = sizes[round % sizes.Length];
                expected += size;
                Assert.True(client.SendAsync(new byte[size]));
                var target = expected;
                await Wait.UntilAsync(() => Interlocked.Read(ref received) == target,
                    () => $"round {round} ({size} bytes, hooks on loop: {hooksOnLoop}): {Interlocked.Read(ref received)} of {target}", TimeSpan.FromSeconds(10));
            }
        }
    }

    [Net10Fact("the loops poll sockets only in the net10.0 build")]
    public async Task A_service_stop_ends_a_stalled_handshake_at_once()
    {
        if (!OperatingSystem.IsLinux())
            return;
        var service = new IoService(1);
        try
        {
            Assert.True(service.Start());
            await using var harness = new ServerHarness(TransportKind.Ssl);
            harness.Server.Service = service;
            ((SslServer)harness.Server).Context.HandshakeTimeout = TimeSpan.FromSeconds(60);
            Assert.True(harness.Start());

            using var stalled = new System.Net.Sockets.Socket(System.Net.Sockets.AddressFamily.InterNetwork, System.Net.Sockets.SocketType.Stream, System.Net.Sockets.ProtocolType.Tcp);
            await stalled.ConnectAsync(harness.Endpoint).WaitAsync(s_timeout);
            await stalled.SendAsync(new byte[] { 0x16, 0x03, 0x01, 0x02, 0x00 }, System.Net.Sockets.SocketFlags.None);
            await Wait.UntilAsync(() => harness.Probe.Sessions.Count == 1, "the stalled session", s_timeout);
            var probe = harness.Probe.Sessions.Values.Single();

            service.Stop();
            Assert.Equal(DisconnectReason.ServerStopped, await probe.DisconnectedSignal.Task.WaitAsync(TimeSpan.FromSeconds(10)));
            Assert.False(probe.HandshakedSignal.Task.IsCompleted);
        }
        finally
        {
            service.Dispose();
        }
    }

    [Net10Fact("the loops poll sockets only in the net10.0 build")]
    public async Task A_graceful_disconnect_of_an_idle_session_on_a_loop_reaches_the_peer_as_its_close()
    {
        if (!OperatingSystem.IsLinux())
            return;
        using var service = new IoService(1);
        Assert.True(service.Start());
        await using var harness = new ServerHarness(TransportKind.Ssl);
        harness.Server.Service = service;
        Assert.True(harness.Start());

        var clientProbe = new Probe();
        using var client = harness.CreateClient(clientProbe);
        client.Service = service;
        Assert.True(await client.ConnectAsync(CancellationToken.None).WaitAsync(s_timeout));
        await harness.Probe.WaitForSessionsAsync(1);
        var sessionProbe = harness.Probe.Sessions.Values.Single();
        await sessionProbe.HandshakedSignal.Task.WaitAsync(s_timeout);
        var session = harness.FindSession(harness.Probe.Sessions.Keys.Single())!;
        await Task.Delay(100); // both receive loops are waiting in the poller

        Assert.True(session.Disconnect());
        Assert.Equal(DisconnectReason.PeerClosed, await clientProbe.DisconnectedSignal.Task.WaitAsync(TimeSpan.FromSeconds(10)));
        Assert.Equal(DisconnectReason.LocalDisconnect, await sessionProbe.DisconnectedSignal.Task.WaitAsync(TimeSpan.FromSeconds(10)));
    }
    [Net10Fact("the loops poll sockets only in the net10.0 build")]
    public async Task A_write_of_the_loop_transport_stream_waiting_for_room_ends_when_its_token_fires()
    {
        if (!OperatingSystem.IsLinux())
            return;
        using var service = new IoService(1);
        Assert.True(service.Start());
        using var listener = new System.Net.Sockets.Socket(System.Net.Sockets.AddressFamily.InterNetwork, System.Net.Sockets.SocketType.Stream, System.Net.Sockets.ProtocolType.Tcp);
        listener.Bind(new System.Net.IPEndPoint(System.Net.IPAddress.Loopback, 0));
        listener.Listen(1);
        using var peer = new System.Net.Sockets.Socket(System.Net.Sockets.AddressFamily.InterNetwork, System.Net.Sockets.SocketType.Stream, System.Net.Sockets.ProtocolType.Tcp);
        peer.ReceiveBufferSize = 4096; // the peer never reads: the writer soon waits for room
        await peer.ConnectAsync(listener.LocalEndPoint!).WaitAsync(s_timeout);
        using var socket = await listener.AcceptAsync().WaitAsync(s_timeout);
        socket.SendBufferSize = 4096;
        socket.Blocking = false;
        var registration = service.Loops[0].Register(socket, new NoOwner(), inline: false);
        Assert.NotNull(registration);
        try
        {
            using var stream = IoLoop.TransportStream(socket, registration);
            using var timeout = new CancellationTokenSource(TimeSpan.FromMilliseconds(300));
            var write = stream.WriteAsync(new byte[4 << 20], timeout.Token).AsTask();
            var ended = await Task.WhenAny(write, Task.Delay(TimeSpan.FromSeconds(10)));
            Assert.True(ReferenceEquals(ended, write), "the write still waits for room 10 s after its token fired");
            await Assert.ThrowsAnyAsync<OperationCanceledException>(() => write);
        }
        finally
        {
            IoLoop.Unregister(registration!);
        }
    }

    [Net10Fact("the loops poll sockets only in the net10.0 build")]
    public async Task A_blocking_receive_of_a_TLS_client_is_refused_on_its_own_loop_thread_and_works_from_another()
    {
        if (!OperatingSystem.IsLinux())
            return;
        await using var harness = new ServerHarness(TransportKind.Ssl);
        harness.Probe.ConfigureSession = probe => probe.Received = (session, buffer, offset, size) => session.SendAsync(buffer, offset, size);
        Assert.True(harness.Start());
        using var clientService = new IoService(1);
        Assert.True(clientService.Start());
        using var client = (SslClient)harness.CreateClient(new Probe());
        client.Service = clientService;
        Assert.True(client.Connect()); // here, not on the loop: pinned to it
        Assert.Same(clientService.Loops[0], client.Loop);
        client.Socket!.ReceiveTimeout = 10_000;

        // On the loop's own thread the wait could never end (the loop must run to decrypt): refused.
        var refused = new TaskCompletionSource<Exception?>(TaskCreationOptions.RunContinuationsAsynchronously);
        Assert.True(clientService.Loops[0].Post(() =>
        {
            try
            {
                client.Receive(new byte[64]);
                refused.TrySetResult(null);
            }
            catch (Exception e)
            {
                refused.TrySetResult(e);
            }
        }));
        var failure = await refused.Task.WaitAsync(s_timeout);
        Assert.IsType<InvalidOperationException>(failure);
        Assert.Contains("thread of the loop", failure!.Message, StringComparison.Ordinal);

        // From another thread the loop reads and decrypts while this one waits.
        Assert.Equal(4, client.Send("ping"u8.ToArray()));
        var buffer = new byte[64];
        var received = await Task.Run(() => client.Receive(buffer)).WaitAsync(s_timeout);
        Assert.Equal(4, received);
        Assert.Equal("ping"u8.ToArray(), buffer[..4]);
    }

    private sealed class NoOwner : NetServer.Service.IPollOwner
    {
        public void Abandon()
        {
        }
    }
}
