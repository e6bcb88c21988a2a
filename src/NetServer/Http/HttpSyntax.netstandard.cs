namespace NetServer.Http;

// netstandard: no SearchValues or IndexOfAnyExcept; one table lookup per byte.
internal static partial class HttpSyntax
{
    /// <summary>The index of the first byte that is not a tchar, or -1.</summary>
    public static int IndexOfNonToken(ReadOnlySpan<byte> span) => IndexOfClass(span, Token, set: false);

    /// <summary>The index of the first byte not allowed in a field value (a CTL other than HTAB), or -1.</summary>
    public static int IndexOfBadValueByte(ReadOnlySpan<byte> span) => IndexOfClass(span, BadValue, set: true);

    /// <summary>The index of the first byte not allowed in a request target (CTL, SP, DEL), or -1.</summary>
    public static int IndexOfBadTargetByte(ReadOnlySpan<byte> span) => IndexOfClass(span, BadTarget, set: true);

    private static int IndexOfClass(ReadOnlySpan<byte> span, byte mask, bool set)
    {
        var classes = s_classes;
        for (var i = 0; i < span.Length; i++)
        {
            if (((classes[span[i]] & mask) != 0) == set)
                return i;
        }

        return -1;
    }
}
