namespace NetServer.Http;

/// <summary>A run of bytes inside one parsed head: an offset from the head's first byte and a length.</summary>
internal readonly struct HttpRange
{
    public HttpRange(int start, int length)
    {
        Start = start;
        Length = length;
    }

    public int Start { get; }

    public int Length { get; }

    public bool IsEmpty => Length == 0;

    public ReadOnlySpan<byte> Of(ReadOnlySpan<byte> head) => head.Slice(Start, Length);
}

/// <summary>One header field of a parsed head: where its name and its value (trimmed of spaces and tabs) lie.</summary>
internal readonly struct HttpHeaderRange
{
    public HttpHeaderRange(HttpRange name, HttpRange value)
    {
        Name = name;
        Value = value;
    }

    public HttpRange Name { get; }

    public HttpRange Value { get; }
}

/// <summary>How the body after a head is delimited (RFC 9112 section 6.3).</summary>
internal enum HttpBodyFraming
{
    /// <summary>No body (a request without Content-Length or Transfer-Encoding, HEAD/1xx/204/304 responses).</summary>
    None,

    /// <summary><see cref="HttpHead.ContentLength"/> bytes.</summary>
    ContentLength,

    /// <summary>Chunked transfer coding, trailers after the last chunk.</summary>
    Chunked,

    /// <summary>Until the connection closes (a response without length or chunked coding).</summary>
    UntilClose,
}

/// <summary>
/// What the HTTP parser found in one request or response head: ranges into the head's bytes (the
/// bytes from the start line up to and including the empty line), so nothing is copied or turned
/// into a string while parsing. One instance per connection, reset for every message.
/// </summary>
internal sealed class HttpHead
{
    // Grows to the configured header count limit (100 by default, Kestrel's).
    private HttpHeaderRange[] _headers = new HttpHeaderRange[16];

    /// <summary>Bytes of the whole head, start line to the empty line included.</summary>
    public int Length { get; set; }

    /// <summary>Request: the method token.</summary>
    public HttpRange Method { get; set; }

    /// <summary>Request: the request target as sent (origin-form, absolute-form, authority-form or "*").</summary>
    public HttpRange Target { get; set; }

    /// <summary>The HTTP-version token ("HTTP/1.1").</summary>
    public HttpRange Version { get; set; }

    /// <summary>1 for HTTP/1.1, 0 for HTTP/1.0.</summary>
    public int MinorVersion { get; set; }

    /// <summary>Response: the status code.</summary>
    public int Status { get; set; }

    /// <summary>Response: the reason phrase (may be empty).</summary>
    public HttpRange Reason { get; set; }

    /// <summary>Header fields in the order received.</summary>
    public ReadOnlySpan<HttpHeaderRange> Headers => _headers.AsSpan(0, HeaderCount);

    public int HeaderCount { get; private set; }

    /// <summary>How the body is delimited.</summary>
    public HttpBodyFraming Framing { get; set; }

    /// <summary>The body length when <see cref="Framing"/> is <see cref="HttpBodyFraming.ContentLength"/>, otherwise -1.</summary>
    public long ContentLength { get; set; } = -1;

    /// <summary>The connection closes after this exchange (Connection: close, HTTP/1.0 without keep-alive, or Content-Length with Transfer-Encoding).</summary>
    public bool CloseAfter { get; set; }

    /// <summary>Request: "Expect: 100-continue" was sent.</summary>
    public bool ExpectContinue { get; set; }

    /// <summary>"Connection: upgrade" with an Upgrade header field (WebSocket).</summary>
    public bool IsUpgrade { get; set; }

    public void AddHeader(HttpRange name, HttpRange value)
    {
        if (HeaderCount == _headers.Length)
            Array.Resize(ref _headers, _headers.Length * 2);
        _headers[HeaderCount++] = new HttpHeaderRange(name, value);
    }

    public void Reset()
    {
        Length = 0;
        Method = default;
        Target = default;
        Version = default;
        MinorVersion = 1;
        Status = 0;
        Reason = default;
        HeaderCount = 0;
        Framing = HttpBodyFraming.None;
        ContentLength = -1;
        CloseAfter = false;
        ExpectContinue = false;
        IsUpgrade = false;
    }
}
