using System.Collections.Generic;
using System.IO;
using System.Linq;
using System.Text.Json;

namespace NetServer.BenchReport;

/// <summary>One line of results.jsonl: a run of netserver-bench, named by bench.sh (see benchmarks/README.md).</summary>
internal sealed record BenchResult(
    string Label,
    string? Protocol,
    string? Scenario,
    int? Clients,
    int? Size,
    double? Throughput,
    string Unit,
    double? BytesPerSecond,
    double? AllocatedBytesPerMessage,
    double? ServerCpuNsPerMessage,
    double? P50Ns,
    double? P90Ns,
    double? P99Ns,
    double? P999Ns,
    string? Reference,
    string? Server)
{
    public bool HasLatency => P50Ns is not null || P99Ns is not null;

    /// <summary>The lines of every file, in order (bench.sh's results.jsonl, then bench-http.sh's and bench-ws.sh's).</summary>
    public static List<BenchResult> ReadAll(IEnumerable<string> paths)
    {
        var results = new List<BenchResult>();
        foreach (var path in paths)
        {
            foreach (var line in File.ReadLines(path))
            {
                if (string.IsNullOrWhiteSpace(line))
                    continue;
                using var document = JsonDocument.Parse(line);
                results.Add(From(document.RootElement));
            }
        }
        return results;
    }

    /// <summary>The throughput of this run's reference (a run in the same file), when it names one that was measured.</summary>
    public double? ReferenceThroughput(IReadOnlyList<BenchResult> all) =>
        Reference is null ? null : all.FirstOrDefault(r => r.Label == Reference)?.Throughput;

    public double? Ratio(IReadOnlyList<BenchResult> all) =>
        Throughput is { } value && ReferenceThroughput(all) is { } reference && reference > 0 ? value / reference : null;

    private static BenchResult From(JsonElement e)
    {
        // Each scenario counts its own unit: messages, round trips (latency), handshakes, requests (http).
        var (throughput, unit) =
            Number(e, "messagesPerSecond") is { } m ? (m, Text(e, "protocol") is "http" or "https" ? "req/s" : "msg/s")
            : Number(e, "roundTripsPerSecond") is { } rt ? (rt, "rt/s")
            : Number(e, "handshakesPerSecond") is { } hs ? (hs, "hs/s")
            : ((double?)null, "");
        return new BenchResult(
            Text(e, "label") ?? throw new InvalidDataException("a result without \"label\""),
            Text(e, "protocol"),
            Text(e, "scenario"),
            (int?)Number(e, "clients"),
            (int?)Number(e, "size"),
            throughput,
            unit,
            Number(e, "bytesPerSecond"),
            Number(e, "allocatedBytesPerMessage") ?? Number(e, "allocatedBytesPerRoundTrip") ?? Number(e, "allocatedBytesPerHandshake"),
            Number(e, "serverCpuNsPerMessage"),
            Number(e, "p50Ns"),
            Number(e, "p90Ns"),
            Number(e, "p99Ns"),
            Number(e, "p999Ns"),
            Text(e, "reference"),
            Text(e, "server"));
    }

    private static double? Number(JsonElement e, string name) =>
        e.TryGetProperty(name, out var p) && p.ValueKind == JsonValueKind.Number ? p.GetDouble() : null;

    private static string? Text(JsonElement e, string name) =>
        e.TryGetProperty(name, out var p) && p.ValueKind == JsonValueKind.String ? p.GetString() : null;
}
