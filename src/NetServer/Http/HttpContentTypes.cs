using System.Collections.Generic;

namespace NetServer.Http;

/// <summary>
/// Media types by file extension for <c>HttpResponse.SetContentType</c>: NetCoreServer's table
/// (same values, so responses do not change) plus the types a web page needs today.
/// </summary>
internal static class HttpContentTypes
{
    // Keys with and without the dot, any case: ".png", "png" and ".PNG" all find image/png without a string made.
    private static readonly Dictionary<string, string> s_types = Build();

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
