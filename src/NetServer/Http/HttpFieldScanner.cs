namespace NetServer.Http;

/// <summary>What an incremental HTTP parse found.</summary>
internal enum HttpParseStatus
{
    /// <summary>The message head (or field section) is not whole yet: call again with more bytes.</summary>
    NeedMoreData,

    /// <summary>The head is whole and valid.</summary>
    Complete,

    /// <summary>The bytes break a rule: the parser's <c>Error</c> says which and what to answer.</summary>
    Error,
}

/// <summary>
/// The incremental parse of a field section: header field lines (or trailer field lines) up to the
/// empty line that ends them, each <c>name ":" OWS value OWS CRLF</c> (RFC 9112 section 5). Shared
/// by the head parser and the chunked body reader. It remembers how far it looked, so feeding the
/// section one byte at a time costs O(n) in all, and it refuses a section over its byte limit as
/// soon as the bytes received prove it too large, not only when its end arrives.
/// </summary>
/// <remarks>
/// Every call gets all the section's bytes received so far from the same first byte; offsets (and
/// the ranges added to the target) are relative to that byte. Each line is checked in a fixed order
/// (size, syntax, count), so a message split anywhere gets the same outcome as in one piece.
/// </remarks>
internal struct HttpFieldScanner
{
    private int _lineStart; // the first line not parsed yet
    private int _scanned;   // no LF before this offset (from _lineStart)
    private int _bytes;     // bytes of the whole field lines so far, CRLFs included
    private int _count;

    /// <summary>Starts a section whose first line begins at <paramref name="offset"/>.</summary>
    public void Start(int offset)
    {
        _lineStart = offset;
        _scanned = offset;
        _bytes = 0;
        _count = 0;
    }

    /// <summary>Bytes of the whole field lines parsed so far.</summary>
    public readonly int Bytes => _bytes;

    /// <summary>
    /// Parses the field lines that arrived, adding each to <paramref name="fields"/>.
    /// </summary>
    /// <param name="input">The bytes from the same first byte as every earlier call.</param>
    /// <param name="fields">Where the field ranges go (relative to <paramref name="input"/>'s first byte), or null to only check them.</param>
    /// <param name="maxBytes">The most bytes of field lines (CRLFs included, the empty line not).</param>
    /// <param name="maxCount">The most field lines.</param>
    /// <param name="tooLarge">The error when <paramref name="maxBytes"/> is crossed.</param>
    /// <param name="tooMany">The error when <paramref name="maxCount"/> is crossed.</param>
    /// <param name="end">When complete: the offset just past the empty line.</param>
    /// <param name="error">When the status is <see cref="HttpParseStatus.Error"/>: which rule broke.</param>
    public HttpParseStatus Parse(
        ReadOnlySpan<byte> input, HttpHead? fields, int maxBytes, int maxCount,
        in HttpParseError tooLarge, in HttpParseError tooMany, out int end, out HttpParseError error)
    {
        end = 0;
        error = default;
        while (true)
        {
            // A line that arrives whole takes two scans; anything else (a line in pieces, an error
            // to name, the empty line) takes the general path below.
            if (_scanned == _lineStart && TryParseWholeLine(input, fields, maxBytes, maxCount))
                continue;

            var lf = input.Slice(_scanned).IndexOf(HttpSyntax.LF);
            if (lf < 0)
            {
                _scanned = input.Length;
                // The line in progress ends with at least one more byte (its LF), unless it is the
                // empty line ("" or "\r" so far), which is not counted.
                var partial = input.Length - _lineStart;
                var least = partial == 0 || (partial == 1 && input[_lineStart] == HttpSyntax.CR) ? 0 : partial + 1;
                if ((long)_bytes + least > maxBytes)
                {
                    error = tooLarge;
                    return HttpParseStatus.Error;
                }

                return HttpParseStatus.NeedMoreData;
            }

            var lineEnd = _scanned + lf; // the LF
            var lineLength = lineEnd + 1 - _lineStart;
            if (lineLength == 2 && input[_lineStart] == HttpSyntax.CR)
            {
                end = lineEnd + 1;
                return HttpParseStatus.Complete;
            }

            if ((long)_bytes + lineLength > maxBytes)
            {
                error = tooLarge;
                return HttpParseStatus.Error;
            }

            if (!TryParseLine(input, _lineStart, lineEnd, out var name, out var value, out error))
                return HttpParseStatus.Error;
            if (_count >= maxCount)
            {
                error = tooMany;
                return HttpParseStatus.Error;
            }

            _count++;
            fields?.AddHeader(name, value);
            _bytes += lineLength;
            _lineStart = lineEnd + 1;
            _scanned = _lineStart;
        }
    }

    /// <summary>
    /// The common case in two vectorized scans: the name's tchars up to the colon, then the
    /// value's allowed bytes up to the CR of the line's CRLF. False, having changed nothing, when
    /// the line is not a whole valid field line within the limits: the general path then finds
    /// its end first and reports the same outcome a split line would get.
    /// </summary>
    private bool TryParseWholeLine(ReadOnlySpan<byte> input, HttpHead? fields, int maxBytes, int maxCount)
    {
        var line = input.Slice(_lineStart);
        var colon = HttpSyntax.IndexOfNonToken(line);
        if (colon <= 0 || line[colon] != (byte)':')
            return false;
        var valueStart = colon + 1;
        while (valueStart < line.Length && HttpSyntax.IsWhitespace(line[valueStart]))
            valueStart++;
        var cr = HttpSyntax.IndexOfBadValueByte(line.Slice(valueStart));
        if (cr < 0)
            return false;
        cr += valueStart;
        if (line[cr] != HttpSyntax.CR || cr + 1 == line.Length || line[cr + 1] != HttpSyntax.LF)
            return false;
        var lineLength = cr + 2;
        if ((long)_bytes + lineLength > maxBytes || _count >= maxCount)
            return false;

        var valueEnd = cr;
        while (valueEnd > valueStart && HttpSyntax.IsWhitespace(line[valueEnd - 1]))
            valueEnd--;
        _count++;
        fields?.AddHeader(new HttpRange(_lineStart, colon), new HttpRange(_lineStart + valueStart, valueEnd - valueStart));
        _bytes += lineLength;
        _lineStart += lineLength;
        _scanned = _lineStart;
        return true;
    }

    /// <summary>
    /// Checks one field line (<paramref name="start"/> to the LF at <paramref name="lf"/>) and finds
    /// its name and its value trimmed of OWS.
    /// </summary>
    private static bool TryParseLine(ReadOnlySpan<byte> input, int start, int lf, out HttpRange name, out HttpRange value, out HttpParseError error)
    {
        name = default;
        value = default;
        if (lf == start || input[lf - 1] != HttpSyntax.CR)
        {
            error = HttpParseError.BareLineFeed;
            return false;
        }

        var line = input.Slice(start, lf - 1 - start);
        // Whitespace first: obs-fold, or whitespace between the start line and the first field
        // (RFC 9112 2.2 and 5.2 allow rejecting both; accepting them is a smuggling vector).
        if (HttpSyntax.IsWhitespace(line[0]))
        {
            error = HttpParseError.LeadingWhitespace;
            return false;
        }

        var colon = line.IndexOf((byte)':');
        if (colon <= 0)
        {
            error = colon < 0 ? HttpParseError.MissingColon : HttpParseError.EmptyHeaderName;
            return false;
        }

        var fieldName = line.Slice(0, colon);
        if (HttpSyntax.IndexOfNonToken(fieldName) >= 0)
        {
            error = HttpSyntax.IsWhitespace(fieldName[colon - 1]) ? HttpParseError.WhitespaceBeforeColon : HttpParseError.InvalidHeaderName;
            return false;
        }

        var valueStart = colon + 1;
        var valueEnd = line.Length;
        while (valueStart < valueEnd && HttpSyntax.IsWhitespace(line[valueStart]))
            valueStart++;
        while (valueEnd > valueStart && HttpSyntax.IsWhitespace(line[valueEnd - 1]))
            valueEnd--;
        if (HttpSyntax.IndexOfBadValueByte(line.Slice(valueStart, valueEnd - valueStart)) >= 0)
        {
            error = HttpParseError.InvalidHeaderValue;
            return false;
        }

        name = new HttpRange(start, colon);
        value = new HttpRange(start + valueStart, valueEnd - valueStart);
        error = default;
        return true;
    }
}
