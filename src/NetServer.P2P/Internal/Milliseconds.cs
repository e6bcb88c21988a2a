using System.Diagnostics;

namespace NetServer.P2P.Internal;

/// <summary>A cheap monotonic millisecond clock for the token buckets, read once per routed message.</summary>
internal static class Milliseconds
{
#if NET
    // A coarse monotonic clock (CLOCK_MONOTONIC_COARSE on Linux): a few ns, where a Stopwatch read costs tens.
    public static long Now => System.Environment.TickCount64;
#else
    public static long Now => Stopwatch.GetTimestamp() / (Stopwatch.Frequency / 1000);
#endif

    /// <summary>Milliseconds between two <see cref="Stopwatch"/> timestamps.</summary>
    public static double Between(long start, long end) => (end - start) * 1000.0 / Stopwatch.Frequency;
}
