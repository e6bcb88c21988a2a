namespace NetServer.Http;

// Reading the conditional and range fields (RFC 9110 sections 8.8.3, 13.1 and 14).
internal static partial class StaticContent
{
    private enum TagMatch
    {
        /// <summary>The field does not parse: ignored.</summary>
        Invalid,

        /// <summary>No tag of the list matches.</summary>
        None,

        /// <summary>"*" or a matching tag.</summary>
        Found,
    }

    internal enum RangeResult
    {
        /// <summary>Not one valid bytes range (another unit, bad syntax, several ranges): send the whole representation.</summary>
        Ignore,

        Satisfiable,

        /// <summary>The range starts at or past the end, or is an empty suffix: 416.</summary>
        Unsatisfiable,
    }

    /// <summary>
    /// Compares the list in an If-Match / If-None-Match value with <paramref name="eTag"/> (our
    /// strong, quoted tag). Strong comparison (If-Match) never matches a weak tag; weak comparison
    /// (If-None-Match, 13.1.2) ignores the W/ prefix.
    /// </summary>
    private static TagMatch MatchEntityTags(ReadOnlySpan<byte> value, ReadOnlySpan<byte> eTag, bool strong)
    {
        value = HttpSyntax.TrimWhitespace(value);
        if (value.Length == 1 && value[0] == '*')
            return TagMatch.Found;

        var found = false;
        var any = false;
        var i = 0;
        while (true)
        {
            while (i < value.Length && (value[i] == ',' || HttpSyntax.IsWhitespace(value[i])))
                i++;
            if (i == value.Length)
                break;

            var weak = false;
            if (value[i] == 'W' && i + 1 < value.Length && value[i + 1] == '/')
            {
                weak = true;
                i += 2;
            }

            if (i == value.Length || value[i] != '"')
                return TagMatch.Invalid;
            var close = value.Slice(i + 1).IndexOf((byte)'"');
            if (close < 0)
                return TagMatch.Invalid;
            var tag = value.Slice(i, close + 2);
            if (!(strong && weak) && tag.SequenceEqual(eTag))
                found = true;
            any = true;

            i += close + 2;
            while (i < value.Length && HttpSyntax.IsWhitespace(value[i]))
                i++;
            if (i < value.Length && value[i] != ',')
                return TagMatch.Invalid;
        }

        return !any ? TagMatch.Invalid : found ? TagMatch.Found : TagMatch.None;
    }

    /// <summary>
    /// If-Range (13.1.5): the range applies only when the validator matches exactly: a strong tag
    /// equal to ours, or a date equal to Last-Modified. A weak tag or anything unreadable does not.
    /// </summary>
    private static bool IfRangeHolds(ReadOnlySpan<byte> value, StaticResponse response)
    {
        value = HttpSyntax.TrimWhitespace(value);
        if (value.Length > 0 && (value[0] == '"' || value[0] == 'W'))
            return value.SequenceEqual(response.ETag);
        return HttpDate.TryParse(value, out var date) && date == response.LastModified;
    }

    /// <summary>
    /// Reads a Range value as one byte range of a <paramref name="length"/>-byte representation:
    /// "first-last", "first-" or "-suffix" (14.1.2). Several ranges are not served as
    /// multipart/byteranges: the field is ignored and the whole file sent, which 14.2 allows.
    /// </summary>
    internal static RangeResult ParseRange(ReadOnlySpan<byte> value, long length, out long first, out long last)
    {
        first = last = 0;
        value = HttpSyntax.TrimWhitespace(value);
        var equals = value.IndexOf((byte)'=');
        if (equals < 0 || !HttpSyntax.EqualsIgnoreCase(value.Slice(0, equals), "bytes"u8))
            return RangeResult.Ignore;

        // Exactly one non-empty list element (the list syntax allows empty ones).
        ReadOnlySpan<byte> spec = default;
        var rest = value.Slice(equals + 1);
        while (!rest.IsEmpty)
        {
            var comma = rest.IndexOf((byte)',');
            var element = HttpSyntax.TrimWhitespace(comma < 0 ? rest : rest.Slice(0, comma));
            rest = comma < 0 ? default : rest.Slice(comma + 1);
            if (element.IsEmpty)
                continue;
            if (!spec.IsEmpty)
                return RangeResult.Ignore;
            spec = element;
        }

        var dash = spec.IndexOf((byte)'-');
        if (dash < 0)
            return RangeResult.Ignore;

        if (dash == 0)
        {
            if (!HttpSyntax.TryParseDigits(spec.Slice(1), out var suffix))
                return RangeResult.Ignore;
            if (suffix == 0)
                return RangeResult.Unsatisfiable;
            first = suffix >= length ? 0 : length - suffix;
            last = length - 1;
            return RangeResult.Satisfiable;
        }

        if (!HttpSyntax.TryParseDigits(spec.Slice(0, dash), out first))
            return RangeResult.Ignore;
        var end = spec.Slice(dash + 1);
        if (end.IsEmpty)
        {
            last = length - 1;
        }
        else
        {
            if (!HttpSyntax.TryParseDigits(end, out last) || last < first)
                return RangeResult.Ignore;
            if (last >= length)
                last = length - 1;
        }

        return first >= length ? RangeResult.Unsatisfiable : RangeResult.Satisfiable;
    }
}
