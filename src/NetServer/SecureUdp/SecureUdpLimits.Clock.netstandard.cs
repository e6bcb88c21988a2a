using System.Diagnostics;

namespace NetServer.SecureUdp;

internal sealed partial class SecureUdpLimits
{
    private static readonly double s_millisecondsPerTick = 1000.0 / Stopwatch.Frequency;

    /// <summary>Milliseconds from the Stopwatch timestamp (netstandard has no 64-bit tick count).</summary>
    private static long SystemClock() => (long)(Stopwatch.GetTimestamp() * s_millisecondsPerTick);
}
