using System.Runtime.InteropServices;

namespace NetServer.Http;

/// <summary>
/// A file-name filter with <c>*</c> and <c>?</c>, as <c>Directory.EnumerateFiles</c> takes it:
/// <c>"*.*"</c>, <c>"*"</c> and empty match every name (also one without a dot). Case-insensitive
/// on Windows, case-sensitive elsewhere, as the file systems are.
/// </summary>
internal sealed class FilePattern
{
    private static readonly bool s_ignoreCase = RuntimeInformation.IsOSPlatform(OSPlatform.Windows);

    private readonly string? _pattern;

    public FilePattern(string? pattern)
    {
        _pattern = string.IsNullOrEmpty(pattern) || pattern == "*" || pattern == "*.*" ? null : pattern;
    }

    public bool IsMatch(string name) => _pattern is null || Matches(_pattern, name);

    private static bool Matches(string pattern, string name)
    {
        // Greedy match with one backtrack point: the last '*' seen and where its run started.
        int p = 0, n = 0, star = -1, starName = 0;
        while (n < name.Length)
        {
            if (p < pattern.Length && (pattern[p] == '?' || Same(pattern[p], name[n])))
            {
                p++;
                n++;
            }
            else if (p < pattern.Length && pattern[p] == '*')
            {
                star = p++;
                starName = n;
            }
            else if (star >= 0)
            {
                p = star + 1;
                n = ++starName;
            }
            else
            {
                return false;
            }
        }

        while (p < pattern.Length && pattern[p] == '*')
            p++;
        return p == pattern.Length;
    }

    private static bool Same(char a, char b) => a == b || (s_ignoreCase && char.ToUpperInvariant(a) == char.ToUpperInvariant(b));
}
