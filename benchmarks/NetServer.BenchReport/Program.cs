using System;
using System.IO;
using System.Linq;
using NetServer.BenchReport;

// netserver-benchreport RESULTS.jsonl [MORE.jsonl...] OUTDIR [NOTE]: plots (PNG) and summary.md from
// bench.sh's results (and bench-http.sh's, bench-ws.sh's). The leading arguments that are files are
// the results; the first that is not is OUTDIR.
var inputs = args.TakeWhile(File.Exists).ToArray();
if (inputs.Length == 0 || args.Length < inputs.Length + 1)
{
    Console.Error.WriteLine("usage: netserver-benchreport RESULTS.jsonl [MORE.jsonl...] OUTDIR [NOTE (a line for the summary's header)]");
    return 2;
}
var output = args[inputs.Length];
var results = BenchResult.ReadAll(inputs);
if (results.Count == 0)
{
    Console.Error.WriteLine($"{string.Join(", ", inputs)}: no results");
    return 1;
}
Directory.CreateDirectory(output);
var files = Plots.WriteAll(results, output);
var summary = Summary.Write(results, files, inputs, output, args.Length > inputs.Length + 1 ? args[inputs.Length + 1] : null);
Console.WriteLine($"report: {string.Join(", ", files.Select(Path.GetFileName))}, {Path.GetFileName(summary)} in {output}");
return 0;
