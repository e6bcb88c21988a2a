using System;
using System.Collections.Generic;
using System.IO;
using System.Linq;
using ScottPlot;

namespace NetServer.BenchReport;

/// <summary>The PNGs: throughput beside its reference, allocations per message, latency percentiles.</summary>
internal static class Plots
{
    public const string Throughput = "throughput.png";
    public const string Allocations = "allocations.png";
    public const string Latency = "latency.png";

    /// <summary>The against-Kestrel-and-nginx plot of one unit: servers-req-s.png, servers-msg-s.png.</summary>
    public static string ServersFile(string unit) => $"servers-{unit.Replace('/', '-')}.png";

    public static List<string> WriteAll(IReadOnlyList<BenchResult> results, string directory)
    {
        var files = new List<string>();
        // Every run is a bar of its own (references too: tcp echo is the reference of ssl echo), its reference beside it.
        var measured = results.Where(r => r.Throughput is not null).ToList();
        if (measured.Count > 0)
        {
            var series = new List<(string, double?[])>
            {
                ("NetServer", measured.Select(r => r.Throughput).ToArray()),
                ("reference", measured.Select(r => r.ReferenceThroughput(results)).ToArray()),
            };
            files.Add(Grouped(Path.Combine(directory, Throughput), "Throughput per scenario (its unit in the label), with its reference",
                "per second (log10)", measured.Select(r => $"{r.Label} [{r.Unit}]").ToArray(), series, log: true));
        }
        var allocating = results.Where(r => r.AllocatedBytesPerMessage is not null).ToList();
        if (allocating.Count > 0)
        {
            files.Add(Grouped(Path.Combine(directory, Allocations), "Allocated bytes per message (client and server in one process unless said)",
                "B/msg", allocating.Select(r => r.Label).ToArray(),
                [("allocated", allocating.Select(r => r.AllocatedBytesPerMessage).ToArray())], log: false));
        }
        var timed = results.Where(r => r.HasLatency).ToList();
        if (timed.Count > 0)
        {
            files.Add(Grouped(Path.Combine(directory, Latency), "Round-trip latency percentiles", "microseconds",
                timed.Select(r => r.Label).ToArray(),
                [
                    ("p50", timed.Select(r => r.P50Ns / 1000).ToArray()),
                    ("p90", timed.Select(r => r.P90Ns / 1000).ToArray()),
                    ("p99", timed.Select(r => r.P99Ns / 1000).ToArray()),
                    ("p99.9", timed.Select(r => r.P999Ns / 1000).ToArray()),
                ], log: false));
        }
        // One plot per unit, on a linear scale, so a server's lead reads as the bars' heights.
        // Every plot gets every server, so a server keeps its colour where another one is missing.
        var comparisons = ServerComparison.From(results);
        var servers = ServerComparison.Servers(comparisons);
        foreach (var unit in comparisons.Select(c => c.Unit).Distinct())
        {
            var ofUnit = comparisons.Where(c => c.Unit == unit).ToList();
            files.Add(Grouped(Path.Combine(directory, ServersFile(unit)), $"Against Kestrel and nginx: {unit} per scenario, each server in its own process",
                unit, ofUnit.Select(c => c.Scenario).ToArray(),
                servers.Select(s => (ServerComparison.DisplayName(s), ofUnit.Select(c => c.Throughput.TryGetValue(s, out var v) ? v : (double?)null).ToArray())).ToList(),
                log: false, valueLabels: true));
        }
        return files;
    }

    /// <summary>Bars grouped per label, one colour per series; a missing figure leaves a gap.</summary>
    private static string Grouped(string path, string title, string axis, string[] labels, List<(string Name, double?[] Values)> series, bool log, bool valueLabels = false)
    {
        // A figure no run measured (p90 today) gets no bar and no legend entry; the others keep their colours.
        var colours = Enumerable.Range(0, series.Count).Where(s => series[s].Values.Any(v => v is not null)).ToList();
        series = colours.Select(s => series[s]).ToList();
        var plot = new Plot();
        var palette = new ScottPlot.Palettes.Category10();
        var width = 0.8 / series.Count;
        for (var s = 0; s < series.Count; s++)
        {
            var bars = new List<Bar>();
            for (var i = 0; i < labels.Length; i++)
            {
                if (series[s].Values[i] is not { } value || value <= 0 && log)
                    continue;
                bars.Add(new Bar
                {
                    Position = i - 0.4 + width * (s + 0.5),
                    Value = log ? Math.Log10(value) : value,
                    Size = width,
                    FillColor = palette.GetColor(colours[s]),
                    Label = valueLabels ? Short(value) : "",
                });
            }
            var plotted = plot.Add.Bars(bars);
            plotted.LegendText = series[s].Name;
            plotted.Color = palette.GetColor(colours[s]);
        }
        plot.Axes.Bottom.SetTicks(Enumerable.Range(0, labels.Length).Select(i => (double)i).ToArray(), labels);
        plot.Axes.Bottom.TickLabelStyle.Rotation = 90;
        plot.Axes.Bottom.TickLabelStyle.Alignment = Alignment.MiddleLeft;
        plot.Axes.Bottom.MinimumSize = 380;
        if (valueLabels)
            plot.Axes.Margins(bottom: 0, top: 0.25); // room above the highest bar for its value and the legend
        else
            plot.Axes.Margins(bottom: 0);
        plot.Title(title);
        plot.YLabel(axis);
        if (series.Count > 1)
            plot.ShowLegend(Alignment.UpperRight);
        plot.SavePng(path, Math.Max(900, 120 + 36 * labels.Length * (valueLabels ? series.Count : 1)), 1040);
        return path;
    }

    /// <summary>A rate in three digits: 1.23M, 456k, 789.</summary>
    private static string Short(double value) => value switch
    {
        >= 1e6 => (value / 1e6).ToString("0.00", System.Globalization.CultureInfo.InvariantCulture) + "M",
        >= 1e3 => (value / 1e3).ToString("0", System.Globalization.CultureInfo.InvariantCulture) + "k",
        _ => value.ToString("0", System.Globalization.CultureInfo.InvariantCulture),
    };
}
