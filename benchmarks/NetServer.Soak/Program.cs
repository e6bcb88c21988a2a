using System;
using System.Collections.Generic;
using System.Globalization;
using System.IO;
using System.Linq;
using System.Threading;
using System.Threading.Tasks;
using NetServer.Soak;
using ScottPlot;

// netserver-soak server CSV INTERVAL_SECONDS   every echo server in this process, sampled into CSV; stops when stdin closes
// netserver-soak client ENDPOINTS SECONDS [WORKERS]   churn against the servers ENDPOINTS names ("tcp=PORT uds=PATH ...")
// netserver-soak attack ENDPOINTS [SLOWLORIS] [NON_READERS] [SECONDS]   slow attacks on its http and ws servers beside a good client
// netserver-soak report CSV PNG WARMUP_SECONDS  plots the samples and judges the memory: flat after the warm-up, or exit 1
switch (args.FirstOrDefault())
{
    case "server" when args.Length >= 3:
    {
        using var servers = new SoakServers(Environment.GetEnvironmentVariable("NETSERVER_CERTS"));
        Console.WriteLine("endpoints " + servers.Endpoints);
        using var stop = new CancellationTokenSource();
        var sampling = servers.SampleAsync(args[1], TimeSpan.FromSeconds(double.Parse(args[2], CultureInfo.InvariantCulture)), stop.Token);
        await Console.In.ReadToEndAsync();
        stop.Cancel();
        await sampling;
        Console.WriteLine($"soak server: {servers.Errors} errors");
        return servers.Errors == 0 ? 0 : 1;
    }

    case "client" when args.Length >= 3:
    {
        var endpoints = args[1].Split(' ', StringSplitOptions.RemoveEmptyEntries).Select(p => p.Split('=', 2)).ToDictionary(p => p[0], p => p[1]);
        var clients = new SoakClients(endpoints, args.Length > 3 ? int.Parse(args[3], CultureInfo.InvariantCulture) : 2);
        using var stop = new CancellationTokenSource(TimeSpan.FromSeconds(double.Parse(args[2], CultureInfo.InvariantCulture)));
        var run = clients.RunAsync(stop.Token);
        while (!run.IsCompleted)
        {
            await Task.WhenAny(run, Task.Delay(TimeSpan.FromSeconds(30)));
            Console.WriteLine("soak client: " + clients.Summary);
        }

        await run;
        return clients.Errors == 0 && clients.Exchanges > 0 ? 0 : 1;
    }

    case "attack" when args.Length >= 2:
    {
        var endpoints = args[1].Split(' ', StringSplitOptions.RemoveEmptyEntries).Select(p => p.Split('=', 2)).ToDictionary(p => p[0], p => int.TryParse(p[1], out var port) ? port : 0);
        int Arg(int index, int otherwise) => args.Length > index ? int.Parse(args[index], CultureInfo.InvariantCulture) : otherwise;
        return await new SoakAttack(endpoints["http"], endpoints["ws"]).RunAsync(Arg(2, 10_000), Arg(3, 1_000), TimeSpan.FromSeconds(Arg(4, 90)));
    }

    case "report" when args.Length >= 4:
        return Report(args[1], args[2], double.Parse(args[3], CultureInfo.InvariantCulture));

    default:
        Console.Error.WriteLine("usage: netserver-soak server CSV INTERVAL | client ENDPOINTS SECONDS [WORKERS] | attack ENDPOINTS [SLOWLORIS] [NON_READERS] [SECONDS] | report CSV PNG WARMUP_SECONDS");
        return 2;
}

// Flat: after the warm-up, the last third's highest RSS and GC heap are within 20 % (and 8 MB) of
// the first third's highest; handles and threads likewise within 20 % (and 16).
static int Report(string csv, string png, double warmup)
{
    var samples = File.ReadLines(csv).Skip(1).Where(l => l.Length > 0).Select(SoakSample.Parse).ToList();
    var plot = new Plot();
    var seconds = samples.Select(s => s.Seconds / 60).ToArray();
    foreach (var (name, values) in new (string, double[])[]
    {
        ("RSS (MB)", samples.Select(s => s.RssMb).ToArray()),
        ("GC heap (MB)", samples.Select(s => s.GcHeapMb).ToArray()),
        ("handles", samples.Select(s => (double)s.Handles).ToArray()),
        ("threads", samples.Select(s => (double)s.Threads).ToArray()),
    })
    {
        plot.Add.Scatter(seconds, values).LegendText = name;
    }

    plot.XLabel("minutes");
    plot.Title("netserver-soak: the server process");
    plot.ShowLegend(Alignment.UpperLeft);
    plot.SavePng(png, 1000, 600);

    var steady = samples.Where(s => s.Seconds > warmup).ToList();
    if (steady.Count < 3)
    {
        Console.WriteLine($"soak report: {steady.Count} samples after the warm-up, too few to judge");
        return 1;
    }

    var third = Math.Max(1, steady.Count / 3);
    var early = steady.Take(third).ToList();
    var late = steady.Skip(steady.Count - third).ToList();
    var verdicts = new List<string>();
    bool Flat(string name, Func<SoakSample, double> value, double slack)
    {
        var before = early.Max(value);
        var after = late.Max(value);
        var flat = after <= before * 1.2 + slack;
        verdicts.Add(string.Create(CultureInfo.InvariantCulture, $"{name} {before:F1} -> {after:F1}{(flat ? "" : " GREW")}"));
        return flat;
    }

    var ok = Flat("RSS MB", s => s.RssMb, 8) & Flat("GC heap MB", s => s.GcHeapMb, 8) & Flat("handles", s => s.Handles, 16) & Flat("threads", s => s.Threads, 16);
    var errors = samples[^1].Errors;
    Console.WriteLine($"soak report: {string.Join(", ", verdicts)}; server errors {errors}; plot {png}");
    return ok && errors == 0 ? 0 : 1;
}
