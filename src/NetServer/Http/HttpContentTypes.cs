using System.Collections.Generic;

namespace NetServer.Http;

/// <summary>
/// Media types by file extension, the one table of the library: <c>HttpResponse.SetContentType</c>
/// uses it as it is (NetCoreServer's values, so responses do not change, plus the types a web page
/// needs today), and static content (<see cref="ForFile"/>) with a UTF-8 charset on text types.
/// </summary>
internal static class HttpContentTypes
{
    /// <summary>A static file of an unknown type: browsers download it instead of guessing (static responses also say nosniff).</summary>
    public const string Default = "application/octet-stream";

    // Keys with and without the dot, any case: ".png", "png" and ".PNG" all find image/png without a string made.
    private static readonly Dictionary<string, string> s_types = Build();

    // The same table for static files: text types say their charset (files are served as stored, UTF-8 assumed).
    private static readonly Dictionary<string, string> s_fileTypes = BuildFileTypes();

    /// <summary>The media type for an extension given with or without its dot ("html", ".html").</summary>
    public static bool TryGet(string extension, out string type)
    {
        if (extension is not null && s_types.TryGetValue(extension, out var found))
        {
            type = found;
            return true;
        }

        type = string.Empty;
        return false;
    }

    /// <summary>The Content-Type of a static file by <paramref name="fileName"/>'s extension (case-insensitive); <see cref="Default"/> when unknown.</summary>
    public static string ForFile(string fileName)
    {
        var dot = fileName.LastIndexOf('.');
        var slash = fileName.LastIndexOf('/');
        if (dot <= slash + 1)
            return Default; // no extension, or a dot-file such as ".htaccess"
        return s_fileTypes.TryGetValue(fileName.Substring(dot), out var type) ? type : Default;
    }

    private static Dictionary<string, string> BuildFileTypes()
    {
        var types = new Dictionary<string, string>(s_types.Count, StringComparer.OrdinalIgnoreCase);
        foreach (var entry in s_types)
            types.Add(entry.Key, entry.Value.StartsWith("text/", StringComparison.Ordinal) ? entry.Value + "; charset=utf-8" : entry.Value);

        return types;
    }

    private static Dictionary<string, string> Build()
    {
        (string Extension, string Type)[] entries =
        [
            // Text and the web
            ("html", "text/html"), ("htm", "text/html"), ("vue", "text/html"), ("css", "text/css"),
            ("js", "text/javascript"), ("mjs", "text/javascript"), ("xml", "text/xml"), ("txt", "text/plain"),
            ("plain", "text/plain"), ("csv", "text/csv"), ("md", "text/markdown"), ("richtext", "text/richtext"),
            ("rtf", "text/rtf"), ("rtx", "text/rtx"), ("sgml", "text/sgml"), ("strings", "text/strings"),
            ("url", "text/uri-list"),

            // Applications
            ("json", "application/json"), ("map", "application/json"), ("webmanifest", "application/manifest+json"),
            ("wasm", "application/wasm"), ("pdf", "application/pdf"), ("zip", "application/zip"),
            ("gzip", "application/gzip"), ("gz", "application/gzip"), ("zlib", "application/zlib"),
            ("atom", "application/atom+xml"), ("fastsoap", "application/fastsoap"), ("ps", "application/postscript"),
            ("soap", "application/soap+xml"), ("sql", "application/sql"), ("xslt", "application/xslt+xml"),
            ("yaml", "application/yaml"), ("yml", "application/yaml"), ("bin", "application/octet-stream"),

            // Images
            ("png", "image/png"), ("jpg", "image/jpeg"), ("jpeg", "image/jpeg"), ("gif", "image/gif"),
            ("svg", "image/svg+xml"), ("ico", "image/x-icon"), ("webp", "image/webp"), ("avif", "image/avif"),
            ("bmp", "image/bmp"), ("tiff", "image/tiff"), ("emf", "image/emf"), ("wmf", "image/wmf"),
            ("jpm", "image/jpm"), ("jpx", "image/jpx"), ("jrx", "image/jrx"),

            // Fonts
            ("woff", "font/woff"), ("woff2", "font/woff2"), ("ttf", "font/ttf"), ("otf", "font/otf"),

            // Audio and video
            ("mp3", "audio/mpeg"), ("aac", "audio/aac"), ("ac3", "audio/ac3"), ("ogg", "audio/ogg"),
            ("wav", "audio/wav"), ("weba", "audio/webm"), ("mp4", "video/mp4"), ("webm", "video/webm"),
            ("mpeg", "video/mpeg"), ("H264", "video/H264"), ("H265", "video/H265"), ("raw", "video/raw"),

            // Messages and models
            ("http", "message/http"), ("s-http", "message/s-http"), ("mesh", "model/mesh"), ("vrml", "model/vrml"),
        ];

        var types = new Dictionary<string, string>(entries.Length * 2, StringComparer.OrdinalIgnoreCase);
        foreach (var (extension, type) in entries)
        {
            types.Add(extension, type);
            types.Add("." + extension, type);
        }

        return types;
    }
}
