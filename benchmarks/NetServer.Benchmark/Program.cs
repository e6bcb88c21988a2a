using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Globalization;
using System.Linq;
using System.Net;
using System.Threading;
using System.Threading.Tasks;

namespace NetServer.Benchmark;

internal static class Program
{
    private static async Task<int> Main(string[] args)
    {
        Options? options;
        try
        {
            options = Options.Parse(args, Console.Error);
        }
        catch (Exception e) when (e is ArgumentException or FormatException)
        {
            Console.Error.WriteLine(e.Message);
            Console.Error.WriteLine(Options.Usage);
            return 2;
        }

        if (options is null)
        {
            Console.WriteLine(Options.Usage);
            return 0;
        }

        // Read by the socket engine when it first starts, so set before any socket exists.
        if (options.Threads > 0)
            Environment.SetEnvironmentVariable("DOTNET_SYSTEM_NET_SOCKETS_THREAD_COUNT", options.Threads.ToString(CultureInfo.InvariantCulture));
        if (options.InlineCompletions)
            Environment.SetEnvironmentVariable("DOTNET_SYSTEM_NET_SOCKETS_INLINE_COMPLETIONS", "1");

        PrintHeader(options);
        using var tracer = options.TraceAllocations ? new AllocationTracer() : null;
        var code = options.Role switch
        {
            Role.Server => await RunServerAsync(options),
            Role.Client => await RunClientAsync(options, ParseTarget(options)),
            _ => await RunBothAsync(options),
        };
        tracer?.Print();
        return code;
    }

    private static void PrintHeader(Options o)
    {
        Console.WriteLine($"Protocol: {o.Protocol}, scenario: {o.Scenario}, role: {o.Role.ToString().ToLowerInvariant()}");
        Console.WriteLine(o.Protocol == "uds" ? $"Server path: {o.EffectivePath}" : $"Server address: {o.Address}");
        if (o.Protocol == "tcp")
            Console.WriteLine(o.EffectivePort == 0 ? "Server port: any free port" : $"Server port: {o.EffectivePort}");
        if (o.Role != Role.Server)
        {
            Console.WriteLine($"Working clients: {o.Clients}");
            if (o.Scenario == "echo")
                Console.WriteLine($"Working messages: {o.Messages}");
        }

        Console.WriteLine($"Message size: {o.Size}");
        Console.WriteLine(string.Create(CultureInfo.InvariantCulture, $"Seconds to benchmarking: {o.Seconds}"));
    }

    private static EndPoint ParseTarget(Options o) =>
        o.Protocol == "tcp" ? new IPEndPoint(IPAddress.Parse(o.Address), o.EffectivePort) : new UnixEndPointHolder(o.EffectivePath);

    private static async Task<int> RunBothAsync(Options options)
    {
        using var server = new ServerHandle(options);
        server.Start();
        using var cts = new CancellationTokenSource();
        var multicasting = options.Scenario == "multicast" ? MulticastLoopAsync(server, options, cts.Token) : Task.CompletedTask;
        var code = await RunClientAsync(options, server.Endpoint, () => server.Errors, async () =>
        {
            // Stop producing before the clients go, so the last figures are not disturbed.
            await cts.CancelAsync();
            await multicasting;
        });
        server.Stop();
        return code;
    }

    /// <summary>The multicast scenario's server side: one message after another, as fast as the slowest client allows.</summary>
    private static async Task MulticastLoopAsync(ServerHandle server, Options options, CancellationToken token)
    {
        var message = new byte[options.Size];
        Array.Fill(message, (byte)'m');
        try
        {
            var sent = 0;
            while (!token.IsCancellationRequested)
            {
                if (server.ConnectedSessions == 0)
                    await Task.Delay(10, token);
                else
                    await server.MulticastAsync(message, token);

                // Multicasts that never wait complete synchronously: let the I/O work run now and then.
                if (++sent % 256 == 0)
                    await Task.Yield();
            }
        }
        catch (OperationCanceledException)
        {
            // The run is over.
        }
    }

    private static async Task<int> RunServerAsync(Options options)
    {
        using var server = new ServerHandle(options);
        server.Start();
        Console.WriteLine($"Server listening on {server.Endpoint}; {(options.Seconds > 0 ? $"stops after {options.Seconds} s" : "press Enter or Ctrl+C to stop")}.");
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

        var multicasting = options.Scenario == "multicast" ? MulticastLoopAsync(server, options, cts.Token) : Task.CompletedTask;

        // Steady state: from one second after traffic starts until the last second with traffic.
        var samples = new List<(double Time, long Bytes, long Allocated)>();
        var baseline = options.Memory ? GC.GetTotalMemory(forceFullCollection: true) : 0;
        var watch = Stopwatch.StartNew();
        while (!cts.IsCancellationRequested)
        {
            try
            {
                await Task.Delay(1000, cts.Token);
            }
            catch (OperationCanceledException)
            {
                break;
            }

            if (options.Memory)
                PrintMemory(server, baseline);

            var bytes = options.Scenario == "echo" ? server.BytesReceived : server.BytesSent;
            samples.Add((watch.Elapsed.TotalSeconds, bytes, GC.GetTotalAllocatedBytes(precise: true)));
            if (!options.Quiet && samples.Count > 1)
            {
                var (t0, b0, a0) = samples[^2];
                var (t1, b1, a1) = samples[^1];
                var messages = (b1 - b0) / options.Size;
                Console.Error.WriteLine(string.Create(CultureInfo.InvariantCulture,
                    $"progress: {t1,6:F1} s  sessions {server.ConnectedSessions}  {messages / (t1 - t0),12:F0} msg/s  {(messages > 0 ? (a1 - a0) / (double)messages : 0),8:F3} B/msg allocated"));
            }
        }

        await multicasting;
        server.Stop();

        var active = samples.Select((s, i) => (s, i)).Where(x => x.i > 0 && x.s.Bytes > samples[x.i - 1].Bytes).Select(x => x.i).ToList();
        if (active.Count < 3)
        {
            Console.WriteLine("Not enough traffic for a steady-state figure.");
            return 0;
        }

        var first = samples[active[0]]; // skip the first active second (warm-up, JIT, connects)
        var last = samples[active[^1]];
        var report = new Report(options.Protocol, options.Scenario, "server", server.Endpoint.ToString() ?? "", 0, options.Messages, options.Size,
            options.Seconds, server.Errors, last.Time - first.Time, last.Bytes - first.Bytes, last.Allocated - first.Allocated);
        report.Print(options.Json);
        return server.Errors == 0 ? 0 : 1;
    }

    /// <summary>The managed heap after a full collection, per connected session, above the heap with no session.</summary>
    private static void PrintMemory(ServerHandle server, long baseline)
    {
        var heap = GC.GetTotalMemory(forceFullCollection: true);
        var sessions = server.ConnectedSessions;
        var perSession = sessions > 0 ? (heap - baseline) / (double)sessions : 0;
        Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
            $"memory: sessions {sessions}  managed heap {Report.FormatBytes(heap)}  per session {perSession:F0} B (baseline {Report.FormatBytes(baseline)})"));
    }

    private static async Task<int> RunClientAsync(Options options, EndPoint target, Func<long>? serverErrors = null, Func<Task>? measured = null)
    {
        var echo = options.Scenario == "echo";
        var initial = new byte[echo ? options.InFlight : 0];
        Array.Fill(initial, (byte)'x');

        var clients = new List<StreamClient>(options.Clients);
        var behaviors = new List<ClientBehavior>(options.Clients);
        for (var i = 0; i < options.Clients; i++)
        {
            var behavior = new ClientBehavior(echo, initial);
            behaviors.Add(behavior);
            clients.Add(target is IPEndPoint ip
                ? new BenchTcpClient(ip, behavior) { OptionNoDelay = true }
                : new BenchUdsClient(target.ToString()!, behavior));
        }

        // Connect in modest batches so a large client count does not overflow the listen backlog.
        using (var connectTimeout = new CancellationTokenSource(TimeSpan.FromSeconds(60)))
        {
            foreach (var batch in clients.Chunk(256))
                await Task.WhenAll(batch.Select(c => c.ConnectAsync(connectTimeout.Token)));
        }

        long Received() => behaviors.Sum(b => b.Counters.Received);
        long Errors() => behaviors.Sum(b => b.Counters.Errors) + (serverErrors?.Invoke() ?? 0);

        var watch = Stopwatch.StartNew();
        var bytes0 = Received();
        var allocated0 = GC.GetTotalAllocatedBytes(precise: true);
        var deadline = TimeSpan.FromSeconds(options.Seconds);
        var lastTime = 0.0;
        var lastBytes = bytes0;
        while (true)
        {
            // Read the clock once: the time left can run out between two reads.
            var wait = deadline - watch.Elapsed;
            if (wait <= TimeSpan.Zero)
                break;
            await Task.Delay(wait < TimeSpan.FromSeconds(1) ? wait : TimeSpan.FromSeconds(1));
            if (options.Quiet)
                continue;
            var now = watch.Elapsed.TotalSeconds;
            var bytes = Received();
            Console.Error.WriteLine(string.Create(CultureInfo.InvariantCulture,
                $"progress: {now,6:F1} s  {(bytes - lastBytes) / options.Size / Math.Max(now - lastTime, 1e-9),12:F0} msg/s  errors {Errors()}"));
            lastTime = now;
            lastBytes = bytes;
        }

        var total = watch.Elapsed.TotalSeconds;
        var bytes1 = Received();
        var allocated1 = GC.GetTotalAllocatedBytes(precise: true);

        if (measured is not null)
            await measured();
        await Task.WhenAll(clients.Select(c => c.DisposeAsync().AsTask()));

        var report = new Report(options.Protocol, options.Scenario, options.Role == Role.Both ? "both" : "client", target.ToString() ?? "",
            options.Clients, options.Messages, options.Size, options.Seconds, Errors(), total, bytes1 - bytes0, allocated1 - allocated0);
        report.Print(options.Json);
        return report.Errors == 0 ? 0 : 1;
    }
}

/// <summary>A Unix socket target named by its path (the client classes take the path).</summary>
internal sealed class UnixEndPointHolder(string path) : EndPoint
{
    public string Path { get; } = path;

    public override string ToString() => Path;
}
