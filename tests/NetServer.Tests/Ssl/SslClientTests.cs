using System;
using System.Diagnostics;
using System.Linq;
using System.Threading;
using System.Threading.Tasks;
using NetServer.Tests.Infrastructure;
using Xunit;

namespace NetServer.Tests.Ssl;

/// <summary>
/// The synchronous side of <see cref="SslClient"/>: <c>Connect()</c> returns the handshake's own
/// outcome however long it takes (bounded by the handshake timeout, not by a wait of its own), and
/// the blocking <c>Receive</c> can poll an idle connection without piling anything up.
/// </summary>
public class SslClientTests
{
    [Fact]
    public async Task Polling_the_blocking_Receive_of_an_idle_connection_allocates_nothing_per_timed_out_call()
    {
        const int Batches = 4;
        const int Polls = 100;
        await using var harness = new ServerHarness(TransportKind.Ssl);
        Assert.True(harness.Start());
        var probe = new Probe();
        using var client = harness.CreateClient(probe);
        Assert.True(await HarnessExtensions.RunBlocking(client.Connect).WaitAsync(Wait.Default));
        await harness.Probe.WaitForSessionsAsync(1);
        var session = harness.FindSession(harness.Probe.Sessions.Keys.Single())!;

        // Each call that times out leaves the same stream read pending for the next one: polling
        // must not add anything to it (a wake-up registered per call grew without bound).
        client.Socket!.ReceiveTimeout = 1;
        var fewest = await HarnessExtensions.RunBlocking(() =>
        {
            var buffer = new byte[64];
            var received = 0L;

            // 20 calls to warm up (the first one starts the read and rents its buffer), then the
            // smallest of a few batches, so a one-off allocation of the runtime does not count.
            var fewest = Allocations.Least(() => received += client.Receive(buffer), roundsPerWindow: Polls, windows: Batches, warmUp: 20);

            Assert.Equal(0, received);
            return fewest;
        }).WaitAsync(Wait.Default);

        // Reading Socket.ReceiveTimeout boxes an int (24 bytes a call); a continuation registered
        // per call cost about 150 more, and kept them all until the read completed.
        Assert.True(fewest <= Polls * 48, $"{Polls} timed-out Receive calls allocated {fewest} bytes.");
        Assert.True(client.IsConnected);

        // The pending read still delivers what comes next.
        Assert.True(session.SendAsync("after polling"));
        client.Socket.ReceiveTimeout = 10_000;
        Assert.Equal("after polling", await HarnessExtensions.RunBlocking(() => client.Receive(64)).WaitAsync(Wait.Default));
        Assert.DoesNotContain(probe.Events, e => e.StartsWith("error:", StringComparison.Ordinal));
    }

    [Fact]
    public async Task Connect_called_inside_a_hook_waits_for_the_handshake_and_returns_true_for_a_connection_that_is_up()
    {
        await using var harness = new ServerHarness(TransportKind.Ssl);
        Assert.True(harness.Start());

        // The NetCoreServer reconnect pattern: a synchronous Connect() from OnDisconnected.
        var probe = new Probe { RecordHandshakes = true };
        var reconnected = new TaskCompletionSource<(bool Result, bool Handshaked)>(TaskCreationOptions.RunContinuationsAsynchronously);
        using var client = (SslClient)harness.CreateClient(probe);
        var first = true;
        probe.Disconnected = (c, _) =>
        {
            if (!first)
                return;
            first = false;
            var result = ((SslClient)c).Connect();
            reconnected.TrySetResult((result, ((SslClient)c).IsHandshaked));
        };

        Assert.True(await client.ConnectAsync(CancellationToken.None).WaitAsync(Wait.Default));
        await harness.Probe.WaitForSessionsAsync(1);
        Assert.True(harness.FindSession(harness.Probe.Sessions.Keys.Single())!.Disconnect());

        var (connected, handshaked) = await reconnected.Task.WaitAsync(Wait.Default);
        Assert.True(connected, "Connect() returned false for a connection whose handshake was still running.");
        Assert.True(handshaked);
        Assert.True(client.IsConnected);
        Assert.True(client.IsHandshaked);
        Assert.Equal(2, probe.Events.Count(e => e == "handshaked"));
    }

    [Fact]
    public async Task Connect_with_an_infinite_handshake_timeout_waits_until_a_Disconnect_from_another_thread_ends_the_handshake()
    {
        using var silent = new SilentListener();
        var context = TestCertificates.ClientContext();
        context.HandshakeTimeout = Timeout.InfiniteTimeSpan;
        var probe = new Probe { RecordHandshakes = true };
        using var client = new ProbeSslClient(context, silent.Endpoint, probe);

        var connecting = HarnessExtensions.RunBlocking(client.Connect);
        await Wait.UntilAsync(() => probe.Events.Contains("handshaking"), "the handshake to start");
        await Task.Delay(300);
        Assert.False(connecting.IsCompleted, "Connect() returned while the handshake was still running.");

        // A graceful disconnect during the handshake abandons it at once: nothing could be sent before it.
        var watch = Stopwatch.StartNew();
        Assert.True(await HarnessExtensions.RunBlocking(client.Disconnect).WaitAsync(Wait.Default));
        Assert.False(await connecting.WaitAsync(Wait.Default));
        Assert.True(watch.Elapsed < TimeSpan.FromSeconds(2), $"The handshake went on for {watch.Elapsed} after Disconnect().");
        Assert.Equal(DisconnectReason.LocalDisconnect, await probe.DisconnectedSignal.Task.WaitAsync(Wait.Default));
        Assert.Equal(["connecting", "connected", "handshaking", "disconnecting", "disconnected"], probe.Events);
        Assert.False(client.IsConnected);
    }

    [Fact]
    public async Task Connect_returns_false_once_the_handshake_timeout_ends_a_handshake_the_server_never_answers()
    {
        using var silent = new SilentListener();
        var context = TestCertificates.ClientContext();
        context.HandshakeTimeout = TimeSpan.FromMilliseconds(500);
        var probe = new Probe { RecordHandshakes = true };
        using var client = new ProbeSslClient(context, silent.Endpoint, probe);

        var watch = Stopwatch.StartNew();
        Assert.False(await HarnessExtensions.RunBlocking(client.Connect).WaitAsync(Wait.Default));
        Assert.True(watch.Elapsed >= TimeSpan.FromMilliseconds(400) && watch.Elapsed < TimeSpan.FromSeconds(5), $"Connect() returned after {watch.Elapsed} with a 500 ms handshake timeout.");
        Assert.IsType<TimeoutException>(await probe.HandshakeFailedSignal.Task.WaitAsync(Wait.Default));
        Assert.Equal(DisconnectReason.HandshakeFailed, await probe.DisconnectedSignal.Task.WaitAsync(Wait.Default));
        Assert.False(client.IsConnected);
    }
}
