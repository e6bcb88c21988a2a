using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Globalization;
using System.IO;
using System.Linq;
using System.Net;
using System.Security.Cryptography;
using System.Threading;
using System.Threading.Tasks;
using NetServer.P2P;

namespace NetServer.Benchmark;

/// <summary>relay forward: peers in pairs, every message routed by a RelayServer (NetServer.P2P) over TLS.</summary>
internal static partial class Program
{
    private static async Task<int> RunRelayAsync(Options options)
    {
        string folder;
        try
        {
            folder = TestCertificates.Locate(options.CertificateFolder);
        }
        catch (Exception e) when (e is IOException or CryptographicException)
        {
            Console.Error.WriteLine($"Cannot load the TLS certificates: {e.Message}");
            return 2;
        }

        PrintRelayHeader(options, folder);
        RelayServer? relay = null;
        if (options.Role != Role.Client)
        {
            relay = new RelayServer(TestCertificates.ServerContext(folder), IPAddress.Parse(options.Address), options.EffectivePort, BenchRelayOptions());
            relay.Start();
        }

        try
        {
            if (options.Role == Role.Server)
                return await RunRelayServerAsync(options, relay!);
            var target = new IPEndPoint(IPAddress.Parse(options.Address), relay?.Port ?? options.EffectivePort);
            return await RunRelayClientsAsync(options, TestCertificates.ClientContext(folder), target, relay);
        }
        finally
        {
            relay?.Dispose();
        }
    }

    /// <summary>The relay's limits for the run: no per-address cap (every peer is on loopback), rates far above what two cores reach (the buckets still run).</summary>
    private static RelayServerOptions BenchRelayOptions() => new()
    {
        MaxPeersPerAddress = 0,
        PeerMessageRate = 100_000_000,
        PeerByteRate = 100L << 30,
    };

    private static void PrintRelayHeader(Options o, string folder)
    {
        Console.WriteLine($"Protocol: relay, scenario: forward, role: {o.Role.ToString().ToLowerInvariant()}");
        Console.WriteLine("Transport: ssl");
        Console.WriteLine($"Server address: {o.Address}");
        Console.WriteLine(o.EffectivePort == 0 ? "Server port: any free port" : $"Server port: {o.EffectivePort}");
        Console.WriteLine($"Certificates: {folder}");
        if (o.Role != Role.Server)
        {
            Console.WriteLine($"Working pairs: {o.Clients} ({2 * o.Clients} peers)");
            Console.WriteLine($"Working messages: {o.Messages} in flight per peer ({2 * o.Messages} per pair)");
        }

        Console.WriteLine($"Message size: {o.Size} (a BenchPing payload in an envelope)");
        Console.WriteLine(string.Create(CultureInfo.InvariantCulture, $"Seconds to benchmarking: {o.Seconds}"));
    }

    private static async Task<int> RunRelayClientsAsync(Options options, SslContext context, EndPoint target, RelayServer? relay)
    {
        var peers = Enumerable.Range(0, 2 * options.Clients).Select(_ => new BenchRelayPeer(context, target)).ToList();
        try
        {
            using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(60));
            foreach (var batch in peers.Chunk(64))
                await Task.WhenAll(batch.Select(p => p.ConnectAsync(timeout.Token)));
        }
        catch (Exception e) when (e is IOException or TimeoutException or OperationCanceledException or RelayException or System.Security.Authentication.AuthenticationException)
        {
            Console.Error.WriteLine($"Cannot register with the relay at {target}: {ErrorText.Describe(e)}");
            await Task.WhenAll(peers.Select(p => p.DisposeAsync().AsTask()));
            return 1;
        }

        for (var i = 0; i < options.Clients; i++)
        {
            peers[i].Pair(peers[i + options.Clients].PeerId, options.Size);
            peers[i + options.Clients].Pair(peers[i].PeerId, options.Size);
        }

        long Forwarded() => peers.Sum(p => p.Received);
        long Errors() => peers.Sum(p => p.Errors);
        long Relayed() => relay?.GetStatistics().MessagesRelayed ?? 0;

        // Every peer puts MESSAGES in flight, as every proto echo client does.
        foreach (var peer in peers)
            peer.Start(options.Messages);

        await WarmUpAsync(options);
        var watch = Stopwatch.StartNew();
        AllocationTracer.Current?.StartWindow();
        var forwarded0 = Forwarded();
        var relayed0 = Relayed();
        var allocated0 = GC.GetTotalAllocatedBytes(precise: true);
        var relayCpu0 = options.ServerPid is { } pid0 ? ProcessCpu.Seconds(pid0) : null;
        var lastTime = 0.0;
        var lastCount = forwarded0;
        var total = await WaitOutRunAsync(options, watch, now =>
        {
            var count = Forwarded();
            var line = string.Create(CultureInfo.InvariantCulture,
                $"progress: {now,6:F1} s  {(count - lastCount) / Math.Max(now - lastTime, 1e-9),12:F0} msg/s forwarded  errors {Errors()}");
            lastTime = now;
            lastCount = count;
            return line;
        });
        var forwarded1 = Forwarded();
        var relayed1 = Relayed();
        var allocated1 = GC.GetTotalAllocatedBytes(precise: true);
        var relayCpu1 = options.ServerPid is { } pid1 ? ProcessCpu.Seconds(pid1) : null;
        var errors = Errors();
        foreach (var peer in peers)
            peer.StopSending();
        await Task.WhenAll(peers.Select(p => p.DisposeAsync().AsTask()));

        var report = new Report("relay", "forward", ClientRole(options), target.ToString() ?? "", options.Clients, options.Messages, options.Size,
            options.Seconds, errors, total, (forwarded1 - forwarded0) * options.Size, allocated1 - allocated0,
            CountedMessages: forwarded1 - forwarded0, Transport: "ssl",
            Relay: relay is null ? null : new RelayFigures(relayed1 - relayed0, null),
            ServerCpuSeconds: relayCpu1 - relayCpu0);
        report.Print(options.Json);
        return report.Errors == 0 ? 0 : 1;
    }

    /// <summary>
    /// The relay alone: each second the messages it forwarded and the bytes this process allocated
    /// but for the sampling thread's own (its list, the progress lines): the figure is taken over
    /// the steady state (from the second sample with traffic to the last). With
    /// --trace-allocations the samples cover the same window.
    /// </summary>
    private static async Task<int> RunRelayServerAsync(Options options, RelayServer relay)
    {
        Console.WriteLine($"Relay listening on {relay.Endpoint}; {(options.Seconds > 0 ? $"stops after {options.Seconds} s" : "press Enter or Ctrl+C to stop")}.");
        using var cts = new CancellationTokenSource();
        Console.CancelKeyPress += (_, e) =>
        {
            e.Cancel = true;
            cts.Cancel();
        };
        if (options.Seconds > 0)
            cts.CancelAfter(TimeSpan.FromSeconds(options.Seconds));
        else
            _ = Task.Run(() =>
            {
                Console.ReadLine();
                cts.Cancel();
            });

        var done = new TaskCompletionSource<int>(TaskCreationOptions.RunContinuationsAsynchronously);
        var sampler = new Thread(() =>
        {
            try
            {
                SampleRelay(options, relay, cts.Token);
                done.SetResult(0);
            }
            catch (Exception e)
            {
                done.SetException(e);
            }
        }) { IsBackground = true, Name = "relay sampler" };
        sampler.Start();
        return await done.Task;
    }

    // On a thread of its own, so what it allocates can be told apart: GetAllocatedBytesForCurrentThread.
    private static void SampleRelay(Options options, RelayServer relay, CancellationToken token)
    {
        var tracer = AllocationTracer.Current;
        var samples = new List<(double Time, long Relayed, long Allocated, int Peers)>(1024);
        var traced = new List<Dictionary<string, long>?>(1024);
        var started = false;
        var watch = Stopwatch.StartNew();
        while (!token.WaitHandle.WaitOne(1000))
        {
            var relayed = relay.GetStatistics().MessagesRelayed;
            var peers = relay.PeerCount;
            var own = GC.GetAllocatedBytesForCurrentThread();
            samples.Add((watch.Elapsed.TotalSeconds, relayed, GC.GetTotalAllocatedBytes(precise: true) - own, peers));
            if (samples.Count < 2)
            {
                traced.Add(null);
                continue;
            }

            var (t0, r0, a0, _) = samples[^2];
            var (t1, r1, a1, _) = samples[^1];
            if (r1 > r0 && !started)
            {
                started = true;
                tracer?.StartWindow(); // the first second with traffic ended: the steady state starts here
            }

            traced.Add(tracer?.Snapshot());
            if (!options.Quiet && r1 > r0)
                Console.Error.WriteLine(string.Create(CultureInfo.InvariantCulture,
                    $"progress: {t1,6:F1} s  peers {peers}  {(r1 - r0) / (t1 - t0),12:F0} msg/s forwarded  {a1 - a0} B allocated  {(a1 - a0) / (double)(r1 - r0):F4} B/msg"));
        }

        // Steady state: from the end of the first second with traffic (registrations, JIT) to the end
        // of the last second with traffic in which no peer left (a departure is a delta to every peer).
        var peak = samples.Count > 0 ? samples.Max(s => s.Peers) : 0;
        var busy = Enumerable.Range(1, Math.Max(0, samples.Count - 1))
            .Where(i => samples[i].Relayed > samples[i - 1].Relayed && samples[i].Peers == peak && samples[i - 1].Peers == peak).ToList();
        var first = busy.Count > 1 ? busy[0] : -1;
        var last = busy.Count > 1 ? busy[^1] : 0;
        var forwarded = first >= 0 && last > first ? samples[last].Relayed - samples[first].Relayed : 0;
        var allocated = first >= 0 && last > first ? samples[last].Allocated - samples[first].Allocated : 0;
        var seconds = first >= 0 && last > first ? samples[last].Time - samples[first].Time : 0;
        if (tracer is not null && last > first && traced[last] is { } window)
            tracer.EndWindow(window);
        var report = new Report("relay", "forward", "server", relay.Endpoint.ToString() ?? "", 0, 0, options.Size, options.Seconds, 0, seconds,
            forwarded * options.Size, allocated, CountedMessages: forwarded, Transport: "ssl",
            Relay: new RelayFigures(forwarded, forwarded > 0 ? allocated / (double)forwarded : null));
        report.Print(options.Json);
    }
}
