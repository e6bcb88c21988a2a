using System;
using System.Diagnostics;
using System.Threading.Tasks;
using Xunit;

namespace NetServer.Tests.Infrastructure;

/// <summary>Runs curl to its end (bounded) and returns what it printed.</summary>
internal static class Curl
{
    public static async Task<(int ExitCode, string Output, string Errors)> RunAsync(params string[] args)
    {
        var info = new ProcessStartInfo("curl") { UseShellExecute = false, RedirectStandardOutput = true, RedirectStandardError = true };
        foreach (var arg in args)
            info.ArgumentList.Add(arg);
        using var curl = Process.Start(info)!;
        var output = curl.StandardOutput.ReadToEndAsync();
        var errors = curl.StandardError.ReadToEndAsync();
        try
        {
            await curl.WaitForExitAsync().WaitAsync(Wait.Default);
        }
        catch (TimeoutException)
        {
            curl.Kill();
            Assert.Fail($"curl {string.Join(' ', args)} did not finish within {Wait.Default.TotalSeconds} s.");
        }

        return (curl.ExitCode, await output, await errors);
    }
}
