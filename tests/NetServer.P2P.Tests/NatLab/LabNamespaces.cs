using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Globalization;
using System.IO;
using System.Threading;
using System.Threading.Tasks;

namespace NetServer.P2P.Tests.Nat;

/// <summary>
/// The names of the lab's network namespaces, and the sweep of those a dead test run left behind.
/// A name is <c>natlab-PID-START-N-ROLE</c>: the test process's id and start time (clock ticks
/// after boot, from /proc/PID/stat), so a sweep tells a live run's namespaces (leave them) from a
/// dead run's (delete them) even when the pid has been reused; N counts the labs of one run.
/// Every link and rule of a lab lives inside its namespaces: deleting them is the whole cleanup.
/// </summary>
internal static class LabNamespaces
{
    public const string Prefix = "natlab-";

    private static readonly string s_owner = $"{Environment.ProcessId}-{StartTicks(Environment.ProcessId)}";
    private static readonly Lazy<Task<IReadOnlyList<string>>> s_sweep = new(SweepStaleAsync);
    private static int s_labs;

    /// <summary>A name no other lab of any run has: <c>natlab-PID-START-N</c>.</summary>
    public static string NewLabName() => $"{Prefix}{s_owner}-{Interlocked.Increment(ref s_labs)}";

    /// <summary>The name the support probe uses (once per run).</summary>
    public static string ProbeName => $"{Prefix}{s_owner}-probe";

    /// <summary>Sweeps the dead runs' namespaces the first time a lab is made in this process.</summary>
    public static Task<IReadOnlyList<string>> SweepStaleOnceAsync() => s_sweep.Value;

    /// <summary>Deletes every lab namespace whose test process is gone (killing what still runs in it); the names deleted.</summary>
    public static async Task<IReadOnlyList<string>> SweepStaleAsync()
    {
        var deleted = new List<string>();
        foreach (var name in Parse(await LabShell.RunAsync("ip", "netns", "list")))
        {
            if (name.StartsWith(Prefix, StringComparison.Ordinal) && !IsOwnerAlive(name))
            {
                await DeleteAsync(name);
                deleted.Add(name);
            }
        }

        return deleted;
    }

    /// <summary>The network namespaces that exist now (<c>ip netns list</c>).</summary>
    public static async Task<IReadOnlyList<string>> ListAsync() => Parse(await LabShell.RunAsync("ip", "netns", "list"));

    /// <summary>Kills what runs inside <paramref name="name"/> and deletes it; its links (and their veth peers elsewhere) go with it.</summary>
    public static async Task DeleteAsync(string name)
    {
        var pids = await LabShell.TryRunAsync(null, "ip", "netns", "pids", name);
        KillAll(pids.Output);
        var result = await LabShell.TryRunAsync(null, "ip", "netns", "del", name);
        if (!result.Succeeded && !IsMissing(result))
            throw new NatLabException($"`ip netns del {name}` exited with {result.ExitCode}: {result.Error.Trim()}");
    }

    /// <summary>As <see cref="DeleteAsync"/>, blocking: for the process-exit teardown and the support probe.</summary>
    public static void DeleteBlocking(string name)
    {
        KillAll(LabShell.TryRunBlocking("ip", "netns", "pids", name).Output);
        LabShell.TryRunBlocking("ip", "netns", "del", name);
    }

    /// <summary>Whether the test process named in a lab namespace's name still runs (same pid, same start time).</summary>
    public static bool IsOwnerAlive(string name)
    {
        var parts = name[Prefix.Length..].Split('-');
        return parts.Length >= 2
            && int.TryParse(parts[0], NumberStyles.None, CultureInfo.InvariantCulture, out var pid)
            && StartTicks(pid) is { } start
            && start == parts[1];
    }

    /// <summary>Field 22 of /proc/PID/stat (start time in clock ticks after boot); null when there is no such process.</summary>
    public static string? StartTicks(int pid)
    {
        try
        {
            var stat = File.ReadAllText($"/proc/{pid}/stat");

            // The command name (field 2) is in parentheses and may hold spaces: count from the last ')'.
            var fields = stat[(stat.LastIndexOf(')') + 2)..].Split(' ');
            return fields[19];
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException or IndexOutOfRangeException)
        {
            return null;
        }
    }

    private static List<string> Parse(string list)
    {
        // Lines are "NAME" or "NAME (id: N)".
        var names = new List<string>();
        foreach (var line in list.Split('\n', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries))
            names.Add(line.Split(' ')[0]);
        return names;
    }

    private static void KillAll(string pids)
    {
        foreach (var word in pids.Split('\n', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries))
        {
            if (!int.TryParse(word, NumberStyles.None, CultureInfo.InvariantCulture, out var pid))
                continue;
            try
            {
                using var process = Process.GetProcessById(pid);
                process.Kill(entireProcessTree: true);
            }
            catch (Exception e) when (e is ArgumentException or InvalidOperationException)
            {
                // Already gone.
            }
        }
    }

    private static bool IsMissing(CommandResult result) => result.Error.Contains("No such file", StringComparison.Ordinal);
}
