using System;
using System.ComponentModel;
using System.Diagnostics;
using Xunit;

namespace NetServer.Tests.WebSockets;

/// <summary>A fact that runs python3's zlib module as an independent deflate implementation; skipped with the reason where it cannot be run.</summary>
public sealed class PythonZlibFactAttribute : FactAttribute
{
    private static readonly Lazy<string?> s_failure = new(Probe);

    public PythonZlibFactAttribute()
    {
        if (s_failure.Value is { } failure)
            Skip = failure;
    }

    private static string? Probe()
    {
        try
        {
            using var python = Process.Start(new ProcessStartInfo("python3", ["-c", "import zlib"]) { UseShellExecute = false })!;

            // Runs while xunit discovers tests (a Fact attribute's constructor): a bounded blocking wait is all it can do.
            if (!python.WaitForExit(TimeSpan.FromSeconds(10)))
            {
                python.Kill();
                return "python3 -c \"import zlib\" did not finish within 10 s.";
            }

            return python.ExitCode == 0 ? null : $"python3 -c \"import zlib\" exited with {python.ExitCode}: no zlib module to compare with.";
        }
        catch (Win32Exception e)
        {
            return $"python3 cannot be started, so there is no independent zlib to compare with: {e.Message}";
        }
    }
}
