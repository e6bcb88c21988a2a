namespace NetServer.Http;

/// <summary>
/// Why the HTTP parser refused a message: the status to answer a request with and a reason in plain
/// English. One static instance per rule, so the error path allocates nothing. For responses
/// (the client side) the status is only informative: a malformed response closes the connection.
/// </summary>
internal readonly struct HttpParseError
{
    private HttpParseError(int status, string reason)
    {
        Status = status;
        Reason = reason;
    }

    /// <summary>The HTTP status code to answer with (0 when there is no error).</summary>
    public int Status { get; }

    /// <summary>What was wrong, for logs and the answer's body.</summary>
    public string? Reason { get; }

    public bool IsNone => Status == 0;

    public override string ToString() => IsNone ? "none" : $"{Status}: {Reason}";

    // Start lines.
    public static readonly HttpParseError RequestLineTooLong = new(414, "The request line is longer than the limit (MaxRequestLineSize).");
    public static readonly HttpParseError InvalidRequestLine = new(400, "The request line is malformed: expected method, request target and HTTP version separated by single spaces.");
    public static readonly HttpParseError InvalidMethod = new(400, "The request method is not a token.");
    public static readonly HttpParseError InvalidTarget = new(400, "The request target holds whitespace, control characters, or is not in a form HTTP/1.1 allows.");
    public static readonly HttpParseError InvalidVersion = new(400, "The HTTP version is malformed.");
    public static readonly HttpParseError UnsupportedVersion = new(505, "The HTTP version is not supported: only HTTP/1.0 and HTTP/1.1 are.");
    public static readonly HttpParseError InvalidStatusLine = new(400, "The status line is malformed: expected HTTP version, a three-digit status code and a reason phrase.");
    public static readonly HttpParseError ResponseHeadTooLarge = new(431, "The response head is larger than the limit (MaxResponseHeadersTotalSize).");

    // Line endings and field lines (heads and trailers).
    public static readonly HttpParseError BareLineFeed = new(400, "A line ends with LF alone: HTTP/1.1 lines end with CRLF.");
    public static readonly HttpParseError LeadingWhitespace = new(400, "A header field line starts with whitespace (obsolete line folding is not accepted).");
    public static readonly HttpParseError MissingColon = new(400, "A header field line has no colon.");
    public static readonly HttpParseError EmptyHeaderName = new(400, "A header field name is empty.");
    public static readonly HttpParseError WhitespaceBeforeColon = new(400, "A header field name is followed by whitespace before the colon.");
    public static readonly HttpParseError InvalidHeaderName = new(400, "A header field name is not a token.");
    public static readonly HttpParseError InvalidHeaderValue = new(400, "A header field value holds a control character (NUL, CR, LF or another).");
    public static readonly HttpParseError HeadersTooLarge = new(431, "The request header fields are larger than the limit (MaxRequestHeadersTotalSize).");
    public static readonly HttpParseError TooManyHeaders = new(431, "The request has more header fields than the limit (MaxRequestHeaderCount).");

    // Request semantics.
    public static readonly HttpParseError MissingHost = new(400, "An HTTP/1.1 request has no Host header field.");
    public static readonly HttpParseError MultipleHosts = new(400, "The request has more than one Host header field.");
    public static readonly HttpParseError InvalidHost = new(400, "The Host header field is not a valid host and port.");
    public static readonly HttpParseError InvalidContentLength = new(400, "The Content-Length header field is not a number of bytes.");
    public static readonly HttpParseError ConflictingContentLength = new(400, "The Content-Length header fields disagree.");
    public static readonly HttpParseError RepeatedContentLength = new(400, "A request carries one Content-Length with one value; this one repeats it.");
    public static readonly HttpParseError TransferEncodingNotChunked = new(400, "The final transfer coding is not chunked, so the request body length cannot be determined.");
    public static readonly HttpParseError ChunkedTwice = new(400, "The chunked transfer coding is applied more than once.");
    public static readonly HttpParseError TransferEncodingInHttp10 = new(400, "An HTTP/1.0 request has a Transfer-Encoding header field (HTTP/1.0 has no transfer codings).");
    public static readonly HttpParseError UnsupportedTransferCoding = new(501, "A transfer coding other than chunked is not implemented.");
    public static readonly HttpParseError BodyTooLarge = new(413, "The request body is larger than the limit (MaxRequestBodySize).");
    public static readonly HttpParseError UnsupportedExpectation = new(417, "The Expect header field asks for something other than 100-continue.");

    // Chunked bodies.
    public static readonly HttpParseError InvalidChunkSize = new(400, "A chunk size is not a hexadecimal number.");
    public static readonly HttpParseError ChunkSizeOverflow = new(400, "A chunk size is too large.");
    public static readonly HttpParseError InvalidChunkLineEnd = new(400, "A chunk size line does not end with CRLF.");
    public static readonly HttpParseError InvalidChunkExtension = new(400, "A chunk extension holds a control character or a bare CR or LF.");
    public static readonly HttpParseError ChunkLineTooLong = new(400, "A chunk size line is longer than the limit (MaxRequestLineSize).");
    public static readonly HttpParseError ChunkExtensionsTooLarge = new(400, "The chunk extensions of the body add up to more than the limit (MaxRequestHeadersTotalSize).");
    public static readonly HttpParseError MissingChunkTerminator = new(400, "Chunk data is not followed by CRLF.");
    public static readonly HttpParseError TrailersTooLarge = new(431, "The trailer fields are larger than the limit (MaxRequestHeadersTotalSize).");
    public static readonly HttpParseError TooManyTrailers = new(431, "The body has more trailer fields than the limit (MaxRequestHeaderCount).");
}
