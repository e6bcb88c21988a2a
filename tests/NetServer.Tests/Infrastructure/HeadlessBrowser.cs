using System;
using System.ComponentModel;
using System.Diagnostics;
using System.Globalization;
using System.IO;
using System.Linq;
using System.Threading.Tasks;
using Xunit;

namespace NetServer.Tests.Infrastructure;

/// <summary>
/// Headless Chromium as a test's browser: loads a page, runs its scripts and returns the DOM they
/// built (<c>--dump-dom</c>). Debian's package (build/install-tools.sh installs it), or the
/// executable named by the CHROMIUM environment variable.
/// </summary>
internal static class HeadlessBrowser
{
    private static readonly string[] s_names = ["chromium", "chromium-browser", "google-chrome"];
    private static readonly Lazy<(string? Path, string? Failure)> s_probe = new(Probe);

    /// <summary>Why no browser can be run here, or null when one can.</summary>
    public static string? Failure => s_probe.Value.Failure;

    /// <summary>
    /// The DOM of <paramref name="page"/> once its scripts have run, as HTML. The page runs for
    /// <paramref name="scriptTime"/> of Chromium's virtual time, which stands still while a load is
    /// pending and jumps ahead while the page only waits on timers, so a page that fetches and then
    /// renders (Swagger UI) is dumped rendered, usually in a second or two of real time. Without it,
    /// --dump-dom races the page's scripts (Swagger UI: every operation in one run, none in the
    /// next). The process is killed
    /// if it has not finished within <paramref name="timeout"/> of real time.
    /// </summary>
    public static async Task<string> DumpDomAsync(Uri page, TimeSpan scriptTime, TimeSpan timeout)
    {
        var executable = Executable;
        var profile = NewProfile();
        var info = new ProcessStartInfo(executable)
        {
            UseShellExecute = false,
            RedirectStandardOutput = true,
            RedirectStandardError = true,
        };

        foreach (var argument in Arguments(profile))
            info.ArgumentList.Add(argument);
        info.ArgumentList.Add("--virtual-time-budget=" + ((long)scriptTime.TotalMilliseconds).ToString(CultureInfo.InvariantCulture));
        info.ArgumentList.Add("--dump-dom");
        info.ArgumentList.Add(page.AbsoluteUri);

        using var process = Process.Start(info) ?? throw new InvalidOperationException($"{executable} did not start.");
        try
        {
            var output = process.StandardOutput.ReadToEndAsync();
            var errors = process.StandardError.ReadToEndAsync();
            try
            {
                await process.WaitForExitAsync().WaitAsync(timeout);
            }
            catch (TimeoutException)
            {
                process.Kill(entireProcessTree: true);
                Assert.Fail($"{executable} did not finish loading {page} within {timeout.TotalSeconds} s; killed.");
            }

            var dom = await output.WaitAsync(timeout);
            var log = await errors.WaitAsync(timeout);
            Assert.True(process.ExitCode == 0, $"{executable} exited with {process.ExitCode} loading {page}:{Environment.NewLine}{Tail(log)}");
            return dom;
        }
        finally
        {
            if (!process.HasExited)
                process.Kill(entireProcessTree: true);
            DeleteProfile(profile);
        }
    }

    /// <summary>The browser's executable; throws with <see cref="Failure"/> when there is none.</summary>
    internal static string Executable => s_probe.Value.Path ?? throw new InvalidOperationException(Failure);

    /// <summary>
    /// The switches every run gets. --headless is the new headless mode (the old one is gone from
    /// current Chromium). --no-sandbox: the sandbox refuses to start as root (CI runs as root); the
    /// pages are our own. A profile of its own, so runs side by side do not share a profile lock or a cache.
    /// </summary>
    internal static string[] Arguments(string profile) =>
    [
        "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
        "--no-default-browser-check", "--disable-extensions", "--disable-background-networking",
        "--user-data-dir=" + profile,
    ];

    /// <summary>A fresh profile folder in the temp folder; <see cref="DeleteProfile"/> removes it.</summary>
    internal static string NewProfile() => Path.Combine(Path.GetTempPath(), "netserver-chromium-" + Guid.NewGuid().ToString("N")[..12]);

    private static (string? Path, string? Failure) Probe()
    {
        var named = Environment.GetEnvironmentVariable("CHROMIUM");
        var path = named is { Length: > 0 } ? named : s_names.Select(FindOnPath).FirstOrDefault(found => found is not null);
        if (path is null)
            return (null, $"No Chromium: none of {string.Join(", ", s_names)} is on PATH and CHROMIUM is not set (build/install-tools.sh installs Debian's chromium).");

        try
        {
            using var process = Process.Start(new ProcessStartInfo(path, ["--version"]) { UseShellExecute = false, RedirectStandardOutput = true, RedirectStandardError = true })!;

            // Runs while xunit discovers tests (a Fact attribute's constructor): a bounded blocking wait is all it can do.
            if (!process.WaitForExit(TimeSpan.FromSeconds(10)))
            {
                process.Kill(entireProcessTree: true);
                return (null, $"{path} --version did not finish within 10 s.");
            }

            return process.ExitCode == 0 ? (path, null) : (null, $"{path} --version exited with {process.ExitCode}.");
        }
        catch (Win32Exception e)
        {
            return (null, $"{path} cannot be started: {e.Message}");
        }
    }

    private static string? FindOnPath(string name) =>
        (Environment.GetEnvironmentVariable("PATH") ?? string.Empty)
            .Split(Path.PathSeparator, StringSplitOptions.RemoveEmptyEntries)
            .Select(folder => Path.Combine(folder, name))
            .FirstOrDefault(File.Exists);

    /// <summary>The last lines of Chromium's log: the reason is at the end, after its D-Bus complaints (no session bus in CI).</summary>
    internal static string Tail(string log) =>
        string.Join(Environment.NewLine, log.Split('\n').TakeLast(20));

    internal static void DeleteProfile(string profile)
    {
        try
        {
            if (Directory.Exists(profile))
                Directory.Delete(profile, recursive: true);
        }
        catch (IOException)
        {
            // A helper process still closing a file in it: a leftover temp folder, not a test failure.
        }
    }
}
