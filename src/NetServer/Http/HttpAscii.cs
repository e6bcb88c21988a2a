namespace NetServer.Http;

/// <summary>Comparisons of message bytes with names and strings, without decoding them.</summary>
internal static class HttpAscii
{
    /// <summary>True when <paramref name="text"/> is ASCII and spells exactly <paramref name="bytes"/>.</summary>
    public static bool SameText(string text, ReadOnlySpan<byte> bytes)
    {
        if (text.Length != bytes.Length)
            return false;
        for (var i = 0; i < bytes.Length; i++)
        {
            if (text[i] != bytes[i] || bytes[i] >= 0x80)
                return false;
        }

        return true;
    }

    /// <summary>ASCII case-insensitive equality of two byte runs (header names).</summary>
    public static bool EqualsIgnoreCase(ReadOnlySpan<byte> a, ReadOnlySpan<byte> b)
    {
        if (a.Length != b.Length)
            return false;
        for (var i = 0; i < a.Length; i++)
        {
            if (a[i] != b[i] && ToLower(a[i]) != ToLower(b[i]))
                return false;
        }

        return true;
    }

    /// <summary>ASCII case-insensitive equality of a name given as a string and a byte run.</summary>
    public static bool EqualsIgnoreCase(string name, ReadOnlySpan<byte> bytes)
    {
        if (name.Length != bytes.Length)
            return false;
        for (var i = 0; i < bytes.Length; i++)
        {
            var c = name[i];
            if (c >= 0x80 || (c != bytes[i] && ToLower((byte)c) != ToLower(bytes[i])))
                return false;
        }

        return true;
    }

    /// <summary>True when <paramref name="value"/>, a comma-separated list, ends with the token <paramref name="last"/> (ASCII, any case).</summary>
    public static bool EndsWithToken(ReadOnlySpan<char> value, string last)
    {
        value = value.TrimEnd();
        if (value.Length < last.Length || !value.Slice(value.Length - last.Length).Equals(last.AsSpan(), StringComparison.OrdinalIgnoreCase))
            return false;
        var before = value.Slice(0, value.Length - last.Length).TrimEnd();
        return before.IsEmpty || before[before.Length - 1] == ',';
    }

    private static byte ToLower(byte b) => b is >= (byte)'A' and <= (byte)'Z' ? (byte)(b | 0x20) : b;
}
