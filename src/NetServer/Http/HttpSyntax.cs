namespace NetServer.Http;

/// <summary>Small pieces of RFC 9110 syntax shared by the static-content code.</summary>
internal static class HttpSyntax
{
    /// <summary>Without leading and trailing optional whitespace (spaces and tabs).</summary>
    public static ReadOnlySpan<byte> TrimOws(ReadOnlySpan<byte> value)
    {
        var start = 0;
        var end = value.Length;
        while (start < end && IsOws(value[start]))
            start++;
        while (end > start && IsOws(value[end - 1]))
            end--;
        return value.Slice(start, end - start);
    }

    public static bool IsOws(byte b) => b == ' ' || b == '\t';

    /// <summary>ASCII case-insensitive equality (header names, range units, methods are ASCII tokens).</summary>
    public static bool EqualsIgnoreCase(ReadOnlySpan<byte> a, ReadOnlySpan<byte> b)
    {
        if (a.Length != b.Length)
            return false;
        for (var i = 0; i < a.Length; i++)
        {
            if (a[i] == b[i])
                continue;
            var lower = a[i] | 0x20;
            if (lower != (b[i] | 0x20) || (uint)(lower - 'a') > 'z' - 'a')
                return false;
        }

        return true;
    }

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
