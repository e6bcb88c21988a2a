namespace NetServer.Http;

/// <summary>Reason phrases for status codes: RFC 9110 section 15 and the IANA registry's other codes.</summary>
internal static class HttpStatusPhrases
{
    /// <summary>The protocol of the cached status lines.</summary>
    public const string Http11 = "HTTP/1.1";

    // "HTTP/1.1 200 OK\r\n" and the like, made on first use, indexed by status - 100.
    private static readonly byte[]?[] s_lines = new byte[900][];

    /// <summary>The whole HTTP/1.1 status line for a status from 100 to 999, with its standard phrase.</summary>
    public static byte[] Http11Line(int status)
    {
        var line = s_lines[status - 100];
        if (line is null)
        {
            line = TextEncoding.Utf8.GetBytes(string.Concat(Http11, " ", status.ToString(System.Globalization.CultureInfo.InvariantCulture), " ", Get(status), "\r\n"));
            Volatile.Write(ref s_lines[status - 100], line);
        }

        return line;
    }

    /// <summary>The phrase for <paramref name="status"/>, "Unknown" for an unregistered code (as NetCoreServer).</summary>
    public static string Get(int status) => status switch
    {
        100 => "Continue",
        101 => "Switching Protocols",
        102 => "Processing",
        103 => "Early Hints",
        200 => "OK",
        201 => "Created",
        202 => "Accepted",
        203 => "Non-Authoritative Information",
        204 => "No Content",
        205 => "Reset Content",
        206 => "Partial Content",
        207 => "Multi-Status",
        208 => "Already Reported",
        226 => "IM Used",
        300 => "Multiple Choices",
        301 => "Moved Permanently",
        302 => "Found",
        303 => "See Other",
        304 => "Not Modified",
        305 => "Use Proxy",
        307 => "Temporary Redirect",
        308 => "Permanent Redirect",
        400 => "Bad Request",
        401 => "Unauthorized",
        402 => "Payment Required",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        406 => "Not Acceptable",
        407 => "Proxy Authentication Required",
        408 => "Request Timeout",
        409 => "Conflict",
        410 => "Gone",
        411 => "Length Required",
        412 => "Precondition Failed",
        413 => "Content Too Large",
        414 => "URI Too Long",
        415 => "Unsupported Media Type",
        416 => "Range Not Satisfiable",
        417 => "Expectation Failed",
        421 => "Misdirected Request",
        422 => "Unprocessable Content",
        423 => "Locked",
        424 => "Failed Dependency",
        425 => "Too Early",
        426 => "Upgrade Required",
        428 => "Precondition Required",
        429 => "Too Many Requests",
        431 => "Request Header Fields Too Large",
        451 => "Unavailable For Legal Reasons",
        500 => "Internal Server Error",
        501 => "Not Implemented",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        505 => "HTTP Version Not Supported",
        506 => "Variant Also Negotiates",
        507 => "Insufficient Storage",
        508 => "Loop Detected",
        510 => "Not Extended",
        511 => "Network Authentication Required",
        _ => "Unknown",
    };
}
