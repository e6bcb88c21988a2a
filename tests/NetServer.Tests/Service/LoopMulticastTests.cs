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
        var hellos = 0;
        var refused = 0;
        var burst = 0; // 1 from the trigger on: the sends counted are the multicasts'
        var sends = new ConcurrentQueue<(Guid Session, string Thread, long Sent)>();
        harness.Probe.ConfigureSession = probe =>
        {
            probe.Received = (session, buffer, offset, size) =>
            {
                if (buffer[offset] == (byte)'h')
                {
                    Interlocked.Increment(ref hellos); // this session's set-up (over TLS, its handshake's flush) is over
                    return;
                }

                hookThread = Thread.CurrentThread.Name;
                Volatile.Write(ref burst, 1);
                for (var i = 0; i < Multicasts; i++)
                {
                    if (!harness.Multicast(Message(i)))
                        Interlocked.Increment(ref refused);
                }
            };
            probe.Sent = (session, sent, _) =>
            {
                if (Volatile.Read(ref burst) == 1)
                    sends.Enqueue((session.Id, Thread.CurrentThread.Name ?? "?", sent));
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
            foreach (var (client, _) in clients)
                Assert.True(client.SendAsync(new[] { (byte)'h' }));
            await Wait.UntilAsync(() => Volatile.Read(ref hellos) == Clients, "a hello from every client", s_timeout);
            Assert.True(clients[0].Client.SendAsync(new[] { (byte)'g' }));

            var expected = Enumerable.Range(0, Multicasts).SelectMany(Message).ToArray();
            foreach (var (_, received) in clients)
            {
                await Wait.UntilAsync(() => { lock (received) return received.Length >= expected.Length; }, "every multicast", s_timeout);
                lock (received)
                    Assert.Equal(expected, received.ToArray()); // whole, in order, nothing more
            }

            Assert.Equal(0, Volatile.Read(ref refused));

            // Work posted to the loop now runs after the flushes it queued before (and their OnSent).
            var drained = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
            Assert.True(service.Loops[0].Post(() => drained.TrySetResult()));
            await drained.Task.WaitAsync(s_timeout);
            if (Native && service.NativeTransportUnavailableReason is null)
            {
                // The loop ran each session's flush after the hook returned: one write each, on the loop's thread.
                Assert.StartsWith("NetServer loop", hookThread);
                Assert.True(Clients == sends.Count, string.Join("; ", sends.Select(s => $"{s.Session} {s.Thread} {s.Sent}")));
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

    [Net10Fact("the loops poll sockets only in the net10.0 build")]
    public async Task A_flush_that_never_runs_dry_lets_the_loops_other_work_run()
    {
        using var service = new IoService(1);
        Assert.True(service.Start());
        await using var harness = new ServerHarness(TransportKind.Tcp);
        harness.Server.Service = service;
        var more = 1; // while set, each write's OnSent multicasts one more message: the flush always has more
        harness.Probe.ConfigureSession = probe => probe.Sent = (_, _, _) =>
        {
            if (Volatile.Read(ref more) == 1)
                harness.Multicast(Message(1));
        };
        Assert.True(harness.Start());
        var received = 0L;
        using var client = harness.CreateClient(new Probe { Received = (_, _, _, size) => Interlocked.Add(ref received, size) });
        Assert.True(await client.ConnectAsync(CancellationToken.None).WaitAsync(s_timeout));
        await harness.Probe.WaitForSessionsAsync(1);
        try
        {
            Assert.True(harness.Multicast(Message(0)));
            await Wait.UntilAsync(() => Interlocked.Read(ref received) > 4_000, "a flush that keeps going", s_timeout);
            var ran = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
            Assert.True(service.Loops[0].Post(() => ran.TrySetResult()));
            await ran.Task.WaitAsync(TimeSpan.FromSeconds(10)); // without the flush's yield the loop never gets to it
        }
        finally
        {
            Volatile.Write(ref more, 0);
        }
    }

    [Net10Fact("the loops poll sockets only in the net10.0 build")]
    public async Task A_blocking_send_from_work_posted_to_the_sessions_loop_queues_instead_of_waiting_for_that_loop()
    {
        using var service = new IoService(1);
        Assert.True(service.Start());
        await using var harness = new ServerHarness(TransportKind.Tcp);
        harness.Server.Service = service;
        Assert.True(harness.Start());
        var received = new System.IO.MemoryStream();
        using var client = harness.CreateClient(new Probe
        {
            Received = (_, buffer, offset, size) =>
            {
                lock (received)
                    received.Write(buffer, (int)offset, (int)size);
            },
        });
        Assert.True(await client.ConnectAsync(CancellationToken.None).WaitAsync(s_timeout));
        await harness.Probe.WaitForSessionsAsync(1);
        var session = harness.Probe.Sessions.Keys.Select(harness.FindSession).Single()!;
        Assert.Same(service.Loops[0], session.Loop);

        // The multicast's flush waits in the loop's queue behind this work: a Send that waited
        // for the kernel to take its bytes would wait for this very loop (30 s, then an abort).
        var sent = new TaskCompletionSource<long>(TaskCreationOptions.RunContinuationsAsynchronously);
        Assert.True(service.Loops[0].Post(() =>
        {
            harness.Multicast(Message(0));
            sent.TrySetResult(session.Send(Message(1)));
        }));
        Assert.Equal(4, await sent.Task.WaitAsync(TimeSpan.FromSeconds(10)));
        var expected = Message(0).Concat(Message(1)).ToArray();
        await Wait.UntilAsync(() => { lock (received) return received.Length >= expected.Length; }, "both messages", s_timeout);
        lock (received)
            Assert.Equal(expected, received.ToArray());
        Assert.True(session.IsConnected);
    }

    private static byte[] Message(int i) => [(byte)'m', (byte)('0' + i), (byte)'.', (byte)'\n'];
}
