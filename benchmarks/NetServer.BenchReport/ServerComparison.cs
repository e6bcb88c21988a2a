using System.Collections.Generic;
using System.Linq;

namespace NetServer.BenchReport;

/// <summary>
/// The runs that name their server (build/bench-http.sh and build/bench-ws.sh: Kestrel, nginx, ours):
/// grouped by scenario, a scenario's label being the run's label without its ", SERVER" ending.
/// </summary>
internal sealed record ServerComparison(string Scenario, string Unit, IReadOnlyDictionary<string, double> Throughput)
{
    public const string Reference = "kestrel";

    /// <summary>The servers in the order of the plots and columns: the reference first, ours after the other references.</summary>
    private static readonly string[] s_knownOrder = [Reference, "nginx", "ours", "baseline"];

    public static List<ServerComparison> From(IReadOnlyList<BenchResult> results) =>
        results
            .Where(r => r.Server is not null && r.Throughput is not null && r.Label.EndsWith(", " + r.Server, System.StringComparison.Ordinal))
            .GroupBy(r => (Scenario: r.Label[..^(r.Server!.Length + 2)], r.Unit))
            .Select(g => new ServerComparison(g.Key.Scenario, g.Key.Unit,
                g.GroupBy(r => r.Server!).ToDictionary(s => s.Key, s => s.Last().Throughput!.Value)))
            .ToList();

    /// <summary>Every server some comparison measured, in the order of <see cref="s_knownOrder"/>, unknown ones last.</summary>
    public static List<string> Servers(IEnumerable<ServerComparison> comparisons) =>
        comparisons.SelectMany(c => c.Throughput.Keys).Distinct()
            .OrderBy(s => System.Array.IndexOf(s_knownOrder, s) is var i and >= 0 ? i : s_knownOrder.Length)
            .ThenBy(s => s, System.StringComparer.Ordinal)
            .ToList();

    public static string DisplayName(string server) => server switch
    {
        Reference => "Kestrel",
        "ours" => "NetServer (ours)",
        _ => server,
    };

    /// <summary>The ratios the summary gives: every server to Kestrel, and ours to nginx.</summary>
    public static List<(string Numerator, string Denominator)> Ratios(IReadOnlyList<string> servers)
    {
        var ratios = servers.Where(s => s != Reference && servers.Contains(Reference)).Select(s => (s, Reference)).ToList();
        if (servers.Contains("ours") && servers.Contains("nginx"))
            ratios.Add(("ours", "nginx"));
        return ratios;
    }

    public double? Ratio(string numerator, string denominator) =>
        Throughput.TryGetValue(numerator, out var n) && Throughput.TryGetValue(denominator, out var d) && d > 0 ? n / d : null;
}
