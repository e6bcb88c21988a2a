using System.Diagnostics;

namespace NetServer.Http;

/// <summary>
/// The bytes of one HTTP message and where its parts lie: the mechanics <see cref="HttpRequest"/>
/// and <see cref="HttpResponse"/> share. A message is either built (the application's calls append
/// the wire bytes to <see cref="Cache"/>) or received (<see cref="LoadHead"/> copies a parsed head
/// into <see cref="Cache"/>, <see cref="AppendBody"/> adds the body after it). Either way
/// <see cref="Cache"/> holds the message as it goes on the wire, head then body, and every part is
/// a range into it whose string is made only when asked for (see <see cref="HttpText"/>).
/// </summary>
/// <remarks>
/// One store per message object, reused for every message of a connection: its arrays are rented
/// from a <see cref="BufferPool"/> and kept between messages up to <see cref="KeptCapacity"/>, so
/// a steady stream of requests and responses allocates nothing. Not thread-safe.
/// </remarks>
internal sealed partial class HttpMessageStore
{
    /// <summary>Capacity kept between messages; a larger array (after a large body) goes back to the pool.</summary>
    public const int KeptCapacity = 64 * 1024;

    private readonly BufferPool _pool;
    private readonly HttpFieldTable _headers = new();
    private HttpFieldTable? _cookies;
    private HttpFieldTable? _trailers;
    private Buffer? _trailerBytes;
    private bool _cookiesFound;

    // The start line. A request has a method, a target and a version; a response a version, a status and a reason.
    private HttpRange _method;
    private HttpRange _target;
    private HttpRange _version;
    private HttpRange _reason;
    private HttpText _methodText;
    private HttpText _targetText;
    private HttpText _versionText;
    private HttpText _reasonText;
    private HttpText _pathText;
    private HttpText _bodyText;

    private int _headLength;
    private int _bodyStart;
    private int _bodySize;
    private long _declaredLength = -1;
    private byte[]? _bodyBytes;

    public HttpMessageStore(BufferPool pool, bool isResponse)
    {
        _pool = pool;
        IsResponse = isResponse;
        Cache = new Buffer(pool);
    }

    /// <summary>The message's bytes as they go on the wire: the head, then the body.</summary>
    public Buffer Cache { get; }

    /// <summary>A response (cookies come from Set-Cookie) rather than a request (from Cookie).</summary>
    public bool IsResponse { get; }

    public bool IsErrorSet { get; set; }

    /// <summary>Response: the status code.</summary>
    public int Status { get; private set; }

    /// <summary>Bytes of the head up to and including its empty line; 0 while the head is still being built.</summary>
    public int HeadLength => _headLength;

    /// <summary>The head's bytes (empty while it is still being built).</summary>
    public ReadOnlySpan<byte> HeadBytes => new(Cache.Data, 0, _headLength);

    /// <summary>Received: how the body is delimited, from the parsed head.</summary>
    public HttpBodyFraming Framing { get; private set; }

    /// <summary>Received: the connection closes after this exchange.</summary>
    public bool CloseAfter { get; private set; }

    /// <summary>Received request: "Expect: 100-continue".</summary>
    public bool ExpectContinue { get; private set; }

    /// <summary>Received: an upgrade (WebSocket) was asked for or accepted.</summary>
    public bool IsUpgrade { get; private set; }

    /// <summary>Received: 1 for HTTP/1.1, 0 for HTTP/1.0.</summary>
    public int MinorVersion { get; private set; } = 1;

    /// <summary>The body's bytes in place (the decoded body of a chunked message).</summary>
    public Span<byte> Body => new(Cache.Data, _bodyStart, _bodySize);

    /// <summary>The declared length (Content-Length, <c>SetBodyLength</c>), else the bytes held.</summary>
    public long BodyLength => _declaredLength >= 0 ? _declaredLength : _bodySize;

    public int HeaderCount => _headers.Count;

    public int TrailerCount => _trailers?.Count ?? 0;

    public ReadOnlySpan<byte> MethodBytes => _method.Of(Source);

    public ReadOnlySpan<byte> TargetBytes => _target.Of(Source);

    // Ranges are checked against the array, not the size, so an application that empties Cache itself reads stale bytes instead of throwing.
    private ReadOnlySpan<byte> Source => Cache.Data;

    /// <summary>Forgets the message; storage above <see cref="KeptCapacity"/> goes back to the pool.</summary>
    public void Reset()
    {
        Cache.Clear();
        Cache.Trim(KeptCapacity);
        if (_trailerBytes is not null)
        {
            _trailerBytes.Clear();
            _trailerBytes.Trim(KeptCapacity);
        }

        _headers.Clear();
        _trailers?.Clear();
        _cookies?.Clear();
        _cookiesFound = false;
        _method = _target = _version = _reason = default;
        _methodText.Invalidate();
        _targetText.Invalidate();
        _versionText.Invalidate();
        _reasonText.Invalidate();
        _pathText.Invalidate();
        _bodyText.Invalidate();
        _bodyBytes = null;
        _headLength = _bodyStart = _bodySize = 0;
        _declaredLength = -1;
        _contentLengthSet = false;
        IsChunked = false;
        IsErrorSet = false;
        Status = 0;
        Framing = HttpBodyFraming.None;
        CloseAfter = ExpectContinue = IsUpgrade = false;
        MinorVersion = 1;
    }

    /// <summary>Forgets the message and gives all storage back to the pool (the connection is gone).</summary>
    public void Release()
    {
        Reset();
        Cache.Release();
        _trailerBytes?.Release();
        _headers.Forget();
        _trailers?.Forget();
        _cookies?.Forget();
        _methodText.Forget();
        _targetText.Forget();
        _versionText.Forget();
        _reasonText.Forget();
        _pathText.Forget();
        _bodyText.Forget();
    }

    /// <summary>
    /// Makes this the received message whose head is <paramref name="headBytes"/> (the start line
    /// to the empty line included) as <paramref name="head"/> describes it. The bytes are copied
    /// (the receive buffer moves on); nothing else is, and no string is made.
    /// </summary>
    public void LoadHead(ReadOnlySpan<byte> headBytes, HttpHead head)
    {
        Debug.Assert(head.Length == 0 || head.Length == headBytes.Length, "The head's ranges describe other bytes.");
        Reset();
        Cache.AppendBounded(headBytes, headBytes.Length);
        _method = head.Method;
        _target = head.Target;
        _version = head.Version;
        _reason = head.Reason;
        Status = head.Status;
        foreach (var field in head.Headers)
            _headers.Add(field.Name, field.Value);
        _headLength = _bodyStart = headBytes.Length;
        Framing = head.Framing;
        _declaredLength = head.Framing == HttpBodyFraming.ContentLength ? head.ContentLength : -1;
        CloseAfter = head.CloseAfter;
        ExpectContinue = head.ExpectContinue;
        IsUpgrade = head.IsUpgrade;
        MinorVersion = head.MinorVersion;
    }

    /// <summary>
    /// Adds received body bytes after the head. False, adding nothing, when the body would exceed
    /// <paramref name="limit"/> bytes; the storage grows by doubling but never past what the limit needs.
    /// </summary>
    public bool AppendBody(ReadOnlySpan<byte> data, long limit)
    {
        if (_headLength == 0)
            ThrowHelper.ThrowInvalidOperation("The message has no head to add a body to.");
        if ((long)_bodySize + data.Length > limit || (long)Cache.Length + data.Length > Buffer.MaxCapacity)
            return false;

        Cache.AppendBounded(data, (int)Math.Min(_bodyStart + limit, Buffer.MaxCapacity));
        _bodySize += data.Length;
        _bodyText.Invalidate();
        _bodyBytes = null;
        return true;
    }

    /// <summary>
    /// Keeps the trailer fields of a chunked message: <paramref name="fields"/> holds their lines and
    /// <paramref name="ranges"/> where each name and value lies, relative to its first byte.
    /// </summary>
    public void SetTrailers(ReadOnlySpan<byte> fields, ReadOnlySpan<HttpHeaderRange> ranges)
    {
        _trailerBytes ??= new Buffer(_pool);
        _trailers ??= new HttpFieldTable();
        _trailerBytes.Clear();
        _trailers.Clear();
        _trailerBytes.AppendBounded(fields, fields.Length);
        foreach (var field in ranges)
            _trailers.Add(field.Name, field.Value);
    }

    public string MethodText => HttpKnownNames.TryGetMethod(MethodBytes, out var known) ? known : _methodText.Get(MethodBytes);

    public string TargetText => _targetText.Get(TargetBytes);

    public string VersionText => _versionText.Get(_version.Of(Source));

    public string ReasonText => _reasonText.Get(_reason.Of(Source));

    public string BodyText => _bodyText.Get(Body);

    /// <summary>A copy of the body, made once per message.</summary>
    public byte[] BodyBytes => _bodyBytes ??= _bodySize == 0 ? [] : Body.ToArray();

    /// <summary>The header at <paramref name="index"/>, ("", "") past the last one (as NetCoreServer).</summary>
    public (string, string) Header(int index) =>
        (uint)index < (uint)_headers.Count ? (_headers.NameOf(index, Source), _headers.ValueOf(index, Source)) : (string.Empty, string.Empty);

    public (string, string) Trailer(int index) =>
        _trailers is not null && (uint)index < (uint)_trailers.Count
            ? (_trailers.NameOf(index, _trailerBytes!.Data), _trailers.ValueOf(index, _trailerBytes.Data))
            : (string.Empty, string.Empty);

    public bool TryGetHeader(string name, out string value)
    {
        if (name is null)
            ThrowHelper.ThrowArgumentNull(nameof(name));
        var index = _headers.IndexOf(name, Source);
        value = index < 0 ? string.Empty : _headers.ValueOf(index, Source);
        return index >= 0;
    }

    public bool TryGetHeader(ReadOnlySpan<byte> name, out ReadOnlySpan<byte> value)
    {
        var index = _headers.IndexOf(name, Source);
        value = index < 0 ? default : _headers.ValueAt(index).Of(Source);
        return index >= 0;
    }

    /// <summary>
    /// The values of a field that may be repeated, one per call: start with <paramref name="next"/>
    /// at 0 and call until it returns false (for list fields sent on several lines, RFC 9110 5.3).
    /// </summary>
    public bool TryGetNextHeader(ReadOnlySpan<byte> name, ref int next, out ReadOnlySpan<byte> value)
    {
        var index = next < _headers.Count ? _headers.IndexOf(name, Source, next) : -1;
        value = index < 0 ? default : _headers.ValueAt(index).Of(Source);
        next = index < 0 ? _headers.Count : index + 1;
        return index >= 0;
    }

    public int CookieCount => FindCookies().Count;

    public (string, string) Cookie(int index)
    {
        var cookies = FindCookies();
        return (uint)index < (uint)cookies.Count ? (cookies.NameOf(index, Source), cookies.ValueOf(index, Source)) : (string.Empty, string.Empty);
    }

    /// <summary>The target's path, percent-decoded (see <see cref="HttpUrl"/>); false when its encoding is invalid.</summary>
    public bool TryGetPath(out string path)
    {
        var target = TargetBytes;
        if (target.IsEmpty)
        {
            path = string.Empty;
            return false;
        }

        HttpUrl.Split(target, out var range, out _);
        if (range.IsEmpty)
        {
            path = "/";
            return true;
        }

        return HttpUrl.TryDecode(range.Of(target), plusIsSpace: false, ref _pathText, out path);
    }

    public bool TryGetQuery(string name, out string value)
    {
        var target = TargetBytes;
        HttpUrl.Split(target, out _, out var query);
        return HttpUrl.TryGetQuery(query.Of(target), name, out value);
    }

    private HttpFieldTable FindCookies()
    {
        _cookies ??= new HttpFieldTable();
        if (!_cookiesFound)
        {
            _cookies.Clear();
            var name = IsResponse ? "Set-Cookie" : "Cookie";
            for (var i = _headers.IndexOf(name, Source); i >= 0; i = _headers.IndexOf(name, Source, i + 1))
                HttpCookies.Parse(Source, _headers.ValueAt(i), IsResponse, _cookies);
            _cookiesFound = true;
        }

        return _cookies;
    }
}
