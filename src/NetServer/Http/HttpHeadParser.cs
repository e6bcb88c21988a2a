namespace NetServer.Http;

/// <summary>
/// The HTTP/1.1 head parser (RFC 9110, RFC 9112), pure and incremental: bytes in, an
/// <see cref="HttpHead"/> of ranges and the bytes consumed out; no socket, no clock, no allocation.
/// One per connection (keep it in a mutable field: it is a struct). It remembers how far it
/// scanned, so a head fed one byte at a time costs O(n), and it refuses a head over a limit as soon
/// as the bytes received prove it too large.
/// </summary>
/// <remarks>
/// <para>Each call gets all the unconsumed bytes, starting at the head's first byte; while the
/// status is <see cref="HttpParseStatus.NeedMoreData"/> nothing is consumed and the next call must
/// pass the same bytes and any new ones, with the same <see cref="HttpHead"/>. On
/// <see cref="HttpParseStatus.Complete"/> <c>consumed</c> is the head's length (empty lines before
/// the start line included): the head's ranges point into those bytes, which the caller copies
/// or keeps. On <see cref="HttpParseStatus.Error"/> <see cref="Error"/> says what to answer and the
/// connection should close after that answer. The parser starts a new head after either.</para>
/// <para>A message split anywhere gets the same outcome as in one piece: each line is checked
/// when its LF arrives (size first, then syntax, then count) and the header-wide rules (framing,
/// Host, Connection, Expect) when the empty line arrives.</para>
/// </remarks>
internal partial struct HttpHeadParser
{
    private const int Idle = 0;
    private const int StartLine = 1;
    private const int Fields = 2;

    private int _phase;
    private int _lineStart;  // start line phase: the first byte of the line in progress
    private int _scanned;    // start line phase: no LF before this offset
    private int _fieldLimit; // bytes the field lines may take
    private HttpFieldScanner _fields;

    /// <summary>Why the last <see cref="HttpParseStatus.Error"/> was returned: the status to answer and the reason.</summary>
    public HttpParseError Error { get; private set; }

    /// <summary>Drops a head in progress (the connection was reset or handed to another protocol).</summary>
    public void Reset() => _phase = Idle;

    /// <summary>Parses a request head: request line, header fields, the empty line.</summary>
    /// <param name="input">All unconsumed bytes, from the head's first byte.</param>
    /// <param name="limits">The line, header and body limits.</param>
    /// <param name="head">Filled with the head's ranges and framing; reset when a new head starts.</param>
    /// <param name="consumed">The head's length when complete, otherwise 0.</param>
    /// <remarks>
    /// A Content-Length over <see cref="HttpLimits.MaxRequestBodySize"/> is refused here (413).
    /// To decide a request's body limit later, pass limits whose MaxRequestBodySize is null and give
    /// the limit to <see cref="HttpBodyReader"/> instead, which checks it too.
    /// </remarks>
    public HttpParseStatus ParseRequestHead(ReadOnlySpan<byte> input, HttpLimits limits, HttpHead head, out int consumed) =>
        Parse(input, isRequest: true, requestWasHead: false, limits, head, out consumed);

    /// <summary>Parses a response head: status line, header fields, the empty line.</summary>
    /// <param name="input">All unconsumed bytes, from the head's first byte.</param>
    /// <param name="requestWasHead">The request was HEAD: the response has no body whatever its fields say.</param>
    /// <param name="limits">Gives <see cref="HttpLimits.MaxResponseHeadersTotalSize"/>.</param>
    /// <param name="head">Filled with the head's ranges and framing; reset when a new head starts.</param>
    /// <param name="consumed">The head's length when complete, otherwise 0.</param>
    /// <remarks>
    /// A 1xx head (other than 101) is an interim response: parse again for the final one. After a
    /// 101 the connection speaks another protocol (<see cref="HttpHead.IsUpgrade"/>).
    /// </remarks>
    public HttpParseStatus ParseResponseHead(ReadOnlySpan<byte> input, bool requestWasHead, HttpLimits limits, HttpHead head, out int consumed) =>
        Parse(input, isRequest: false, requestWasHead, limits, head, out consumed);

    /// <summary>
    /// The value of the first header field named <paramref name="name"/> (ASCII case-insensitive),
    /// trimmed of spaces and tabs, as a slice of <paramref name="headBytes"/>.
    /// </summary>
    public static bool TryGetHeader(HttpHead head, ReadOnlySpan<byte> headBytes, ReadOnlySpan<byte> name, out ReadOnlySpan<byte> value)
    {
        foreach (var field in head.Headers)
        {
            if (field.Name.Length == name.Length && HttpSyntax.EqualsIgnoreCase(field.Name.Of(headBytes), name))
            {
                value = field.Value.Of(headBytes);
                return true;
            }
        }

        value = default;
        return false;
    }

    private HttpParseStatus Parse(ReadOnlySpan<byte> input, bool isRequest, bool requestWasHead, HttpLimits limits, HttpHead head, out int consumed)
    {
        consumed = 0;
        if (_phase == Idle)
        {
            head.Reset();
            Error = default;
            _lineStart = 0;
            _scanned = 0;
            _phase = StartLine;
        }

        if (_phase == StartLine)
        {
            // A request line counts its CRLF and any empty lines before it; a response head counts
            // everything, the empty line at its end too (two bytes kept back for it here).
            var lineLimit = isRequest ? limits.MaxRequestLineSize : limits.MaxResponseHeadersTotalSize - 2;
            var tooLong = isRequest ? HttpParseError.RequestLineTooLong : HttpParseError.ResponseHeadTooLarge;
            var status = FindStartLine(input, lineLimit, tooLong, out var lineEnd, out var lineError);
            if (status == HttpParseStatus.NeedMoreData)
                return status;
            if (status == HttpParseStatus.Error)
                return Fail(lineError);
            var line = input.Slice(_lineStart, lineEnd - 1 - _lineStart);
            lineError = isRequest ? ParseRequestLine(line, _lineStart, head) : ParseStatusLine(line, _lineStart, head);
            if (!lineError.IsNone)
                return Fail(lineError);
            _fieldLimit = isRequest ? limits.MaxRequestHeadersTotalSize : lineLimit - (lineEnd + 1);
            _fields.Start(lineEnd + 1);
            _phase = Fields;
        }

        var fieldStatus = isRequest
            ? _fields.Parse(input, head, _fieldLimit, limits.MaxRequestHeaderCount, HttpParseError.HeadersTooLarge, HttpParseError.TooManyHeaders, out var end, out var error)
            : _fields.Parse(input, head, _fieldLimit, int.MaxValue, HttpParseError.ResponseHeadTooLarge, HttpParseError.ResponseHeadTooLarge, out end, out error);
        if (fieldStatus == HttpParseStatus.NeedMoreData)
            return fieldStatus;
        if (fieldStatus == HttpParseStatus.Error)
            return Fail(error);

        head.Length = end;
        var facts = FieldFacts.Collect(head, input.Slice(0, end));
        error = isRequest ? ApplyRequest(head, input, facts, limits) : ApplyResponse(head, facts, requestWasHead);
        if (!error.IsNone)
            return Fail(error);
        _phase = Idle;
        consumed = end;
        return HttpParseStatus.Complete;
    }

    private HttpParseStatus Fail(in HttpParseError error)
    {
        Error = error;
        _phase = Idle;
        return HttpParseStatus.Error;
    }

    /// <summary>
    /// Finds the LF of the start line, skipping empty lines before it (RFC 9112 2.2): Complete with
    /// its offset, or Error when the line is over <paramref name="limit"/> or ends in a bare LF.
    /// </summary>
    private HttpParseStatus FindStartLine(ReadOnlySpan<byte> input, int limit, in HttpParseError tooLong, out int lineEnd, out HttpParseError error)
    {
        error = default;
        while (true)
        {
            lineEnd = -1;
            var lf = input.Slice(_scanned).IndexOf(HttpSyntax.LF);
            if (lf < 0)
            {
                _scanned = input.Length;
                // Its LF is still to come, so the line will be longer than what is here.
                if (input.Length < limit)
                    return HttpParseStatus.NeedMoreData;
                error = tooLong;
                return HttpParseStatus.Error;
            }

            lineEnd = _scanned + lf;
            if (lineEnd + 1 > limit)
            {
                error = tooLong;
                return HttpParseStatus.Error;
            }

            if (lineEnd == _lineStart || input[lineEnd - 1] != HttpSyntax.CR)
            {
                error = HttpParseError.BareLineFeed;
                return HttpParseStatus.Error;
            }

            if (lineEnd - 1 > _lineStart)
                return HttpParseStatus.Complete;
            _lineStart = lineEnd + 1;
            _scanned = _lineStart;
        }
    }

    /// <summary><c>method SP request-target SP HTTP-version</c> (RFC 9112 3), CRLF already removed.</summary>
    private static HttpParseError ParseRequestLine(ReadOnlySpan<byte> line, int offset, HttpHead head)
    {
        var space = line.IndexOf(HttpSyntax.SP);
        if (space <= 0)
            return HttpParseError.InvalidRequestLine;
        var method = line.Slice(0, space);
        if (HttpSyntax.IndexOfNonToken(method) >= 0)
            return HttpParseError.InvalidMethod;

        var rest = line.Slice(space + 1);
        var space2 = rest.IndexOf(HttpSyntax.SP);
        if (space2 <= 0)
            return HttpParseError.InvalidRequestLine;
        var target = rest.Slice(0, space2);
        if (HttpSyntax.IndexOfBadTargetByte(target) >= 0 || !IsValidTargetForm(method, target))
            return HttpParseError.InvalidTarget;

        var version = rest.Slice(space2 + 1);
        var error = ParseVersion(version, out var minor);
        if (!error.IsNone)
            return error;

        head.Method = new HttpRange(offset, space);
        head.Target = new HttpRange(offset + space + 1, space2);
        head.Version = new HttpRange(offset + space + 1 + space2 + 1, version.Length);
        head.MinorVersion = minor;
        return default;
    }

    /// <summary>
    /// <c>HTTP-version SP status-code SP [ reason-phrase ]</c> (RFC 9112 4). A status line without
    /// the space before an empty reason is accepted: servers send it and nothing is ambiguous.
    /// </summary>
    private static HttpParseError ParseStatusLine(ReadOnlySpan<byte> line, int offset, HttpHead head)
    {
        if (line.Length < 12 || line[8] != HttpSyntax.SP || (line.Length > 12 && line[12] != HttpSyntax.SP))
            return HttpParseError.InvalidStatusLine;
        var version = line.Slice(0, 8);
        if (!IsVersionShape(version))
            return HttpParseError.InvalidStatusLine;
        if (version[5] != (byte)'1')
            return HttpParseError.UnsupportedVersion;

        var status = 0;
        for (var i = 9; i < 12; i++)
        {
            if (!HttpSyntax.IsDigit(line[i]))
                return HttpParseError.InvalidStatusLine;
            status = (status * 10) + (line[i] - '0');
        }

        if (status < 100)
            return HttpParseError.InvalidStatusLine;
        var reasonStart = line.Length > 12 ? 13 : 12;
        var reason = line.Slice(reasonStart);
        if (HttpSyntax.IndexOfBadValueByte(reason) >= 0)
            return HttpParseError.InvalidStatusLine;

        head.Version = new HttpRange(offset, 8);
        // A higher HTTP/1.x minor version is served as HTTP/1.1 (RFC 9110 6.2).
        head.MinorVersion = version[7] == (byte)'0' ? 0 : 1;
        head.Status = status;
        head.Reason = new HttpRange(offset + reasonStart, reason.Length);
        return default;
    }

    private static HttpParseError ParseVersion(ReadOnlySpan<byte> version, out int minor)
    {
        minor = 1;
        if (!IsVersionShape(version))
            return HttpParseError.InvalidVersion;
        // Like Kestrel, HTTP/1.2 or HTTP/2.0 on an HTTP/1 connection is 505, not "served as 1.1".
        if (version[5] != (byte)'1' || version[7] > (byte)'1')
            return HttpParseError.UnsupportedVersion;
        minor = version[7] - '0';
        return default;
    }

    /// <summary><c>"HTTP/" DIGIT "." DIGIT</c>, case-sensitive (RFC 9112 2.3).</summary>
    private static bool IsVersionShape(ReadOnlySpan<byte> version) =>
        version.Length == 8
        && version.Slice(0, 5).SequenceEqual("HTTP/"u8)
        && HttpSyntax.IsDigit(version[5])
        && version[6] == (byte)'.'
        && HttpSyntax.IsDigit(version[7]);

    /// <summary>
    /// The four request-target forms (RFC 9112 3.2): origin-form ("/path?query"), absolute-form
    /// ("scheme:..."), authority-form (host:port, CONNECT only) and asterisk-form ("*", OPTIONS only).
    /// </summary>
    private static bool IsValidTargetForm(ReadOnlySpan<byte> method, ReadOnlySpan<byte> target)
    {
        if (method.SequenceEqual("CONNECT"u8))
            return target[0] != (byte)'/' && HttpSyntax.IsValidHost(target);
        if (target[0] == (byte)'/')
            return true;
        if (target.Length == 1 && target[0] == (byte)'*')
            return method.SequenceEqual("OPTIONS"u8);

        // absolute-form: scheme = ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ), then ":".
        if ((uint)((target[0] | 0x20) - 'a') > 'z' - 'a')
            return false;
        for (var i = 1; i < target.Length; i++)
        {
            var b = target[i];
            if (b == (byte)':')
                return true;
            if ((uint)((b | 0x20) - 'a') > 'z' - 'a' && !HttpSyntax.IsDigit(b) && b != (byte)'+' && b != (byte)'-' && b != (byte)'.')
                return false;
        }

        return false;
    }
}
