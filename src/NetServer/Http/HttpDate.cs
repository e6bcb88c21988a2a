namespace NetServer.Http;

/// <summary>
/// HTTP-date (RFC 9110 section 5.6.7) as Unix seconds: written as IMF-fixdate, read in all three
/// forms a recipient must accept (IMF-fixdate, the obsolete RFC 850 and asctime forms).
/// </summary>
internal static class HttpDate
{
    /// <summary>Bytes of an IMF-fixdate: "Sun, 06 Nov 1994 08:49:37 GMT".</summary>
    public const int Length = 29;

    private const string DayNames = "SunMonTueWedThuFriSat";
    private const string MonthNames = "JanFebMarAprMayJunJulAugSepOctNovDec";
    private static readonly string[] s_longDayNames = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"];

    public static bool TryFormat(long unixSeconds, Span<byte> destination, out int written)
    {
        written = 0;
        if (destination.Length < Length)
            return false;
        var time = DateTimeOffset.FromUnixTimeSeconds(unixSeconds).UtcDateTime;
        var day = (int)time.DayOfWeek * 3;
        var month = (time.Month - 1) * 3;
        destination[0] = (byte)DayNames[day];
        destination[1] = (byte)DayNames[day + 1];
        destination[2] = (byte)DayNames[day + 2];
        destination[3] = (byte)',';
        destination[4] = (byte)' ';
        TwoDigits(destination.Slice(5), time.Day);
        destination[7] = (byte)' ';
        destination[8] = (byte)MonthNames[month];
        destination[9] = (byte)MonthNames[month + 1];
        destination[10] = (byte)MonthNames[month + 2];
        destination[11] = (byte)' ';
        TwoDigits(destination.Slice(12), time.Year / 100);
        TwoDigits(destination.Slice(14), time.Year % 100);
        destination[16] = (byte)' ';
        TwoDigits(destination.Slice(17), time.Hour);
        destination[19] = (byte)':';
        TwoDigits(destination.Slice(20), time.Minute);
        destination[22] = (byte)':';
        TwoDigits(destination.Slice(23), time.Second);
        destination[25] = (byte)' ';
        destination[26] = (byte)'G';
        destination[27] = (byte)'M';
        destination[28] = (byte)'T';
        written = Length;
        return true;
    }

    /// <summary>Reads an HTTP-date (surrounding spaces and tabs allowed); false when it is none of the three forms.</summary>
    public static bool TryParse(ReadOnlySpan<byte> value, out long unixSeconds)
    {
        unixSeconds = 0;
        value = HttpSyntax.TrimWhitespace(value);
        var comma = value.IndexOf((byte)',');
        if (comma == 3)
            return TryParseFixdate(value, out unixSeconds);
        if (comma > 3)
            return TryParseRfc850(value, comma, out unixSeconds);
        return TryParseAsctime(value, out unixSeconds);
    }

    // "Sun, 06 Nov 1994 08:49:37 GMT"
    private static bool TryParseFixdate(ReadOnlySpan<byte> v, out long unixSeconds)
    {
        unixSeconds = 0;
        return v.Length == Length
            && IndexOfName(v.Slice(0, 3), DayNames) >= 0
            && v[4] == ' ' && v[7] == ' ' && v[11] == ' ' && v[16] == ' '
            && Digits(v.Slice(5, 2), out var day)
            && (IndexOfName(v.Slice(8, 3), MonthNames) is var month && month >= 0)
            && Digits(v.Slice(12, 4), out var year)
            && TryTime(v.Slice(17, 8), out var seconds)
            && v.Slice(25).SequenceEqual(" GMT"u8)
            && TryCombine(year, month + 1, day, seconds, out unixSeconds);
    }

    // "Sunday, 06-Nov-94 08:49:37 GMT"
    private static bool TryParseRfc850(ReadOnlySpan<byte> v, int comma, out long unixSeconds)
    {
        unixSeconds = 0;
        if (!IsLongDayName(v.Slice(0, comma)))
            return false;
        v = v.Slice(comma + 1);
        if (!(v.Length == 23
            && v[0] == ' ' && v[3] == '-' && v[7] == '-' && v[10] == ' '
            && Digits(v.Slice(1, 2), out var day)
            && (IndexOfName(v.Slice(4, 3), MonthNames) is var month && month >= 0)
            && Digits(v.Slice(8, 2), out var shortYear)
            && TryTime(v.Slice(11, 8), out var seconds)
            && v.Slice(19).SequenceEqual(" GMT"u8)))
        {
            return false;
        }

        // RFC 9110 5.6.7: a two-digit year more than 50 years ahead is the latest past year with those digits.
        var thisYear = DateTime.UtcNow.Year;
        var year = thisYear - (thisYear % 100) + shortYear;
        if (year > thisYear + 50)
            year -= 100;
        return TryCombine(year, month + 1, day, seconds, out unixSeconds);
    }

    // "Sun Nov  6 08:49:37 1994"
    private static bool TryParseAsctime(ReadOnlySpan<byte> v, out long unixSeconds)
    {
        unixSeconds = 0;
        if (!(v.Length == 24
            && IndexOfName(v.Slice(0, 3), DayNames) >= 0
            && v[3] == ' ' && v[7] == ' ' && v[10] == ' ' && v[19] == ' '
            && (IndexOfName(v.Slice(4, 3), MonthNames) is var month && month >= 0)
            && TryTime(v.Slice(11, 8), out var seconds)
            && Digits(v.Slice(20, 4), out var year)))
        {
            return false;
        }

        int day;
        if (v[8] == ' ')
        {
            if (!Digits(v.Slice(9, 1), out day))
                return false;
        }
        else if (!Digits(v.Slice(8, 2), out day))
        {
            return false;
        }

        return TryCombine(year, month + 1, day, seconds, out unixSeconds);
    }

    private static bool TryTime(ReadOnlySpan<byte> v, out int seconds)
    {
        seconds = 0;
        if (v[2] != ':' || v[5] != ':'
            || !Digits(v.Slice(0, 2), out var hour) || !Digits(v.Slice(3, 2), out var minute) || !Digits(v.Slice(6, 2), out var second)
            || hour > 23 || minute > 59 || second > 60)
        {
            return false;
        }

        seconds = (hour * 60 * 60) + (minute * 60) + second;
        return true;
    }

    private static bool TryCombine(int year, int month, int day, int seconds, out long unixSeconds)
    {
        unixSeconds = 0;
        if (year < 1 || year > 9999 || day < 1 || day > DateTime.DaysInMonth(year, month))
            return false;
        unixSeconds = new DateTimeOffset(year, month, day, 0, 0, 0, TimeSpan.Zero).ToUnixTimeSeconds() + seconds;
        return true;
    }

    private static bool Digits(ReadOnlySpan<byte> v, out int value)
    {
        value = 0;
        foreach (var b in v)
        {
            if ((uint)(b - '0') > 9)
                return false;
            value = (value * 10) + (b - '0');
        }

        return true;
    }

    // Names compare exactly as the grammar spells them (case-sensitive, RFC 9110 5.6.7).
    private static int IndexOfName(ReadOnlySpan<byte> name, string names)
    {
        for (var i = 0; i < names.Length; i += 3)
        {
            if (name[0] == names[i] && name[1] == names[i + 1] && name[2] == names[i + 2])
                return i / 3;
        }

        return -1;
    }

    private static bool IsLongDayName(ReadOnlySpan<byte> name)
    {
        foreach (var day in s_longDayNames)
        {
            if (name.Length != day.Length)
                continue;
            var same = true;
            for (var i = 0; i < day.Length && same; i++)
                same = name[i] == day[i];
            if (same)
                return true;
        }

        return false;
    }

    private static void TwoDigits(Span<byte> destination, int value)
    {
        destination[0] = (byte)('0' + (value / 10));
        destination[1] = (byte)('0' + (value % 10));
    }
}
