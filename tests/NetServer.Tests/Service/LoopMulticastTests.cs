using System;
using System.Collections.Concurrent;
using System.Collections.Generic;
using System.Linq;
using System.Threading;
using System.Threading.Tasks;
using NetServer.Tests.Infrastructure;
using Xunit;

namespace NetServer.Tests.Service;

/// <summary>
/// Multicasts to sessions whose hooks run on their loop: the flush goes to the session's loop, so
/// what one turn of the loop multicasts leaves in one write per session after the turn's hooks.
/// </summary>
public sealed class LoopMulticastTests
{
    private static readonly TimeSpan s_timeout = TimeSpan.FromSeconds(30);

    private static bool Native => Net10FactAttribute.IsNet10Build && OperatingSystem.IsLinux();

    [Theory]
    [MemberData(nameof(Transports.All), MemberType = typeof(Transports))]
    public async Task Multicasts_made_in_a_hook_leave_from_the_loop_in_one_write_per_session(TransportKind kind)
    {
        const int Clients = 3;
        const int Multicasts = 10;
        using var service = new IoService(1); // every session on the same loop
        Assert.True(service.Start());
        await using var harness = new ServerHarness(kind);
        harness.Server.Service = service;
        harness.Server.OptionHooksOnLoop = true;

        string? hookThread = null;
        var burst = 0; // 1 from the trigger on: the sends counted are the multicasts'
        var sends = new ConcurrentQueue<(Guid Session, string Thread)>();
        harness.Probe.ConfigureSession = probe =>
        {
            probe.Received = (session, buffer, offset, size) =>
            {
                if (buffer[offset] != (byte)'g')
                    return;
                hookThread = Thread.CurrentThread.Name;
                Volatile.Write(ref burst, 1);
                for (var i = 0; i < Multicasts; i++)
                    Assert.True(harness.Multicast(Message(i)));
            };
            probe.Sent = (session, _, _) =>
            {
                if (Volatile.Read(ref burst) == 1)
                    sends.Enqueue((session.Id, Thread.CurrentThread.Name ?? "?"));
            };
        };
        Assert.True(harness.Start());

        var clients = new List<(StreamClient Client, System.IO.MemoryStream Received)>();
        try
        {
            for (var c = 0; c < Clients; c++)
            {
                var received = new System.IO.MemoryStream();
                var probe = new Probe
                {
                    Received = (_, buffer, offset, size) =>
                    {
                        lock (received)
                            received.Write(buffer, (int)offset, (int)size);
                    },
                };
                var client = harness.CreateClient(probe);
                clients.Add((client, received));
                Assert.True(await client.ConnectAsync(CancellationToken.None).WaitAsync(s_timeout));
            }

            await harness.Probe.WaitForSessionsAsync(Clients);
            if (kind == TransportKind.Ssl)
                await Wait.UntilAsync(() => harness.Probe.Sessions.Values.All(p => p.HandshakedSignal.Task.IsCompleted), "every handshake", s_timeout);
            Assert.True(clients[0].Client.SendAsync(new[] { (byte)'g' }));

            var expected = Enumerable.Range(0, Multicasts).SelectMany(Message).ToArray();
            foreach (var (_, received) in clients)
            {
                await Wait.UntilAsync(() => { lock (received) return received.Length >= expected.Length; }, "every multicast", s_timeout);
                lock (received)
                    Assert.Equal(expected, received.ToArray()); // whole, in order, nothing more
            }

            if (Native)
            {
                // The loop ran each session's flush after the hook returned: one write each, on the loop's thread.
                Assert.StartsWith("NetServer loop", hookThread);
                Assert.Equal(Clients, sends.Count);
                Assert.Equal(Clients, sends.Select(s => s.Session).Distinct().Count());
                Assert.All(sends, s => Assert.Equal(hookThread, s.Thread));
            }
        }
        finally
        {
            foreach (var (client, _) in clients)
                client.Dispose();
        }
    }

    private static byte[] Message(int i) => [(byte)'m', (byte)('0' + i), (byte)'.', (byte)'\n'];
}
