using Xunit;

namespace NetServer.Tests.Compatibility;

/// <summary>
/// The report formatting NetCoreServer's benchmark programs print through <c>Utilities</c>. Each
/// expected string is worked out by hand from the input (noted beside it), not taken from a run.
/// </summary>
public class UtilitiesTests
{
    [Theory]
    [InlineData(0, "0 bytes")]
    [InlineData(1023, "1023 bytes")]
    [InlineData(1023.99, "1023 bytes")] // the fraction of a byte is dropped
    [InlineData(1024, "1.000 KiB")]
    [InlineData(1025, "1.001 KiB")] // 1 KiB + 1 byte
    [InlineData(1034, "1.010 KiB")] // 1 KiB + 10 bytes, padded to three digits
    [InlineData(1536, "1.512 KiB")] // 1 KiB + 512 bytes: the remainder in bytes, not a decimal fraction
    [InlineData(1234.9, "1.210 KiB")] // 1234 = 1024 + 210
    [InlineData(1_048_575, "1023.1023 KiB")] // 1023 KiB + 1023 bytes: four digits when the remainder needs them
    [InlineData(1_048_576, "1.000 MiB")]
    [InlineData(10_490_887, "10.005 MiB")] // 10 MiB (10,485,760) + 5 KiB (5,120) + 7 bytes
    [InlineData(3_430_940_672, "3.200 GiB")] // 3 GiB (3,221,225,472) + 200 MiB (209,715,200)
    [InlineData(2_252_710_346_752, "2.050 TiB")] // 2 TiB (2,199,023,255,552) + 50 GiB (53,687,091,200)
    [InlineData(1_125_899_906_842_624, "1024.000 TiB")] // 2^50: TiB is the largest unit
    [InlineData(-5, "-5 bytes")]
    [InlineData(-1536, "-1.512 KiB")] // NetCoreServer printed "-1.00-512 KiB"
    public void GenerateDataSize_writes_the_largest_unit_and_the_remainder_in_the_next_smaller_one(double bytes, string expected) =>
        Assert.Equal(expected, Utilities.GenerateDataSize(bytes));

    [Fact]
    public void GenerateDataSize_takes_a_long_count_as_the_benchmarks_pass_it()
    {
        long total = 5 * 1024 * 1024 + 3;
        Assert.Equal("5.000 MiB", Utilities.GenerateDataSize(total));
    }

    [Theory]
    [InlineData(double.NaN, "0 bytes")]
    [InlineData(double.PositiveInfinity, "8388607.1023 TiB")] // long.MaxValue = 2^63 - 1 = 8,388,607 TiB + (2^40 - 1) bytes = 1023 GiB and more
    [InlineData(double.NegativeInfinity, "-8388608.000 TiB")] // long.MinValue = -2^63 = -8,388,608 TiB exactly
    public void GenerateDataSize_saturates_values_beyond_a_long(double bytes, string expected) =>
        Assert.Equal(expected, Utilities.GenerateDataSize(bytes));

    [Theory]
    [InlineData(0, "0 ns")]
    [InlineData(0.0009765625, "976 ns")] // 2^-10 ms = 976.5625 ns, fraction dropped
    [InlineData(0.001953125, "1.953 mcs")] // 2^-9 ms = 1953.125 ns
    [InlineData(0.0625, "62.500 mcs")] // 62,500 ns
    [InlineData(1, "1.000 ms")]
    [InlineData(1.5, "1.500 ms")]
    [InlineData(12.25, "12.250 ms")]
    [InlineData(999.75, "999.750 ms")]
    [InlineData(1000, "1.000 s")]
    [InlineData(2250, "2.250 s")]
    [InlineData(59_999.5, "59.999 s")] // 59 s 999.5 ms: the half millisecond is below the printed unit
    [InlineData(60_000, "1:00.000 m")]
    [InlineData(61_001, "1:01.001 m")] // 1 min 1 s 1 ms: seconds padded to two digits
    [InlineData(3_599_999, "59:59.999 m")]
    [InlineData(3_600_000, "1:00:00.000 h")]
    [InlineData(3_723_004, "1:02:03.004 h")] // 1 h 2 min 3 s 4 ms
    [InlineData(93_662_003, "26:01:02.003 h")] // 26 h (93,600,000) + 1 min (60,000) + 2 s (2,000) + 3 ms
    [InlineData(-1.5, "-1.500 ms")]
    [InlineData(-61_001, "-1:01.001 m")]
    [InlineData(double.NaN, "0 ns")]
    public void GenerateTimePeriod_writes_the_largest_unit_reached(double milliseconds, string expected) =>
        Assert.Equal(expected, Utilities.GenerateTimePeriod(milliseconds));
}
