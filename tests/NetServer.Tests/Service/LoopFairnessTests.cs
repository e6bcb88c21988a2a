using System;
using System.Net.Sockets;
using System.Text;
using System.Threading;
using System.Threading.Tasks;
using NetServer.Tests.Infrastructure;
using Xunit;

namespace NetServer.Tests.Service;

/// <summary>
/// One loop serves many connections: a connection whose peer sends faster than its bytes are
/// read must still let the loop go round, or every other connection of that loop (and its own
/// sends waiting for room) waits for as long as the peer keeps sending.
/// </summary>
public sealed class LoopFairnessTests
{
    private static readonly TimeSpan s_answer = TimeSpan.FromSeconds(5);

    [Theory]
    [MemberData(nameof(Transports.All), MemberType = typeof(Transports))]
    public async Task A_peer_that_never_stops_sending_holds_up_no_other_connection_of_its_loop(TransportKind kind)
    {
        using var service = new IoService(1); // one loop: both sessions are on it
        Assert.True(service.Start());
        await using var harness = new ServerHarness(kind);
        harness.Server.Service = service;
        var configured = 0;
        long flooded = 0;
        harness.Probe.ConfigureSession = probe =>
        {
            if (Interlocked.Increment(ref configured) == 1)
            {
                // The first session's hook takes its time (work, not a wait for anything), so its
                // peer always has more bytes in the socket: every read fills its buffer.
                probe.Received = (_, _, _, size) =>
                {
                    Interlocked.Add(ref flooded, size);
                    Thread.Sleep(1);
                };
            }
            else
            {
                probe.Received = static (session, buffer, offset, size) => session.SendAsync(buffer, offset, size);
            }
        };
        Assert.True(harness.Start());

        using var flooder = await harness.ConnectRawAsync();
        using var stop = new CancellationTokenSource();
        var flood = Chatter.SendUntilStoppedAsync(flooder, 64 * 1024, stop.Token);

        try
        {
            await Wait.UntilAsync(() => Interlocked.Read(ref flooded) > 1024 * 1024, "the flooded session to read its first MiB");

            // A second connection of the same loop is answered while the flood goes on.
            using var other = await harness.ConnectRawAsync();
            var ping = Encoding.ASCII.GetBytes("ping");
            await other.SendAsync(ping, SocketFlags.None);
            var answer = await Wait.ReadExactlyAsync(other, ping.Length, s_answer);
            Assert.Equal("ping", Encoding.ASCII.GetString(answer));

            // And the flooded one is still read.
            var before = Interlocked.Read(ref flooded);
            await Wait.UntilAsync(() => Interlocked.Read(ref flooded) > before, "the flooded session to read on");
        }
        finally
        {
            await stop.CancelAsync();
            flooder.Close(0);
            await flood.WaitAsync(Wait.Default);
        }
    }
}
