using System.IO;

namespace NetServer.Http;

// netstandard: there is no API to read a link's target, so no link is followed: a file is cached
// only when neither it nor any folder between it and the inserted folder is a link (a reparse point).
internal static partial class FileLinks
{
    public static string RealRoot(string root) => root;

    public static bool IsInside(string root, string realRoot, string path, out string realPath)
    {
        realPath = path;
        var current = root;
        foreach (var part in path.Substring(root.Length).Split(s_separators, StringSplitOptions.RemoveEmptyEntries))
        {
            current = Path.Combine(current, part);
            if ((File.GetAttributes(current) & FileAttributes.ReparsePoint) != 0)
                return false;
        }

        return true;
    }
}
