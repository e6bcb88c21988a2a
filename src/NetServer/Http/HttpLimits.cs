namespace NetServer;

/// <summary>
/// Limits of the HTTP/1.1 server and client: how large a request head may be, how long a peer may
/// take, how much a body may carry. The defaults are Kestrel's (KestrelServerLimits), so an
/// application moved from ASP.NET Core sees the same outcomes. Every setter checks its value and
/// throws <see cref="ArgumentOutOfRangeException"/> when it makes no sense.
/// </summary>
/// <remarks>
/// Each crossing has one outcome: the request is answered with the status named on the property
/// (414, 431, 413, 408...) and the connection is closed after that answer.
/// </remarks>
public sealed class HttpLimits
{
    private int _maxRequestLineSize = 8192;
    private int _maxRequestHeadersTotalSize = 32 * 1024;
    private int _maxRequestHeaderCount = 100;
    private long? _maxRequestBodySize = 30_000_000;
    private TimeSpan _requestHeadersTimeout = TimeSpan.FromSeconds(30);
    private TimeSpan _keepAliveTimeout = TimeSpan.FromSeconds(130);
    private double? _minRequestBodyDataRate = 240;
    private TimeSpan _minRequestBodyDataRateGracePeriod = TimeSpan.FromSeconds(5);
    private int _maxPipelinedRequests = 16;
    private int _maxResponseHeadersTotalSize = 64 * 1024;

    /// <summary>
    /// The longest request line in bytes, its CRLF (and any empty lines before it) included. A
    /// longer one is answered with 414 (URI Too Long) as soon as that many bytes arrived without a
    /// line end. Default 8192 (8 KiB).
    /// </summary>
    public int MaxRequestLineSize
    {
        get => _maxRequestLineSize;
        set => _maxRequestLineSize = Positive(value, nameof(MaxRequestLineSize));
    }

    /// <summary>
    /// The most bytes of header field lines in a request head, their CRLFs included (the request
    /// line and the empty line that ends the head are not counted). More is answered with 431
    /// (Request Header Fields Too Large) as soon as the bytes received cross it. Chunked trailers
    /// are held to the same bound. Default 32768 (32 KiB).
    /// </summary>
    public int MaxRequestHeadersTotalSize
    {
        get => _maxRequestHeadersTotalSize;
        set => _maxRequestHeadersTotalSize = Positive(value, nameof(MaxRequestHeadersTotalSize));
    }

    /// <summary>
    /// The most header fields in a request (and trailer fields in a chunked request body). More is
    /// answered with 431 (Request Header Fields Too Large). Default 100.
    /// </summary>
    public int MaxRequestHeaderCount
    {
        get => _maxRequestHeaderCount;
        set => _maxRequestHeaderCount = Positive(value, nameof(MaxRequestHeaderCount));
    }

    /// <summary>
    /// The largest request body in bytes, or null for no limit. A Content-Length over it is answered
    /// with 413 (Content Too Large) before any body byte is read; a chunked body is cut off with 413
    /// when its chunks add up to more. Upgraded connections (WebSocket) are not counted.
    /// Default 30,000,000 bytes (about 28.6 MiB).
    /// </summary>
    public long? MaxRequestBodySize
    {
        get => _maxRequestBodySize;
        set
        {
            if (value < 0)
                ThrowHelper.ThrowArgumentOutOfRange(nameof(MaxRequestBodySize), "The value must be zero or positive, or null for no limit.");
            _maxRequestBodySize = value;
        }
    }

    /// <summary>
    /// How long a client may take to send a whole request head, from its first byte (or from the
    /// end of the previous response on a kept-alive connection). Past it the request is answered
    /// with 408 (Request Timeout) and the connection closed. Default 30 seconds;
    /// <see cref="Timeout.InfiniteTimeSpan"/> turns it off.
    /// </summary>
    public TimeSpan RequestHeadersTimeout
    {
        get => _requestHeadersTimeout;
        set => _requestHeadersTimeout = ValidTimeout(value, nameof(RequestHeadersTimeout));
    }

    /// <summary>
    /// How long a kept-alive connection may sit idle between requests before it is closed (without
    /// an answer). Default 130 seconds; <see cref="Timeout.InfiniteTimeSpan"/> turns it off.
    /// </summary>
    public TimeSpan KeepAliveTimeout
    {
        get => _keepAliveTimeout;
        set => _keepAliveTimeout = ValidTimeout(value, nameof(KeepAliveTimeout));
    }

    /// <summary>
    /// The slowest request body accepted, in bytes per second averaged since the body started, or
    /// null to turn the check off. A body arriving slower (after the grace period) is answered with
    /// 408 (Request Timeout) and the connection closed: a slow-send ("slowloris") client cannot hold
    /// a connection open forever. Default 240 bytes/s.
    /// </summary>
    public double? MinRequestBodyDataRate
    {
        get => _minRequestBodyDataRate;
        set
        {
            if (value is { } rate && !(rate > 0 && !double.IsInfinity(rate)))
                ThrowHelper.ThrowArgumentOutOfRange(nameof(MinRequestBodyDataRate), "The rate must be a positive number of bytes per second, or null to turn the check off.");
            _minRequestBodyDataRate = value;
        }
    }

    /// <summary>
    /// How long a request body may arrive slower than <see cref="MinRequestBodyDataRate"/> before
    /// the rate is enforced (TCP slow start, a client pausing to read a file). Default 5 seconds.
    /// </summary>
    public TimeSpan MinRequestBodyDataRateGracePeriod
    {
        get => _minRequestBodyDataRateGracePeriod;
        set
        {
            if (value <= TimeSpan.Zero)
                ThrowHelper.ThrowArgumentOutOfRange(nameof(MinRequestBodyDataRateGracePeriod), "The grace period must be positive.");
            _minRequestBodyDataRateGracePeriod = value;
        }
    }

    /// <summary>
    /// How many parsed requests of one connection may wait for their responses (HTTP/1.1
    /// pipelining). Default 16 (the depth of TechEmpower's plaintext test). The server in this
    /// version never reaches it: it parses one request at a time, and the requests pipelined
    /// after it wait unparsed in the connection's receive buffer (bounded by its receive limits)
    /// until the answer goes out, so a client that pipelines without reading holds bounded memory.
    /// </summary>
    public int MaxPipelinedRequests
    {
        get => _maxPipelinedRequests;
        set => _maxPipelinedRequests = Positive(value, nameof(MaxPipelinedRequests));
    }

    /// <summary>
    /// For the HTTP client: the largest response head in bytes (status line, header field lines and
    /// the empty line). A larger one is treated as a malformed response and the connection closed.
    /// Default 65536 (64 KiB).
    /// </summary>
    public int MaxResponseHeadersTotalSize
    {
        get => _maxResponseHeadersTotalSize;
        set => _maxResponseHeadersTotalSize = Positive(value, nameof(MaxResponseHeadersTotalSize));
    }

    /// <summary>
    /// Accept HTTP/1.1 requests without a Host header field (RFC 9112 section 3.2 requires one and
    /// they are answered with 400 by default). For old clients that never send it, such as
    /// NetCoreServer's benchmark client. More than one Host field, or an invalid one, is still 400.
    /// Default false.
    /// </summary>
    public bool RelaxHostCheck { get; set; }

    /// <summary>A copy without the body limit, for parsing heads when the limit is applied per request after the header hook.</summary>
    internal HttpLimits WithoutBodyLimit()
    {
        var copy = (HttpLimits)MemberwiseClone();
        copy._maxRequestBodySize = null;
        return copy;
    }

    private static int Positive(int value, string name)
    {
        if (value <= 0)
            ThrowHelper.ThrowArgumentOutOfRange(name, "The value must be positive.");
        return value;
    }

    private static TimeSpan ValidTimeout(TimeSpan value, string name)
    {
        if (value <= TimeSpan.Zero && value != Timeout.InfiniteTimeSpan)
            ThrowHelper.ThrowArgumentOutOfRange(name, "The timeout must be positive, or Timeout.InfiniteTimeSpan for none.");
        return value;
    }
}
