namespace NetServer;

/// <summary>The one bit trick the engine needs, on every target (BitOperations is not in netstandard2.0).</summary>
internal static class BitOperationsCompat
{
    public static int LeadingZeroCount(uint value)
    {
        if (value == 0)
            return 32;
        var count = 0;
        while ((value & 0x8000_0000u) == 0)
        {
            value <<= 1;
            count++;
        }

        return count;
    }
}
