using System;
using System.IO;
using System.Linq;
using NetServer.BenchReport;

// netserver-benchreport RESULTS.jsonl OUTDIR [NOTE]: plots (PNG) and summary.md from bench.sh's results.
if (args.Length < 2)
{
    Console.Error.WriteLine("usage: netserver-benchreport RESULTS.jsonl OUTDIR [NOTE (a line for the summary's header)]");
    return 2;
}
var results = BenchResult.ReadAll(args[0]);
if (results.Count == 0)
{
    Console.Error.WriteLine($"{args[0]}: no results");
    return 1;
}
Directory.CreateDirectory(args[1]);
var files = Plots.WriteAll(results, args[1]);
var summary = Summary.Write(results, files, args[1], args.Length > 2 ? args[2] : null);
Console.WriteLine($"report: {string.Join(", ", files.Select(Path.GetFileName))}, {Path.GetFileName(summary)} in {args[1]}");
return 0;
