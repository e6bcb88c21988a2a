using System;
using System.ComponentModel;
using System.Diagnostics;
using Xunit;

namespace NetServer.Tests.Infrastructure;

/// <summary>A fact that runs curl as an independent HTTP client (build/install-tools.sh installs it); skipped with the reason where curl cannot be run.</summary>
public sealed class CurlFactAttribute : FactAttribute
{
    private static readonly Lazy<string?> s_failure = new(Probe);

    public CurlFactAttribute()
    {
        if (s_failure.Value is { } failure)
            Skip = failure;
    }

    private static string? Probe()
    {
        try
        {
            using var curl = Process.Start(new ProcessStartInfo("curl", ["--version"]) { UseShellExecute = false, RedirectStandardOutput = true })!;

            // Runs while xunit discovers tests (a Fact attribute's constructor): a bounded blocking wait is all it can do.
            if (!curl.WaitForExit(TimeSpan.FromSeconds(10)))
            {
                curl.Kill();
                return "curl --version did not finish within 10 s.";
            }

            return curl.ExitCode == 0 ? null : $"curl --version exited with {curl.ExitCode}.";
        }
        catch (Win32Exception e)
        {
            return $"curl cannot be started (build/install-tools.sh installs it): {e.Message}";
        }
    }
}
