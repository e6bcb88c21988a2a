namespace NetServer.Http;

internal static partial class HttpSyntax
{
    /// <summary>
    /// Reads 1*DIGIT as a non-negative number, saturating at <see cref="long.MaxValue"/> (a
    /// position past any representation stays past it instead of wrapping).
    /// </summary>
    public static bool TryParseDigits(ReadOnlySpan<byte> digits, out long value)
    {
        value = 0;
        if (digits.IsEmpty)
            return false;
        foreach (var b in digits)
        {
            var digit = (uint)(b - '0');
            if (digit > 9)
                return false;
            value = value > (long.MaxValue - digit) / 10 ? long.MaxValue : (value * 10) + digit;
        }

        return true;
    }
}
