using System;
using System.Globalization;
using System.IO;

namespace NetServer.Benchmark;

/// <summary>
/// The CPU time (user + system, all threads) another process has used so far, from
/// /proc/PID/stat: how a client measures what the server it drives costs per message, over the
/// client's own measured window. Linux only; null where there is no /proc or the process is gone.
/// </summary>
internal static class ProcessCpu
{
    /// <summary>
    /// /proc counts in clock ticks of USER_HZ, which the kernel fixes at 100 for user space on
    /// every architecture (what sysconf(_SC_CLK_TCK) answers): 10 ms steps, 1 % of a 1-s window.
    /// </summary>
    private const double TicksPerSecond = 100;

    public static double? Seconds(int pid)
    {
        string stat;
        try
        {
            stat = File.ReadAllText($"/proc/{pid}/stat");
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            return null;
        }

        // The command name (field 2) is in parentheses and may hold spaces: count fields after its
        // closing one. utime and stime are fields 14 and 15, so the 12th and 13th after it.
        var fields = stat[(stat.LastIndexOf(')') + 2)..].Split(' ');
        if (fields.Length < 13
            || !long.TryParse(fields[11], NumberStyles.None, CultureInfo.InvariantCulture, out var user)
            || !long.TryParse(fields[12], NumberStyles.None, CultureInfo.InvariantCulture, out var system))
            return null;
        return (user + system) / TicksPerSecond;
    }
}
