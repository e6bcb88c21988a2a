using System.Buffers;

namespace NetServer.Http;

// net10.0: the scans are vectorized through SearchValues built from the same byte classes.
internal static partial class HttpSyntax
{
    private static readonly SearchValues<byte> s_token = Values(Token, set: true);
    private static readonly SearchValues<byte> s_badValue = Values(BadValue, set: true);
    private static readonly SearchValues<byte> s_badTarget = Values(BadTarget, set: true);

    /// <summary>The index of the first byte that is not a tchar, or -1.</summary>
    public static int IndexOfNonToken(ReadOnlySpan<byte> span) => span.IndexOfAnyExcept(s_token);

    /// <summary>The index of the first byte not allowed in a field value (a CTL other than HTAB), or -1.</summary>
    public static int IndexOfBadValueByte(ReadOnlySpan<byte> span) => span.IndexOfAny(s_badValue);

    /// <summary>The index of the first byte not allowed in a request target (CTL, SP, DEL), or -1.</summary>
    public static int IndexOfBadTargetByte(ReadOnlySpan<byte> span) => span.IndexOfAny(s_badTarget);

    // Builds its own table: static initializers of partial files run in no defined order.
    private static SearchValues<byte> Values(byte mask, bool set)
    {
        var classes = BuildClasses();
        Span<byte> bytes = stackalloc byte[256];
        var count = 0;
        for (var b = 0; b < 256; b++)
        {
            if (((classes[b] & mask) != 0) == set)
                bytes[count++] = (byte)b;
        }

        return SearchValues.Create(bytes.Slice(0, count));
    }
}
