using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Globalization;
using System.IO;
using System.Linq;
using System.Net;
using System.Threading;
using System.Threading.Tasks;
using NetServer.Benchmark;

namespace NetServer.Soak;

/// <summary>
/// The server side of a soak: the benchmark CLI's echo servers for tcp, ssl, uds, udp, http, ws and
/// msg in one process, sampled every interval (RSS, GC heap, handles, threads, sessions, errors) into a CSV.
/// </summary>
internal sealed class SoakServers : IDisposable
{
    private static readonly string[] s_protocols = ["tcp", "ssl", "uds", "udp", "http", "ws", "msg"];
    private readonly List<(string Protocol, ServerHandle Server)> _servers = [];

    public SoakServers(string? certificates)
    {
        foreach (var protocol in s_protocols)
        {
            var args = new List<string> { protocol, protocol == "http" ? "get" : "echo", "--role", "server", "-p", "0" };
            if (certificates is not null)
                args.AddRange(["--certs", certificates]);
            if (protocol == "uds")
                args.AddRange(["--path", Path.Combine(Path.GetTempPath(), $"netserver-soak-{Environment.ProcessId}.sock")]);
            var options = Options.Parse(args.ToArray(), Console.Error) ?? throw new InvalidOperationException($"Bad options for {protocol}.");
            var server = PeerFactory.Create(options).CreateServer();
            if (!server.Start())
                throw new InvalidOperationException($"The {protocol} server did not start.");
            _servers.Add((protocol, server));
        }
    }

    /// <summary>One line the client reads: protocol=endpoint, space-separated (a Unix socket's endpoint is its path).</summary>
    public string Endpoints => string.Join(' ', _servers.Select(s => $"{s.Protocol}={Describe(s.Server.Endpoint)}"));

    public long Errors => _servers.Sum(s => s.Server.Counters.Errors);

    public long Sessions => _servers.Sum(s => s.Server.ConnectedSessions);

    private static string Describe(EndPoint endpoint) => endpoint is IPEndPoint ip ? ip.Port.ToString(CultureInfo.InvariantCulture) : endpoint.ToString()!;

    /// <summary>Samples every <paramref name="interval"/> into <paramref name="csv"/> until <paramref name="token"/> is cancelled.</summary>
    public async Task SampleAsync(string csv, TimeSpan interval, CancellationToken token)
    {
        await using var writer = new StreamWriter(csv) { AutoFlush = true };
        await writer.WriteLineAsync(SoakSample.Header);
        var started = Stopwatch.StartNew();
        while (!token.IsCancellationRequested)
        {
            try
            {
                await Task.Delay(interval, token);
            }
            catch (OperationCanceledException)
            {
            }

            var sample = SoakSample.Take(started.Elapsed.TotalSeconds, Sessions, Errors);
            await writer.WriteLineAsync(sample.ToCsv());
            Console.WriteLine(sample);
        }
    }

    public void Dispose()
    {
        foreach (var (_, server) in _servers)
        {
            server.Stop();
            server.Dispose();
        }
    }
}

/// <summary>One sample of the server process.</summary>
internal sealed record SoakSample(double Seconds, double RssMb, double GcHeapMb, int Handles, int Threads, long Sessions, long Errors)
{
    public const string Header = "seconds,rss_mb,gc_heap_mb,handles,threads,sessions,errors";

    public static SoakSample Take(double seconds, long sessions, long errors)
    {
        using var process = Process.GetCurrentProcess();
        var handles = Directory.Exists("/proc/self/fd") ? Directory.GetFiles("/proc/self/fd").Length : process.HandleCount;
        return new SoakSample(seconds, process.WorkingSet64 / 1048576.0, GC.GetTotalMemory(false) / 1048576.0, handles, process.Threads.Count, sessions, errors);
    }

    public static SoakSample Parse(string line)
    {
        var f = line.Split(',');
        double D(int i) => double.Parse(f[i], CultureInfo.InvariantCulture);
        return new SoakSample(D(0), D(1), D(2), (int)D(3), (int)D(4), (long)D(5), (long)D(6));
    }

    public string ToCsv() => string.Create(CultureInfo.InvariantCulture, $"{Seconds:F0},{RssMb:F1},{GcHeapMb:F1},{Handles},{Threads},{Sessions},{Errors}");

    public override string ToString() => string.Create(CultureInfo.InvariantCulture,
        $"soak server {Seconds,6:F0} s: RSS {RssMb:F1} MB, GC heap {GcHeapMb:F1} MB, {Handles} handles, {Threads} threads, {Sessions} sessions, {Errors} errors");
}
