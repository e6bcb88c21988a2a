namespace NetServer.SecureUdp;

internal sealed partial class SecureUdpLimits
{
    /// <summary>The system's millisecond tick: cheaper to read than a Stopwatch timestamp, and fine enough for limits of 100 ms and more.</summary>
    private static long SystemClock() => Environment.TickCount64;
}
