using System;
using System.Linq;
using System.Threading;
using System.Threading.Tasks;
using NetServer.Tests.Infrastructure;
using Xunit;

namespace NetServer.Tests.Review;

/// <summary>Review of 8538b30: defects found in accepting on the loops.</summary>
public sealed class LoopAcceptReviewTests
{
    private static readonly TimeSpan s_timeout = TimeSpan.FromSeconds(20);

    // The loops set the listener non-blocking (LoopAcceptor.Start) and never set it back; the
    // runtime propagates Blocking from a listener to every socket it accepts, and a TLS
    // connection on the default transport wraps its socket in a NetworkStream, which refuses a
    // non-blocking socket: after the service stops, every TLS handshake fails.
    [Net10Fact("the loops poll sockets in the net10.0 build only")]
    public async Task A_tls_server_whose_service_stops_still_completes_handshakes_on_the_default_transport()
    {
        if (!OperatingSystem.IsLinux())
            return;
        var service = new IoService(2);
        Assert.True(service.Start());
        await using var harness = new ServerHarness(TransportKind.Ssl);
        harness.Server.Service = service;
        harness.Probe.ConfigureSession = probe => probe.Received = (session, buffer, offset, size) => session.SendAsync(buffer, offset, size);
        Exception? serverFailure = null;
        Assert.True(harness.Start());

        service.Dispose(); // accepting goes back to the runtime's engine

        var clientProbe = new Probe();
        var echoed = new TaskCompletionSource<string>(TaskCreationOptions.RunContinuationsAsynchronously);
        clientProbe.Received = (_, buffer, offset, size) => echoed.TrySetResult(System.Text.Encoding.ASCII.GetString(buffer, (int)offset, (int)size));
        using var client = harness.CreateClient(clientProbe);
        var connected = false;
        try
        {
            connected = await client.ConnectAsync(CancellationToken.None).WaitAsync(s_timeout);
        }
        catch (System.IO.IOException)
        {
            // the server ended the handshake; its reason is asserted below
        }

        await Wait.UntilAsync(() => harness.Probe.Sessions.Count == 1, "the server's session", s_timeout);
        var serverProbe = harness.Probe.Sessions.Values.Single();
        var done = await Task.WhenAny(serverProbe.HandshakedSignal.Task, serverProbe.HandshakeFailedSignal.Task).WaitAsync(s_timeout);
        if (serverProbe.HandshakeFailedSignal.Task.IsCompleted)
            serverFailure = await serverProbe.HandshakeFailedSignal.Task;
        Assert.True(serverFailure is null, serverFailure?.ToString());
        Assert.True(connected);
        Assert.True(client.SendAsync("ping"u8.ToArray()));
        Assert.Equal("ping", await echoed.Task.WaitAsync(s_timeout));
    }

    // A connection accepted on one loop and set up on another (LoopSetUp) holds _starting until
    // that loop runs it. A Stop made on that loop's thread outside a hook (posted work, a timer)
    // waits for _starting with the set-up queued behind itself: it stalls for the 30 s timeout.
    [Net10Fact("the loops poll sockets in the net10.0 build only")]
    public async Task A_stop_made_on_a_loop_does_not_wait_for_a_set_up_queued_behind_it()
    {
        if (!OperatingSystem.IsLinux())
            return;
        using var service = new IoService(2);
        Assert.True(service.Start());
        await using var harness = new ServerHarness(TransportKind.Tcp);
        harness.Server.Service = service;
        Assert.True(harness.Start());

        var proceed = new ManualResetEventSlim();
        var stopped = new TaskCompletionSource<TimeSpan>(TaskCreationOptions.RunContinuationsAsynchronously);
        var blocked = service.Loops[1];
        Assert.True(blocked.Post(() =>
        {
            proceed.Wait(s_timeout);
            var watch = System.Diagnostics.Stopwatch.StartNew();
            harness.Server.Stop();
            stopped.TrySetResult(watch.Elapsed);
        }));

        // Connections until one is accepted on loop 0 and posted to loop 1 for its set-up.
        var sockets = new System.Collections.Generic.List<System.Net.Sockets.Socket>();
        try
        {
            for (var i = 0; i < 20 && blocked.Pending == 0; i++)
            {
                sockets.Add(await harness.ConnectRawAsync());
                await Wait.UntilAsync(() => blocked.Pending > 0 || harness.Probe.Sessions.Count == sockets.Count, "the connection set up or queued", s_timeout);
            }

            Assert.True(blocked.Pending > 0, "no set-up was queued on loop 1");
            proceed.Set();
            var took = await stopped.Task.WaitAsync(TimeSpan.FromSeconds(60));
            Assert.True(took < TimeSpan.FromSeconds(5), $"Stop on loop 1 took {took.TotalSeconds:0.0} s");
        }
        finally
        {
            proceed.Set();
            foreach (var socket in sockets)
                socket.Dispose();
        }
    }
}
