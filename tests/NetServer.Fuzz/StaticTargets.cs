using System;
using System.Text;
using NetServer.Http;

namespace NetServer.Fuzz;

/// <summary>Static content's request-target path normalization and Range parsing.</summary>
internal static class StaticTargets
{
    /// <summary>
    /// The input as a request target: a path key starts with '/', holds no NUL, no '\', no "//",
    /// no "." or ".." segment, and normalizes to itself; the offsets lie inside the target. The
    /// same bytes as a Range value of a representation as long as the input: a satisfiable range
    /// lies inside it.
    /// </summary>
    public static void PathAndRange(ReadOnlySpan<byte> input)
    {
        var destination = new byte[input.Length + 1];
        var result = RequestPath.Normalize(input, destination, out var length, out var pathStart, out var pathEnd, out var queryEnd);
        Invariant.Check(pathStart >= 0 && pathStart <= pathEnd && pathEnd <= queryEnd && queryEnd <= input.Length || result != RequestPathResult.Path, "path and query offsets lie inside the target");
        if (result == RequestPathResult.Path)
        {
            var key = destination.AsSpan(0, length);
            Invariant.Check(length > 0 && key[0] == '/', "a key starts with '/'");
            Invariant.Check(key.IndexOf((byte)0) < 0 && key.IndexOf((byte)'\\') < 0 && key.IndexOf("//"u8) < 0, "a key holds no NUL, no '\\', no empty segment");
            foreach (var segment in Encoding.Latin1.GetString(key).Split('/'))
                Invariant.Check(segment != "." && segment != "..", $"a key keeps no dot segment: {Encoding.Latin1.GetString(key)}");
            if (key.IndexOfAny("%?#"u8) < 0)
            {
                var again = new byte[length + 1];
                Invariant.Check(RequestPath.Normalize(key, again, out var length2, out _, out _, out _) == RequestPathResult.Path
                    && again.AsSpan(0, length2).SequenceEqual(key), "a key normalizes to itself");
            }
        }

        var size = input.Length;
        var range = StaticContent.ParseRange(input, size, out var first, out var last);
        if (range == StaticContent.RangeResult.Satisfiable)
            Invariant.Check(first >= 0 && first <= last && last < size, $"a satisfiable range {first}-{last} lies inside {size} bytes");
    }
}
