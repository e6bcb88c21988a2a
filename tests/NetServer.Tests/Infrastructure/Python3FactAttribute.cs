using System;
using System.ComponentModel;
using System.Diagnostics;
using Xunit;

namespace NetServer.Tests.Infrastructure;

/// <summary>A fact that runs python3 as an independent client; skipped with the reason where python3 (with its socket module) cannot be run.</summary>
public sealed class Python3FactAttribute : FactAttribute
{
    private static readonly Lazy<string?> s_failure = new(Probe);

    public Python3FactAttribute()
    {
        if (s_failure.Value is { } failure)
            Skip = failure;
    }

    private static string? Probe()
    {
        try
        {
            using var python = Process.Start(new ProcessStartInfo("python3", ["-c", "import socket"]) { UseShellExecute = false })!;

            // Runs while xunit discovers tests (a Fact attribute's constructor): a bounded blocking wait is all it can do.
            if (!python.WaitForExit(TimeSpan.FromSeconds(10)))
            {
                python.Kill();
                return "python3 -c \"import socket\" did not finish within 10 s.";
            }

            return python.ExitCode == 0 ? null : $"python3 -c \"import socket\" exited with {python.ExitCode}.";
        }
        catch (Win32Exception e)
        {
            return $"python3 cannot be started: {e.Message}";
        }
    }
}
