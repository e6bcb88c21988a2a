using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Globalization;
using System.IO;
using System.Linq;
using System.Net;
using System.Net.Sockets;
using System.Security.Authentication;
using System.Threading;
using System.Threading.Tasks;

namespace NetServer.Benchmark;

/// <summary>The handshake scenario's client: connect, handshake, disconnect, again, on every client at once.</summary>
internal static partial class Program
{
    /// <summary>How long a cycle may still take once the run is over before it is cut off.</summary>
    private static readonly TimeSpan s_cycleGrace = TimeSpan.FromSeconds(15);

    private static async Task<int> RunHandshakeClientAsync(Options options, PeerFactory peers, EndPoint target, Func<long>? serverErrors, Func<Task>? measured)
    {
        var clients = new List<StreamClient>(options.Clients);
        var counters = new List<ClientCounters>(options.Clients);
        for (var i = 0; i < options.Clients; i++)
        {
            var behavior = new ClientBehavior();
            counters.Add(behavior.Counters);
            clients.Add(peers.CreateClient(target, behavior));
        }

        long Handshakes() => counters.Sum(c => c.Handshakes);
        long Errors() => counters.Sum(c => c.Errors) + (serverErrors?.Invoke() ?? 0);

        // stop ends the loops after their current cycle (so the server sees no half-done
        // handshake); abort cuts off a cycle that still hangs after the grace period.
        using var stop = new CancellationTokenSource();
        using var abort = new CancellationTokenSource();
        var loops = clients.Select((client, i) => HandshakeLoopAsync(client, counters[i], stop.Token, abort.Token)).ToList();
        await WarmUpAsync(options);
        var watch = Stopwatch.StartNew();
        var allocated0 = GC.GetTotalAllocatedBytes(precise: true);
        var handshakes0 = Handshakes();
        var ticks0 = counters.Sum(c => c.HandshakeTicks);

        var lastTime = 0.0;
        var lastCount = handshakes0;
        var total = await WaitOutRunAsync(options, watch, now =>
        {
            var count = Handshakes();
            var line = string.Create(CultureInfo.InvariantCulture,
                $"progress: {now,6:F1} s  {(count - lastCount) / Math.Max(now - lastTime, 1e-9),12:F0} hs/s  errors {Errors()}");
            lastTime = now;
            lastCount = count;
            return line;
        });
        var handshakes = Handshakes() - handshakes0;
        var ticks = counters.Sum(c => c.HandshakeTicks) - ticks0;
        var allocated1 = GC.GetTotalAllocatedBytes(precise: true);

        await stop.CancelAsync();
        abort.CancelAfter(s_cycleGrace);
        await Task.WhenAll(loops);
        if (measured is not null)
            await measured();
        await Task.WhenAll(clients.Select(c => c.DisposeAsync().AsTask()));

        // The cycles counted by the deadline and their summed time (a cycle still running then is left out of both).
        var report = new HandshakeReport(options.Protocol, ClientRole(options), target.ToString() ?? "", options.Clients, options.Seconds,
            Errors(), total, handshakes, ticks / (double)Stopwatch.Frequency, allocated1 - allocated0);
        report.Print(options.Json);
        return report.Errors == 0 ? 0 : 1;
    }

    /// <summary>One client's cycles until <paramref name="stop"/>; the time of each is from the connect to the end of the handshake.</summary>
    private static async Task HandshakeLoopAsync(StreamClient client, ClientCounters counters, CancellationToken stop, CancellationToken abort)
    {
        // Off the caller's thread at once: a cycle that completes synchronously must not hold up starting the others.
        await Task.Yield();
        while (!stop.IsCancellationRequested)
        {
            var errors = counters.Errors;
            var start = Stopwatch.GetTimestamp();
            string failure;
            try
            {
                if (await client.ConnectAsync(abort))
                {
                    counters.AddHandshake(Stopwatch.GetTimestamp() - start);
                    await client.DisconnectAsync(abort);
                    continue;
                }

                failure = $"connect ended: {client.DisconnectReason}";
            }
            catch (Exception e) when (e is SocketException or AuthenticationException or IOException or TimeoutException or OperationCanceledException)
            {
                failure = ErrorText.Describe(e);
            }

            // A failure the client's hooks did not report (a refused connect) is still an error.
            if (counters.Errors == errors)
            {
                counters.AddError();
                Console.Error.WriteLine($"client error: {failure}");
            }

            // Do not spin against a server that is gone.
            await Task.Delay(100, CancellationToken.None);
        }
    }
}
