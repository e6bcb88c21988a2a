using System.Globalization;

namespace NetServer;

/// <summary>
/// Formats the figures of a benchmark report: byte counts in binary units and durations from
/// nanoseconds to hours. Source-compatible with NetCoreServer's <c>Utilities</c>, so its benchmark
/// programs print the same text.
/// </summary>
public static class Utilities
{
    private const ulong NanosecondsPerMicrosecond = 1_000;
    private const ulong NanosecondsPerMillisecond = 1_000_000;
    private const ulong NanosecondsPerSecond = 1_000_000_000;
    private const ulong NanosecondsPerMinute = 60 * NanosecondsPerSecond;
    private const ulong NanosecondsPerHour = 60 * NanosecondsPerMinute;

    // Indexed by the power of 1024: 1024^0 is bytes, 1024^4 TiB.
    private static readonly string[] s_dataUnits = ["bytes", "KiB", "MiB", "GiB", "TiB"];

    /// <summary>
    /// Formats a byte count in the largest binary unit it reaches (bytes, KiB, MiB, GiB or TiB),
    /// for example "512 bytes", "1.512 KiB", "3.200 GiB".
    /// </summary>
    /// <remarks>
    /// The digits after the point are the remainder counted in the next smaller unit, written with
    /// at least three digits; they are not a decimal fraction. 1,536 bytes (1 KiB and 512 bytes) is
    /// "1.512 KiB" and 1,048,575 bytes "1023.1023 KiB". This is NetCoreServer's format, kept so
    /// reports stay comparable. A fraction of a byte is dropped, NaN counts as 0, and a negative
    /// count is written as its magnitude after a minus sign (NetCoreServer garbled negative
    /// remainders).
    /// </remarks>
    /// <param name="b">The number of bytes.</param>
    /// <returns>The count with its unit.</returns>
    public static string GenerateDataSize(double b)
    {
        var bytes = Truncate(b);
        var sign = bytes < 0 ? "-" : string.Empty;
        var magnitude = Magnitude(bytes);

        for (var power = s_dataUnits.Length - 1; power > 0; power--)
        {
            var shift = 10 * power;
            var unit = 1UL << shift;
            if (magnitude >= unit)
            {
                var remainder = (magnitude & (unit - 1)) >> (shift - 10);
                return Format("{0}{1}.{2:D3} {3}", sign, magnitude >> shift, remainder, s_dataUnits[power]);
            }
        }

        return Format("{0}{1} bytes", sign, magnitude);
    }

    /// <summary>
    /// Formats a duration given in milliseconds in the largest unit it reaches: "750 ns",
    /// "12.500 mcs" (microseconds), "1.500 ms", "2.250 s", "1:05.000 m" (minutes:seconds) or
    /// "26:01:02.003 h" (hours:minutes:seconds).
    /// </summary>
    /// <remarks>
    /// The digits after the point are the next smaller unit (milliseconds of a second,
    /// microseconds of a millisecond, ...) written with three digits. A fraction of a nanosecond is
    /// dropped, NaN counts as 0, and a negative duration is written as its magnitude after a minus
    /// sign.
    /// </remarks>
    /// <param name="ms">The duration in milliseconds.</param>
    /// <returns>The duration with its unit.</returns>
    public static string GenerateTimePeriod(double ms)
    {
        // Multiplied in two steps, as NetCoreServer did, so values on a rounding edge truncate alike.
        var nanoseconds = Truncate(ms * 1000.0 * 1000.0);
        var sign = nanoseconds < 0 ? "-" : string.Empty;
        var ns = Magnitude(nanoseconds);

        var milliseconds = ns / NanosecondsPerMillisecond % 1000;
        var seconds = ns / NanosecondsPerSecond % 60;
        if (ns >= NanosecondsPerHour)
            return Format("{0}{1}:{2:D2}:{3:D2}.{4:D3} h", sign, ns / NanosecondsPerHour, ns / NanosecondsPerMinute % 60, seconds, milliseconds);
        if (ns >= NanosecondsPerMinute)
            return Format("{0}{1}:{2:D2}.{3:D3} m", sign, ns / NanosecondsPerMinute, seconds, milliseconds);
        if (ns >= NanosecondsPerSecond)
            return Format("{0}{1}.{2:D3} s", sign, ns / NanosecondsPerSecond, milliseconds);
        if (ns >= NanosecondsPerMillisecond)
            return Format("{0}{1}.{2:D3} ms", sign, ns / NanosecondsPerMillisecond, ns / NanosecondsPerMicrosecond % 1000);
        if (ns >= NanosecondsPerMicrosecond)
            return Format("{0}{1}.{2:D3} mcs", sign, ns / NanosecondsPerMicrosecond, ns % NanosecondsPerMicrosecond);
        return Format("{0}{1} ns", sign, ns);
    }

    /// <summary>Drops the fraction; NaN becomes 0 and values beyond <see cref="long"/> saturate (the plain cast differs between runtimes there).</summary>
    private static long Truncate(double value)
    {
        if (double.IsNaN(value))
            return 0;
        if (value >= long.MaxValue)
            return long.MaxValue;
        if (value <= long.MinValue)
            return long.MinValue;
        return (long)value;
    }

    /// <summary>The absolute value, also of <see cref="long.MinValue"/>.</summary>
    private static ulong Magnitude(long value) => value < 0 ? (ulong)(-(value + 1)) + 1 : (ulong)value;

    private static string Format(string format, params object[] args) => string.Format(CultureInfo.InvariantCulture, format, args);
}
