using System;
using System.ComponentModel;
using System.Diagnostics;

namespace NetServer.Tests.Infrastructure;

/// <summary>Whether a program outside .NET can be run, for the facts that drive one: null when it can, else why not.</summary>
internal static class ToolProbe
{
    /// <summary>Runs <paramref name="fileName"/> with <paramref name="args"/> (a version query) and waits at most <paramref name="timeout"/>.</summary>
    public static string? Failure(string fileName, string[] args, TimeSpan timeout, string installedBy)
    {
        var command = $"{fileName} {string.Join(' ', args)}";
        try
        {
            using var process = Process.Start(new ProcessStartInfo(fileName, args) { UseShellExecute = false, RedirectStandardOutput = true, RedirectStandardError = true })!;

            // Runs while xunit discovers tests (a Fact attribute's constructor): a bounded blocking wait is all it can do.
            if (!process.WaitForExit(timeout))
            {
                process.Kill();
                return $"{command} did not finish within {timeout.TotalSeconds:0} s.";
            }

            return process.ExitCode == 0 ? null : $"{command} exited with {process.ExitCode}.";
        }
        catch (Win32Exception e)
        {
            return $"{fileName} cannot be started ({installedBy} installs it): {e.Message}";
        }
    }
}
