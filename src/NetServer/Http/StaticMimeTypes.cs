using System.Collections.Generic;

namespace NetServer.Http;

/// <summary>
/// Content-Type of a static file by its extension: the types a web site's folder usually holds.
/// Anything else is application/octet-stream, which browsers download instead of guessing (the
/// static responses also say nosniff).
/// </summary>
internal static class StaticMimeTypes
{
    public const string Default = "application/octet-stream";

    private static readonly Dictionary<string, string> s_types = new(StringComparer.OrdinalIgnoreCase)
    {
        [".html"] = "text/html; charset=utf-8",
        [".htm"] = "text/html; charset=utf-8",
        [".css"] = "text/css; charset=utf-8",
        [".js"] = "text/javascript; charset=utf-8",
        [".mjs"] = "text/javascript; charset=utf-8",
        [".json"] = "application/json",
        [".map"] = "application/json",
        [".webmanifest"] = "application/manifest+json",
        [".txt"] = "text/plain; charset=utf-8",
        [".md"] = "text/markdown; charset=utf-8",
        [".csv"] = "text/csv; charset=utf-8",
        [".xml"] = "application/xml",
        [".yaml"] = "application/yaml",
        [".yml"] = "application/yaml",
        [".wasm"] = "application/wasm",
        [".pdf"] = "application/pdf",
        [".zip"] = "application/zip",
        [".gz"] = "application/gzip",
        [".svg"] = "image/svg+xml",
        [".png"] = "image/png",
        [".jpg"] = "image/jpeg",
        [".jpeg"] = "image/jpeg",
        [".gif"] = "image/gif",
        [".webp"] = "image/webp",
        [".avif"] = "image/avif",
        [".ico"] = "image/x-icon",
        [".bmp"] = "image/bmp",
        [".woff"] = "font/woff",
        [".woff2"] = "font/woff2",
        [".ttf"] = "font/ttf",
        [".otf"] = "font/otf",
        [".mp3"] = "audio/mpeg",
        [".ogg"] = "audio/ogg",
        [".wav"] = "audio/wav",
        [".mp4"] = "video/mp4",
        [".webm"] = "video/webm",
    };

    /// <summary>The type for <paramref name="fileName"/>'s extension (case-insensitive).</summary>
    public static string Of(string fileName)
    {
        var dot = fileName.LastIndexOf('.');
        var slash = fileName.LastIndexOf('/');
        if (dot <= slash + 1)
            return Default; // no extension, or a dot-file such as ".htaccess"
        return s_types.TryGetValue(fileName.Substring(dot), out var type) ? type : Default;
    }
}
