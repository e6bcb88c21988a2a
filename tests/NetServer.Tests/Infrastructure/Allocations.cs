using System;
using System.Runtime.CompilerServices;

namespace NetServer.Tests.Infrastructure;

/// <summary>
/// Measures what a repeatable piece of code allocates on the current thread, for the tests that
/// assert 0 bytes (or no more than a known figure).
/// </summary>
internal static class Allocations
{
    /// <summary>
    /// Runs <paramref name="round"/> <paramref name="warmUp"/> times, then measures
    /// <see cref="GC.GetAllocatedBytesForCurrentThread"/> around <paramref name="roundsPerWindow"/>
    /// calls, up to <paramref name="windows"/> times (stopping at a window of 0), and returns the
    /// fewest bytes of any window. An allocation per round shows in every window; the runtime's own
    /// one-off work on this thread (a method compiled again by tiered JIT, a lazy static set up, seen
    /// as a few KB once in a CI run) lands in one window at most, so it does not fail the test.
    /// This method is not optimized: an optimized loop here (on-stack replacement) would inline the
    /// round through the delegate and could drop an allocation the round's own code makes (an unused
    /// <c>new byte[1]</c> in the round went unseen that way).
    /// </summary>
    [MethodImpl(MethodImplOptions.NoInlining | MethodImplOptions.NoOptimization)]
    public static long Least(Action round, int roundsPerWindow, int windows = 3, int warmUp = 100)
    {
        ArgumentNullException.ThrowIfNull(round);
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(roundsPerWindow);
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(windows);
        ArgumentOutOfRangeException.ThrowIfNegative(warmUp);

        for (var i = 0; i < warmUp; i++)
            round();

        var least = long.MaxValue;
        for (var window = 0; window < windows && least != 0; window++)
        {
            var before = GC.GetAllocatedBytesForCurrentThread();
            for (var i = 0; i < roundsPerWindow; i++)
                round();
            least = Math.Min(least, GC.GetAllocatedBytesForCurrentThread() - before);
        }

        return least;
    }
}
