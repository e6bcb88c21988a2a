using System.Buffers.Text;

namespace NetServer.Http;

// The builder side: the application's SetBegin/SetHeader/SetBody calls append wire bytes to Cache.
internal sealed partial class HttpMessageStore
{
    // Room taken at the start of a built message, so its first appends do not grow the array step by step.
    private const int StartCapacity = 256;

    private bool _contentLengthSet;

    /// <summary>
    /// The application set "Transfer-Encoding: chunked" itself. <c>SetBody</c> then writes the body
    /// as one chunk and the last chunk instead of a Content-Length, so <see cref="Cache"/> is still
    /// one whole message; after <c>SetBodyLength</c> only the head is in <see cref="Cache"/> and the
    /// session must send every later body part chunk-encoded, ending with the last chunk.
    /// </summary>
    public bool IsChunked { get; private set; }

    public void StartRequest(string method, string url, string protocol)
    {
        HttpSyntax.CheckToken(method, nameof(method));
        HttpSyntax.CheckWord(url, nameof(url));
        HttpSyntax.CheckWord(protocol, nameof(protocol));
        Begin();
        _method = AppendText(method);
        _methodText.Set(method);
        Cache.Append((byte)' ');
        _target = AppendText(url);
        _targetText.Set(url);
        Cache.Append((byte)' ');
        _version = AppendText(protocol);
        _versionText.Set(protocol);
        AppendCrLf();
    }

    public void StartResponse(int status, string statusPhrase, string protocol)
    {
        if (status is < 100 or > 999)
            ThrowHelper.ThrowArgumentOutOfRange(nameof(status), "An HTTP status code has three digits (100 to 999).");
        HttpSyntax.CheckFieldValue(statusPhrase, nameof(statusPhrase));
        HttpSyntax.CheckWord(protocol, nameof(protocol));
        Begin();
        _version = AppendText(protocol);
        _versionText.Set(protocol);
        Cache.Append((byte)' ');
        Utf8Formatter.TryFormat(status, Cache.GetSpan(3), out _);
        Cache.Advance(3);
        Cache.Append((byte)' ');
        _reason = AppendText(statusPhrase);
        _reasonText.Set(statusPhrase);
        AppendCrLf();
        Status = status;
    }

    /// <summary>Starts an HTTP/1.1 response with the standard phrase: one copy of a cached status line.</summary>
    public void StartResponse(int status)
    {
        if (status is < 100 or > 999)
            ThrowHelper.ThrowArgumentOutOfRange(nameof(status), "An HTTP status code has three digits (100 to 999).");
        var phrase = HttpStatusPhrases.Get(status);
        Begin();
        Cache.Append(HttpStatusPhrases.Http11Line(status));
        _version = new HttpRange(0, HttpStatusPhrases.Http11.Length);
        _versionText.Set(HttpStatusPhrases.Http11);
        _reason = new HttpRange(_version.Length + 5, phrase.Length);
        _reasonText.Set(phrase);
        Status = status;
    }

    /// <summary>Appends a header field; a Content-Length or "Transfer-Encoding: chunked" of the application's takes over the body's framing.</summary>
    public void AppendHeader(string name, string value, string nameParameter, string valueParameter)
    {
        CheckHeadOpen();
        HttpSyntax.CheckToken(name, nameParameter);
        HttpSyntax.CheckFieldValue(value, valueParameter);

        var contentLength = -1L;
        var chunked = false;
        if (string.Equals(name, "Content-Length", StringComparison.OrdinalIgnoreCase))
        {
            if (!long.TryParse(value.Trim(), System.Globalization.NumberStyles.None, System.Globalization.CultureInfo.InvariantCulture, out contentLength))
                throw new ArgumentException("A Content-Length value is a decimal number of bytes.", valueParameter);
        }
        else if (string.Equals(name, "Transfer-Encoding", StringComparison.OrdinalIgnoreCase))
        {
            chunked = HttpAscii.EndsWithToken(value.AsSpan(), "chunked");
        }

        // Both, or two lengths, would let the peer frame the body in two ways (request smuggling).
        if ((contentLength >= 0 && (_contentLengthSet || IsChunked)) || (chunked && _contentLengthSet))
            ThrowHelper.ThrowInvalidOperation("The message already has its framing (a Content-Length or chunked coding).");

        var nameRange = AppendText(name);
        Cache.Append(": "u8);
        var valueRange = AppendText(value);
        AppendCrLf();
        _headers.Add(nameRange, valueRange, name, value);
        _cookiesFound = false;
        if (contentLength >= 0)
        {
            _contentLengthSet = true;
            _declaredLength = contentLength;
        }

        IsChunked |= chunked;
    }

    /// <summary>
    /// Adds a cookie to the Cookie header just written ("a=1; b=2"), or writes a Cookie header when
    /// the last header is another one. (NetCoreServer appended it after the header's line end.)
    /// </summary>
    public void AppendRequestCookie(string name, string value)
    {
        CheckHeadOpen();
        HttpSyntax.CheckCookiePart(name, nameof(name), name: true);
        HttpSyntax.CheckCookiePart(value, nameof(value));
        var last = _headers.Count - 1;
        if (last < 0 || !HttpAscii.EqualsIgnoreCase("Cookie", _headers.NameAt(last).Of(Source)))
        {
            AppendHeader("Cookie", string.Concat(name, "=", value), nameof(name), nameof(value));
            return;
        }

        // The last header's line ends the bytes: reopen it before its CRLF.
        var valueRange = _headers.ValueAt(last);
        Cache.Truncate(valueRange.Start + valueRange.Length);
        Cache.Append("; "u8);
        Cache.Append(name);
        Cache.Append((byte)'=');
        Cache.Append(value);
        _headers.SetValue(last, new HttpRange(valueRange.Start, Cache.Length - valueRange.Start));
        AppendCrLf();
        _cookiesFound = false;
    }

    /// <summary>Appends "Set-Cookie: name=value; Max-Age=..." with NetCoreServer's attribute order.</summary>
    public void AppendResponseCookie(string name, string value, int maxAge, string path, string domain, bool secure, bool strict, bool httpOnly)
    {
        CheckHeadOpen();
        HttpSyntax.CheckCookiePart(name, nameof(name), name: true);
        HttpSyntax.CheckCookiePart(value, nameof(value));
        HttpSyntax.CheckCookiePart(path, nameof(path));
        HttpSyntax.CheckCookiePart(domain, nameof(domain));

        var nameRange = AppendText("Set-Cookie");
        Cache.Append(": "u8);
        var start = Cache.Length;
        Cache.Append(name);
        Cache.Append((byte)'=');
        Cache.Append(value);
        Cache.Append("; Max-Age="u8);
        Utf8Formatter.TryFormat(maxAge, Cache.GetSpan(11), out var written);
        Cache.Advance(written);
        if (domain.Length > 0)
        {
            Cache.Append("; Domain="u8);
            Cache.Append(domain);
        }

        if (path.Length > 0)
        {
            Cache.Append("; Path="u8);
            Cache.Append(path);
        }

        if (secure)
            Cache.Append("; Secure"u8);
        if (strict)
            Cache.Append("; SameSite=Strict"u8);
        if (httpOnly)
            Cache.Append("; HttpOnly"u8);
        var valueRange = new HttpRange(start, Cache.Length - start);
        AppendCrLf();
        _headers.Add(nameRange, valueRange, "Set-Cookie", null);
        _cookiesFound = false;
    }

    /// <summary>Ends the head and appends <paramref name="body"/>; <paramref name="text"/> is its string when the application gave one.</summary>
    public void SetBody(ReadOnlySpan<byte> body, string? text)
    {
        StartBody(body.Length, firstChunk: true);
        _bodyStart = Cache.Length;
        Cache.Append(body);
        EndBody(body.Length, text);
    }

    /// <summary>Ends the head and appends <paramref name="body"/> encoded as UTF-8.</summary>
    public void SetBody(ReadOnlySpan<char> body, string? text)
    {
        var length = body.IsEmpty ? 0 : TextEncoding.ByteCount(body);
        StartBody(length, firstChunk: true);
        _bodyStart = Cache.Length;
        TextEncoding.Encode(body, Cache.GetSpan(length));
        Cache.Advance(length);
        EndBody(length, text);
    }

    /// <summary>Ends the head of a message without content and without a Content-Length (a GET such as a WebSocket upgrade, RFC 9110 8.6).</summary>
    public void EndBodylessHead()
    {
        CheckHeadOpen();
        AppendCrLf();
        _headLength = Cache.Length;
        _bodyStart = Cache.Length;
        EndBody(0, string.Empty);
    }

    /// <summary>Ends the head declaring a body of <paramref name="length"/> bytes that the application sends separately.</summary>
    public void SetBodyLength(int length)
    {
        if (length < 0)
            ThrowHelper.ThrowArgumentOutOfRange(nameof(length), "A body length cannot be negative.");
        StartBody(length, firstChunk: false);
        _bodyStart = Cache.Length;
        if (!_contentLengthSet)
            _declaredLength = IsChunked ? -1 : length;
    }

    private void Begin()
    {
        Reset();
        if (Cache.Capacity < StartCapacity)
            Cache.Reserve(StartCapacity);
    }

    private void CheckHeadOpen()
    {
        if (Cache.Length == 0)
            ThrowHelper.ThrowInvalidOperation("The message has no start line yet: call SetBegin (or a Make method) first.");
        if (_headLength != 0)
            ThrowHelper.ThrowInvalidOperation("The message's head is complete (SetBody or SetBodyLength was called): clear it or start again with SetBegin.");
    }

    /// <summary>Ends the head (with a Content-Length unless the application framed the body); a chunked body's first chunk line when asked.</summary>
    private void StartBody(int length, bool firstChunk)
    {
        CheckHeadOpen();
        // RFC 9110 8.6: no Content-Length in a 1xx or 204 response (they have no body; a 101's bytes after the head are the new protocol's).
        var bodyless = IsResponse && (Status is >= 100 and < 200 or 204) && length == 0;
        if (!IsChunked && !_contentLengthSet && !bodyless)
        {
            var nameRange = AppendText("Content-Length");
            Cache.Append(": "u8);
            var start = Cache.Length;
            Utf8Formatter.TryFormat(length, Cache.GetSpan(11), out var written);
            Cache.Advance(written);
            _headers.Add(nameRange, new HttpRange(start, written), "Content-Length", null);
            AppendCrLf();
        }

        AppendCrLf();
        _headLength = Cache.Length;
        if (IsChunked && firstChunk && length > 0)
        {
            Utf8Formatter.TryFormat(length, Cache.GetSpan(8), out var written, new System.Buffers.StandardFormat('X'));
            Cache.Advance(written);
            AppendCrLf();
        }
    }

    private void EndBody(int length, string? text)
    {
        _bodySize = length;
        if (!_contentLengthSet)
            _declaredLength = length;
        if (text is not null)
            _bodyText.Set(text);
        if (IsChunked)
        {
            if (length > 0)
                AppendCrLf();
            Cache.Append("0\r\n\r\n"u8);
        }
    }

    private HttpRange AppendText(string text)
    {
        var start = Cache.Length;
        Cache.Append(text);
        return new HttpRange(start, Cache.Length - start);
    }

    private void AppendCrLf() => Cache.Append("\r\n"u8);
}
