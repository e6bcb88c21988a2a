using System;
using System.Collections.Generic;
using System.Globalization;
using System.IO;
using System.Linq;
using System.Threading.Tasks;
using Xunit.Abstractions;

namespace NetServer.P2P.Tests.Nat;

/// <summary>
/// The figure "time to Direct under the NAT cases" (docs/p2p.md): for each pair of NAT types,
/// <see cref="TriesVariable"/> punches between fresh peer agents (<see cref="PunchPair.PunchFreshAsync"/>,
/// one lab and relay per case), each timed by the asking agent; per case the median and max time
/// to Direct and the tries that ended Relayed, with their times (the time to the Relayed outcome
/// where a case cannot go direct). A benchmark run by build/bench-nat.sh, skipped otherwise;
/// lines go to the test output and, when <see cref="ReportVariable"/> names a file, are appended
/// to it as each case ends.
/// </summary>
public sealed class NatTimeToPathBenchmark(ITestOutputHelper output)
{
    /// <summary>The environment variable with the number of tries per case; unset, the benchmark is skipped.</summary>
    public const string TriesVariable = "NETSERVER_NATLAB_TRIES";

    /// <summary>The environment variable naming the file the report lines are appended to (optional).</summary>
    public const string ReportVariable = "NETSERVER_NATLAB_REPORT";

    // The cases of docs/p2p.md's NAT table that punch (UDP blocked never gets to): four that go
    // direct, two that end relayed after the three tries.
    private static readonly (NatType First, NatType Second)[] s_cases =
    [
        (NatType.EndpointIndependent, NatType.EndpointIndependent),
        (NatType.Public, NatType.EndpointIndependent),
        (NatType.FullCone, NatType.Symmetric),
        (NatType.Symmetric, NatType.FullCone),
        (NatType.EndpointIndependent, NatType.Symmetric),
        (NatType.Symmetric, NatType.Symmetric),
    ];

    /// <summary>The tries per case from <see cref="TriesVariable"/>, or null when it is unset or not a positive number.</summary>
    internal static int? Tries => int.TryParse(Environment.GetEnvironmentVariable(TriesVariable), NumberStyles.None, CultureInfo.InvariantCulture, out var tries) && tries > 0 ? tries : null;

    [NatLabFact(Benchmark = true)]
    public async Task Time_to_path_under_each_NAT_case()
    {
        var tries = Tries ?? throw new InvalidOperationException($"{TriesVariable} is not set.");
        var report = Environment.GetEnvironmentVariable(ReportVariable);
        Report(report, $"time to path, {tries} fresh punches a case, ConnectDirectAsync timeout {PunchPair.PunchTimeoutMilliseconds} ms, {DateTime.UtcNow:yyyy-MM-dd HH:mm} UTC, load {Load()}");
        foreach (var (first, second) in s_cases)
        {
            await using var pair = await PunchPair.CreateAsync(first, second);
            var outcomes = await pair.PunchFreshAsync(tries);
            Report(report, Summary($"{first} x {second}", outcomes) + $" (load {Load()})");
        }
    }

    /// <summary>One case's line: the Direct tries' median and max, then the Relayed ones', then every time in order.</summary>
    internal static string Summary(string name, IReadOnlyList<PunchOutcome> outcomes)
    {
        var direct = outcomes.Where(o => o.Direct).Select(o => o.Milliseconds).ToList();
        var relayed = outcomes.Where(o => !o.Direct).Select(o => o.Milliseconds).ToList();
        var all = string.Join(" ", outcomes.Select(o => (o.Direct ? "d" : "r") + o.Milliseconds.ToString(CultureInfo.InvariantCulture)));
        return $"{name}: {outcomes.Count} tries; direct {direct.Count}{Times(direct)}; relayed {relayed.Count}{Times(relayed)}; ms in order (d direct, r relayed): {all}";
    }

    private static string Times(List<long> times) => times.Count == 0
        ? ""
        : $" (median {Median(times).ToString("0.#", CultureInfo.InvariantCulture)} ms, max {times.Max()} ms)";

    private static double Median(List<long> times)
    {
        var sorted = times.Order().ToList();
        var middle = sorted.Count / 2;
        return sorted.Count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2.0;
    }

    private static string Load() => File.Exists("/proc/loadavg") ? string.Join(' ', File.ReadAllText("/proc/loadavg").Split(' ').Take(3)) : "?";

    private void Report(string? file, string line)
    {
        output.WriteLine(line);
        if (!string.IsNullOrEmpty(file))
            File.AppendAllText(file, line + Environment.NewLine);
    }
}
