using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Globalization;
using System.Linq;
using System.Net;
using System.Threading.Tasks;

namespace NetServer.Benchmark;

/// <summary>The latency scenario's client: one message in flight per client, every round trip timed.</summary>
internal static partial class Program
{
    private static async Task<int> RunLatencyClientAsync(Options options, PeerFactory peers, EndPoint target, ServerHandle? server, Func<Task>? measured)
    {
        var message = new byte[options.Size];
        Array.Fill(message, (byte)'x');
        var behaviors = new List<LatencyBehavior>(options.Clients);
        var clients = new List<ClientHandle>(options.Clients);
        for (var i = 0; i < options.Clients; i++)
        {
            var behavior = new LatencyBehavior(message);
            behaviors.Add(behavior);
            clients.Add(ClientHandle.Of(peers.CreateClient(target, behavior), behavior));
        }

        if (!await ConnectAllAsync(clients, target, measured))
            return 1;

        long RoundTrips() => behaviors.Sum(b => b.RoundTrips.Count);
        long Errors() => behaviors.Sum(b => b.Counters.Errors) + (server?.Errors ?? 0);

        // The round trips that end in the measured window count; the first ones (connects, JIT) mostly end before it opens.
        await WarmUpAsync(options);
        foreach (var behavior in behaviors)
            behavior.Recording = true;
        var watch = Stopwatch.StartNew();
        var allocated0 = GC.GetTotalAllocatedBytes(precise: true);
        var lastTime = 0.0;
        var lastCount = 0L;
        var total = await WaitOutRunAsync(options, watch, now =>
        {
            var count = RoundTrips();
            var line = string.Create(CultureInfo.InvariantCulture,
                $"progress: {now,6:F1} s  {(count - lastCount) / Math.Max(now - lastTime, 1e-9),12:F0} round trips/s  errors {Errors()}");
            lastTime = now;
            lastCount = count;
            return line;
        });
        foreach (var behavior in behaviors)
            behavior.Recording = false;
        var allocated1 = GC.GetTotalAllocatedBytes(precise: true);

        if (measured is not null)
            await measured();
        await Task.WhenAll(clients.Select(c => c.DisposeAsync().AsTask()));

        var roundTrips = new LatencyHistogram();
        foreach (var behavior in behaviors)
            roundTrips.Add(behavior.RoundTrips);
        var report = new LatencyReport(options.Protocol, ClientRole(options), target.ToString() ?? "", options.Clients, options.Size, options.Seconds,
            Errors(), total, roundTrips, allocated1 - allocated0);
        report.Print(options.Json);
        return report.Errors == 0 ? 0 : 1;
    }
}
