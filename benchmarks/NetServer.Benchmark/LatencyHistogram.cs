using System;
using System.Diagnostics;
using System.Numerics;
using System.Threading;

namespace NetServer.Benchmark;

/// <summary>
/// Round-trip times in nanoseconds, counted in a fixed array of log-linear buckets (HdrHistogram's
/// layout): below 256 ns every value has a bucket of its own; above, every power of two is split
/// into 128 equal buckets, so a bucket is at most 1/128 (0.8 %) as wide as its values are large,
/// and narrower than 1 µs up to 128 µs. Recording is an index computation and an increment: no
/// allocation, no lock. One writer (a client's receive hook); others read it after the run, or
/// roughly (the progress line) during it.
/// </summary>
internal sealed class LatencyHistogram
{
    private const int SubBucketBits = 7;
    private const int SubBuckets = 1 << SubBucketBits;

    /// <summary>The highest bit a value may have: 2^41 ns is 36 minutes; a longer time counts as the longest that fits.</summary>
    private const int TopBit = 40;

    public const long HighestTrackable = (2L << TopBit) - 1;

    /// <summary>Bucket 0..255 for values 0..255, then 128 buckets per power of two up to <see cref="TopBit"/>.</summary>
    private const int BucketCount = (TopBit - SubBucketBits + 2) * SubBuckets;

    private static readonly double s_nanosecondsPerTick = 1e9 / Stopwatch.Frequency;

    private readonly long[] _counts = new long[BucketCount];
    private long _count;
    private long _sum;
    private long _min = long.MaxValue;
    private long _max;

    /// <summary>Values recorded; safe to read while the writer records.</summary>
    public long Count => Volatile.Read(ref _count);

    public long Max => _max;

    public long Min => _count > 0 ? _min : 0;

    public double Mean => _count > 0 ? _sum / (double)_count : 0;

    /// <summary>Records a time measured in <see cref="Stopwatch"/> ticks.</summary>
    public void RecordTicks(long ticks) => Record((long)(ticks * s_nanosecondsPerTick));

    public void Record(long nanoseconds)
    {
        var value = Math.Clamp(nanoseconds, 0, HighestTrackable);
        _counts[IndexOf(value)]++;
        _sum += value;
        if (value < _min)
            _min = value;
        if (value > _max)
            _max = value;
        Volatile.Write(ref _count, _count + 1);
    }

    /// <summary>Adds the values of <paramref name="other"/> (read once its writer is done).</summary>
    public void Add(LatencyHistogram other)
    {
        for (var i = 0; i < BucketCount; i++)
            _counts[i] += other._counts[i];
        _count += other._count;
        _sum += other._sum;
        _min = Math.Min(_min, other._min);
        _max = Math.Max(_max, other._max);
    }

    /// <summary>
    /// The smallest value that at least <paramref name="quantile"/> of the values do not exceed, as
    /// the highest value of its bucket (at most the maximum recorded); 0 when nothing was recorded.
    /// </summary>
    public long ValueAtQuantile(double quantile)
    {
        if (_count == 0)
            return 0;
        var rank = Math.Max(1, (long)Math.Ceiling(Math.Clamp(quantile, 0, 1) * _count));
        var seen = 0L;
        for (var i = 0; i < BucketCount; i++)
        {
            seen += _counts[i];
            if (seen >= rank)
                return Math.Min(HighestIn(i), _max);
        }

        return _max;
    }

    public static int IndexOf(long value)
    {
        if (value < 2 * SubBuckets)
            return (int)value;

        // The shift that brings the value into [128, 256): its bucket is that many halvings wide.
        var shift = 63 - BitOperations.LeadingZeroCount((ulong)value) - SubBucketBits;
        return (shift * SubBuckets) + (int)(value >> shift);
    }

    /// <summary>The lowest value counted in bucket <paramref name="index"/>.</summary>
    public static long LowestIn(int index)
    {
        if (index < 2 * SubBuckets)
            return index;
        var shift = (index / SubBuckets) - 1;
        return (long)((index % SubBuckets) + SubBuckets) << shift;
    }

    /// <summary>The highest value counted in bucket <paramref name="index"/>.</summary>
    public static long HighestIn(int index) => index + 1 < BucketCount ? LowestIn(index + 1) - 1 : HighestTrackable;
}
