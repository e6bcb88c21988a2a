using System;
using System.Buffers.Binary;
using System.IO;
using System.Linq;
using System.Threading.Tasks;
using NetServer.Tests.Infrastructure;
using Xunit;

namespace NetServer.BenchReport.Tests;

/// <summary>
/// netserver-benchreport as build/bench.sh runs it, on sample-results.jsonl (five runs: two with a
/// reference, one latency run): every plot a real PNG, summary.md a row per run with its ratio.
/// </summary>
public sealed class ReportToolTests : IDisposable
{
    private static readonly byte[] s_pngSignature = [0x89, (byte)'P', (byte)'N', (byte)'G', 0x0D, 0x0A, 0x1A, 0x0A];
    private readonly string _output = Path.Combine(Path.GetTempPath(), "netserver-benchreport-" + Guid.NewGuid().ToString("N"));

    [Fact]
    public async Task Writes_every_plot_as_a_png_and_a_summary_row_per_run_with_its_ratio()
    {
        var sample = Path.Combine(AppContext.BaseDirectory, "sample-results.jsonl");
        await using (var tool = ProgramProcess.Start("netserver-benchreport", TimeSpan.FromSeconds(30), sample, _output, "sample note"))
            Assert.Equal(0, await tool.WaitForExitAsync());

        foreach (var plot in new[] { "throughput.png", "allocations.png", "latency.png" })
        {
            var bytes = await File.ReadAllBytesAsync(Path.Combine(_output, plot));
            Assert.True(bytes.Length > 33, $"{plot}: {bytes.Length} bytes");
            Assert.Equal(s_pngSignature, bytes[..8]);
            // The first chunk is IHDR: length (4), type (4), then width and height, big-endian.
            Assert.Equal("IHDR", System.Text.Encoding.ASCII.GetString(bytes, 12, 4));
            Assert.True(BinaryPrimitives.ReadUInt32BigEndian(bytes.AsSpan(16)) > 0, $"{plot}: zero width");
            Assert.True(BinaryPrimitives.ReadUInt32BigEndian(bytes.AsSpan(20)) > 0, $"{plot}: zero height");
        }

        var summary = await File.ReadAllLinesAsync(Path.Combine(_output, "summary.md"));
        Assert.Contains("sample note", summary);
        Assert.Contains(summary, line => line.Contains("(throughput.png)", StringComparison.Ordinal));
        var rows = summary.Where(line => line.StartsWith("| ", StringComparison.Ordinal)).Skip(1)
            .Select(line => line.Split('|').Select(cell => cell.Trim()).ToArray())
            .ToDictionary(cells => cells[1], cells => cells[^2]);
        Assert.Equal(5, rows.Count);
        Assert.Equal("", rows["tcp echo, 100 client(s)"]);
        Assert.Equal("0.50", rows["ssl echo, 100 client(s)"]);
        Assert.Equal("1.25", rows["tcp echo via client, 100 client(s)"]);
        Assert.Equal("", rows["tcp latency, 1 client"]);
    }

    [Fact]
    public async Task Reads_a_second_results_file_and_gives_kestrel_and_nginx_series_with_their_ratios()
    {
        var sample = Path.Combine(AppContext.BaseDirectory, "sample-results.jsonl");
        var web = Path.Combine(AppContext.BaseDirectory, "sample-results-web.jsonl");
        await using (var tool = ProgramProcess.Start("netserver-benchreport", TimeSpan.FromSeconds(30), sample, web, _output))
            Assert.Equal(0, await tool.WaitForExitAsync());

        // A plot per unit: requests (wrk against the http servers) and messages (ws echo).
        foreach (var plot in new[] { "servers-req-s.png", "servers-msg-s.png" })
            Assert.Equal(s_pngSignature, (await File.ReadAllBytesAsync(Path.Combine(_output, plot)))[..8]);

        var summary = await File.ReadAllLinesAsync(Path.Combine(_output, "summary.md"));
        Assert.Contains(summary, line => line.Contains("(servers-req-s.png)", StringComparison.Ordinal));
        var section = summary.SkipWhile(line => line != "## Against Kestrel and nginx").Skip(1)
            .SkipWhile(line => !line.StartsWith("| ", StringComparison.Ordinal))
            .TakeWhile(line => line.StartsWith('|')).ToArray();
        Assert.Equal("| scenario | unit | Kestrel | nginx | NetServer (ours) | nginx / Kestrel | NetServer (ours) / Kestrel | NetServer (ours) / nginx |", section[0]);
        var rows = section.Skip(2).Select(line => line.Split('|').Select(cell => cell.Trim()).ToArray()).ToDictionary(cells => cells[1]);
        Assert.Equal(2, rows.Count);
        Assert.Equal(["req/s", "40000", "50000", "80000", "1.25", "2.00", "1.60"], rows["http get (wrk), 100 connection(s)"][2..^1]);
        // No nginx for ws: its cells stay empty, and the ratio to Kestrel is still there.
        Assert.Equal(["msg/s", "1000000", "", "3000000", "", "3.00", ""], rows["ws echo (own process), 100 client(s)"][2..^1]);

        // The second file's runs are in the table of every run too, with Kestrel's as their reference.
        var all = summary.Where(line => line.StartsWith("| http get (wrk), 100 connection(s), ", StringComparison.Ordinal)).ToArray();
        Assert.Equal(3, all.Length);
        Assert.Contains(all, line => line.StartsWith("| http get (wrk), 100 connection(s), ours |", StringComparison.Ordinal) && line.EndsWith("| 40000 | 2.00 |", StringComparison.Ordinal));
    }

    public void Dispose()
    {
        if (Directory.Exists(_output))
            Directory.Delete(_output, recursive: true);
    }
}
