namespace NetServer.Http;

/// <summary>Finds the cookies of a message's Cookie and Set-Cookie header fields (RFC 6265), as ranges into its bytes.</summary>
internal static class HttpCookies
{
    /// <summary>
    /// Adds the name/value pairs of one header value to <paramref name="cookies"/>: every pair of a
    /// Cookie value ("a=1; b=2"), the first pair of a Set-Cookie value ("a=1; Path=/; Secure").
    /// Spaces around names and values are dropped; a pair without '=' or without a name is skipped;
    /// a quoted value keeps its quotes.
    /// </summary>
    public static void Parse(ReadOnlySpan<byte> source, HttpRange value, bool setCookie, HttpFieldTable cookies)
    {
        var start = value.Start;
        var end = value.Start + value.Length;
        while (start < end)
        {
            var semicolon = source.Slice(start, end - start).IndexOf((byte)';');
            var pairEnd = semicolon < 0 ? end : start + semicolon;
            AddPair(source, start, pairEnd, cookies);
            if (setCookie)
                break;
            start = pairEnd + 1;
        }
    }

    private static void AddPair(ReadOnlySpan<byte> source, int start, int end, HttpFieldTable cookies)
    {
        var equals = source.Slice(start, end - start).IndexOf((byte)'=');
        if (equals < 0)
            return;
        var name = Trim(source, start, start + equals);
        if (name.IsEmpty)
            return;
        cookies.Add(name, Trim(source, start + equals + 1, end));
    }

    private static HttpRange Trim(ReadOnlySpan<byte> source, int start, int end)
    {
        while (start < end && source[start] is (byte)' ' or (byte)'\t')
            start++;
        while (end > start && source[end - 1] is (byte)' ' or (byte)'\t')
            end--;
        return new HttpRange(start, end - start);
    }
}
