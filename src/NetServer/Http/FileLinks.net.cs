using System.IO;

namespace NetServer.Http;

// net10.0: symbolic links (and junctions) are followed when every link on the way from the folder
// to the file resolves inside the folder; the real path is what gets read.
internal static partial class FileLinks
{
    // Linux gives up after 40 links in one lookup (ELOOP); so do we.
    private const int MaxLinks = 40;

    public static string RealRoot(string root) => RealPath(root, 0) ?? root;

    public static bool IsInside(string root, string realRoot, string path, out string realPath)
    {
        realPath = path;
        var current = realRoot;
        foreach (var part in Parts(path.Substring(root.Length)))
        {
            var next = Path.Combine(current, part);
            if (LinkTargetOf(next) is null)
            {
                current = next;
                continue;
            }

            var resolved = RealPath(next, 0);
            if (resolved is null || !IsAtOrUnder(resolved, realRoot))
                return false;
            current = resolved;
        }

        realPath = current;
        return true;
    }

    // realpath(3) by hand: each component that is a link is replaced by its target, resolved in turn.
    private static string? RealPath(string path, int links)
    {
        path = Path.GetFullPath(path);
        var current = Path.GetPathRoot(path) ?? string.Empty;
        foreach (var part in Parts(path.Substring(current.Length)))
        {
            var next = Path.Combine(current, part);
            var target = LinkTargetOf(next);
            if (target is null)
            {
                current = next;
                continue;
            }

            if (++links > MaxLinks)
                return null;
            var real = RealPath(Path.IsPathRooted(target) ? target : Path.Combine(current, target), links);
            if (real is null)
                return null;
            current = real;
        }

        return current;
    }

    private static string? LinkTargetOf(string path)
    {
        FileSystemInfo info = Directory.Exists(path) ? new DirectoryInfo(path) : new FileInfo(path);
        return info.LinkTarget;
    }

    private static string[] Parts(string relative) =>
        relative.Split(s_separators, StringSplitOptions.RemoveEmptyEntries);
}
