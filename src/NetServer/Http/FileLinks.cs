using System.IO;

namespace NetServer.Http;

/// <summary>
/// Whether a file found below an inserted folder really lies inside it, symbolic links considered:
/// a link whose target is outside the folder must not make that target servable.
/// </summary>
/// <remarks>
/// The check and the read are two steps: a link swapped in between by someone who can write the
/// folder is not caught. Hard links cannot be told apart from files and are served.
/// </remarks>
internal static partial class FileLinks
{
    private static readonly char[] s_separators = [Path.DirectorySeparatorChar, Path.AltDirectorySeparatorChar];

    /// <summary>Whether <paramref name="path"/> is <paramref name="folder"/> or below it (both full, without trailing separators).</summary>
    public static bool IsAtOrUnder(string path, string folder) =>
        path.StartsWith(folder, WatchedFolder.PathComparison)
        && (path.Length == folder.Length || IsSeparator(path[folder.Length]) || IsSeparator(folder[folder.Length - 1]));

    private static bool IsSeparator(char c) => c == Path.DirectorySeparatorChar || c == Path.AltDirectorySeparatorChar;
}
