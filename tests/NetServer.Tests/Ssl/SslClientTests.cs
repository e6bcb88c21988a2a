using System;
using System.Linq;
using System.Threading.Tasks;
using NetServer.Tests.Infrastructure;
using Xunit;

namespace NetServer.Tests.Ssl;

/// <summary>
/// The synchronous side of <see cref="SslClient"/>: the blocking <c>Receive</c> can poll an idle
/// connection without piling anything up.
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
            for (var i = 0; i < 20; i++)
                Assert.Equal(0, client.Receive(buffer)); // the first call starts the read and rents its buffer

            // The smallest of a few batches, so a one-off allocation of the runtime does not count.
            var received = 0L;
            var fewest = long.MaxValue;
            for (var batch = 0; batch < Batches; batch++)
            {
                var before = GC.GetAllocatedBytesForCurrentThread();
                for (var i = 0; i < Polls; i++)
                    received += client.Receive(buffer);
                fewest = Math.Min(fewest, GC.GetAllocatedBytesForCurrentThread() - before);
            }

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
}
