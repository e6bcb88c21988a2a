using System;
using System.Threading;
using System.Threading.Tasks;
using NetServer.Tests.Infrastructure;
using Xunit;

namespace NetServer.Tests.Tcp;

/// <summary>
/// Stop, StopAsync and DisconnectAll return after every session's OnDisconnected, also for a
/// session that had already left the server's list when they were called and was still inside
/// its hook (a fresh-clone run once saw Stop return before such a hook ended).
/// </summary>
public class StopWaitsForHooksTests
{
    private static readonly TimeSpan s_timeout = TimeSpan.FromSeconds(20);

    public enum Ending
    {
        Stop,
        StopAsync,
        DisconnectAll,
    }

    /// <summary>Every transport this build has, with each way of ending.</summary>
    public static TheoryData<TransportKind, Ending> Cases()
    {
        var cases = new TheoryData<TransportKind, Ending>();
        foreach (var row in Transports.All)
        {
            foreach (var ending in new[] { Ending.Stop, Ending.StopAsync, Ending.DisconnectAll })
                cases.Add(row, ending);
        }

        return cases;
    }

    [Theory]
    [MemberData(nameof(Cases))]
    public async Task A_session_still_in_OnDisconnected_is_waited_for(TransportKind kind, Ending ending)
    {
        await using var harness = new ServerHarness(kind);
        using var gate = new ManualResetEventSlim();
        var entered = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var hookEnded = 0;
        harness.Probe.ConfigureSession = probe => probe.Disconnected = (_, _) =>
        {
            entered.TrySetResult();
            gate.Wait(s_timeout);
            Volatile.Write(ref hookEnded, 1);
        };
        Assert.True(harness.Start());

        var client = harness.CreateClient(new Probe());
        try
        {
            Assert.True(await client.ConnectAsync(CancellationToken.None).WaitAsync(s_timeout));
            await harness.Probe.WaitForSessionsAsync(1);

            // The client leaves: the session's end runs its hook, which holds it; the session is
            // out of the server's list by then.
            client.Disconnect();
            await entered.Task.WaitAsync(s_timeout);
            Assert.Equal(0, harness.ConnectedSessions);

            var ended = Task.Run(async () =>
            {
                var done = ending switch
                {
                    Ending.Stop => harness.Stop(),
                    Ending.StopAsync => await harness.StopAsync(),
                    _ => harness.DisconnectAll(),
                };
                return (done, Volatile.Read(ref hookEnded));
            });

            // Time for a call that does not wait to return while the hook is held; one that is
            // slow to start only makes the check below pass, never fail.
            await Task.WhenAny(ended, Task.Delay(300));
            gate.Set();
            var (returned, hookEndedWhenReturned) = await ended.WaitAsync(s_timeout);
            Assert.True(returned);
            Assert.Equal(1, hookEndedWhenReturned);
        }
        finally
        {
            gate.Set();
            client.Dispose();
        }
    }
}
