namespace NetServer.Http;

/// <summary>What <see cref="HttpBodyReader.Read"/> found.</summary>
internal enum HttpBodyStatus
{
    /// <summary>No body bytes in the input yet: call again with more (framing bytes may have been consumed).</summary>
    NeedMoreData,

    /// <summary>Body bytes: the <c>data</c> out parameter, a slice of the input.</summary>
    Data,

    /// <summary>The body is over; for a chunked body <c>data</c> holds the trailer field lines.</summary>
    Done,

    /// <summary>The body breaks a rule: <see cref="HttpBodyReader.Error"/> says which and what to answer.</summary>
    Error,
}

/// <summary>
/// Reads a message body after its head, pure and incremental: for Content-Length, chunked (RFC
/// 9112 section 7.1) and until-close framings it hands out the body's bytes as slices of the input
/// (no copy) and consumes the framing around them. One per message; keep it in a mutable field.
/// </summary>
/// <remarks>
/// <para>Each call gets the unconsumed bytes after what earlier calls consumed. One call returns at
/// most one slice (at most one chunk's worth); call again with the rest. After the last body byte
/// the next call returns <see cref="HttpBodyStatus.Done"/>, consuming what ends the body (the last
/// chunk and the trailer section) and nothing after it: the next request starts there. An
/// until-close body never returns Done: the connection's end is its end. A Content-Length or chunked
/// body cut short by the connection's end is an incomplete message (not this type's decision).</para>
/// <para>Trailers: the trailer section is not consumed until it is whole (it stays in the caller's
/// buffer, bounded by <see cref="HttpLimits.MaxRequestHeadersTotalSize"/> and
/// <see cref="HttpLimits.MaxRequestHeaderCount"/>, with the head's field rules). On Done,
/// <c>data</c> holds the trailer field lines (without the empty line that ends them) and the
/// trailers <see cref="HttpHead"/> given to the constructor holds their ranges, relative to
/// <c>data</c>'s first byte; copy them before consuming. Trailer fields are never merged into the
/// head, so framing fields among them (Content-Length, Transfer-Encoding) change nothing.</para>
/// <para>Chunk extensions are checked (no control bytes, CRLF at the end of the line) and skipped;
/// a chunk size line is at most <see cref="HttpLimits.MaxRequestLineSize"/> bytes and all the
/// extensions of a body together at most <see cref="HttpLimits.MaxRequestHeadersTotalSize"/>, so
/// a peer cannot make the server read unbounded framing for a small body.</para>
/// </remarks>
internal struct HttpBodyReader
{
    private State _state;
    private long _remaining;      // Content-Length: body bytes left; chunked: bytes left of this chunk
    private long _received;       // body bytes announced so far (chunked: the sum of chunk sizes)
    private readonly long _maxBodySize; // -1: no limit
    private long _chunkSize;
    private int _sizeDigits;
    private int _lineBytes;       // bytes of the chunk size line so far
    private int _extensionBytes;  // bytes of chunk extensions in the whole body
    private readonly int _maxLine;
    private readonly int _maxFieldBytes;
    private readonly int _maxFieldCount;
    private readonly HttpHead? _trailers;
    private HttpFieldScanner _trailerScanner;

    /// <summary>Starts reading a body.</summary>
    /// <param name="framing">How the body is delimited (<see cref="HttpHead.Framing"/>).</param>
    /// <param name="contentLength">The length for <see cref="HttpBodyFraming.ContentLength"/>.</param>
    /// <param name="maxBodySize">The largest body accepted, or null for none: a longer Content-Length fails at the first read, a chunked body once its chunks add up to more (413).</param>
    /// <param name="limits">The chunk line, extension and trailer bounds.</param>
    /// <param name="trailers">Receives the trailer field ranges of a chunked body (reset here), or null to check and drop them.</param>
    public HttpBodyReader(HttpBodyFraming framing, long contentLength, long? maxBodySize, HttpLimits limits, HttpHead? trailers)
    {
        this = default;
        _maxBodySize = maxBodySize ?? -1;
        _maxLine = limits.MaxRequestLineSize;
        _maxFieldBytes = limits.MaxRequestHeadersTotalSize;
        _maxFieldCount = limits.MaxRequestHeaderCount;
        _trailers = trailers;
        trailers?.Reset();
        switch (framing)
        {
            case HttpBodyFraming.ContentLength when _maxBodySize >= 0 && contentLength > _maxBodySize:
                Error = HttpParseError.BodyTooLarge;
                _state = State.Failed;
                break;
            case HttpBodyFraming.ContentLength:
                _remaining = contentLength;
                _received = contentLength;
                _state = contentLength > 0 ? State.Length : State.Done;
                break;
            case HttpBodyFraming.Chunked:
                _state = State.Size;
                break;
            case HttpBodyFraming.UntilClose:
                _state = State.UntilClose;
                break;
            default:
                _state = State.Done;
                break;
        }
    }

    private enum State : byte
    {
        Done,
        Failed,
        Length,
        UntilClose,
        Size,           // chunk size digits
        SizeWhitespace, // BWS after the size, before ";"
        Extension,      // chunk extensions, up to CR
        SizeLf,         // the LF of the size line
        Data,
        DataCr,         // the CRLF after chunk data
        DataLf,
        Trailers,
    }

    /// <summary>Why the last <see cref="HttpBodyStatus.Error"/> was returned: the status to answer and the reason.</summary>
    public HttpParseError Error { get; private set; }

    /// <summary>The body is over (the last call returned, or the next returns, <see cref="HttpBodyStatus.Done"/>).</summary>
    public readonly bool IsDone => _state == State.Done;

    /// <summary>Reads the next body bytes from <paramref name="input"/>.</summary>
    /// <param name="input">The unconsumed bytes after the head and what earlier calls consumed.</param>
    /// <param name="data">Body bytes (a slice of <paramref name="input"/>) on Data; the trailer field lines on Done.</param>
    /// <param name="consumed">Bytes of <paramref name="input"/> used up, whatever the status.</param>
    public HttpBodyStatus Read(ReadOnlySpan<byte> input, out ReadOnlySpan<byte> data, out int consumed)
    {
        data = default;
        consumed = 0;
        switch (_state)
        {
            case State.Done:
                return HttpBodyStatus.Done;
            case State.Failed:
                return HttpBodyStatus.Error;
            case State.Length:
                if (input.IsEmpty)
                    return HttpBodyStatus.NeedMoreData;
                var take = (int)Math.Min(input.Length, _remaining);
                data = input.Slice(0, take);
                consumed = take;
                _remaining -= take;
                if (_remaining == 0)
                    _state = State.Done;
                return HttpBodyStatus.Data;
            case State.UntilClose:
                if (input.IsEmpty)
                    return HttpBodyStatus.NeedMoreData;
                data = input;
                consumed = input.Length;
                return HttpBodyStatus.Data;
            default:
                return ReadChunked(input, out data, out consumed);
        }
    }

    private HttpBodyStatus ReadChunked(ReadOnlySpan<byte> input, out ReadOnlySpan<byte> data, out int consumed)
    {
        data = default;
        var position = 0;
        while (true)
        {
            if (_state == State.Data)
            {
                consumed = position;
                if (position == input.Length)
                    return HttpBodyStatus.NeedMoreData;
                var take = (int)Math.Min(input.Length - position, _remaining);
                data = input.Slice(position, take);
                consumed += take;
                _remaining -= take;
                if (_remaining == 0)
                    _state = State.DataCr;
                return HttpBodyStatus.Data;
            }

            if (_state == State.Trailers)
                return ReadTrailers(input, position, out data, out consumed);

            if (_state == State.Extension)
            {
                // Skip to the first byte an extension cannot hold; CR ends the line.
                var rest = input.Slice(position);
                var stop = HttpSyntax.IndexOfBadValueByte(rest);
                var length = stop < 0 ? rest.Length : stop;
                _extensionBytes += length;
                _lineBytes += length;
                position += length;
                if (_extensionBytes > _maxFieldBytes)
                    return Fail(HttpParseError.ChunkExtensionsTooLarge, position, out consumed);
                if (_lineBytes > _maxLine)
                    return Fail(HttpParseError.ChunkLineTooLong, position, out consumed);
                if (stop < 0)
                {
                    consumed = position;
                    return HttpBodyStatus.NeedMoreData;
                }
            }

            if (position == input.Length)
            {
                consumed = position;
                return HttpBodyStatus.NeedMoreData;
            }

            var b = input[position++];
            var error = Step(b);
            if (!error.IsNone)
                return Fail(error, position, out consumed);
        }
    }

    /// <summary>One byte of chunk framing (size line, or the CRLF after chunk data).</summary>
    private HttpParseError Step(byte b)
    {
        switch (_state)
        {
            case State.DataCr:
                if (b != HttpSyntax.CR)
                    return HttpParseError.MissingChunkTerminator;
                _state = State.DataLf;
                return default;
            case State.DataLf:
                if (b != HttpSyntax.LF)
                    return HttpParseError.MissingChunkTerminator;
                _state = State.Size;
                _chunkSize = 0;
                _sizeDigits = 0;
                _lineBytes = 0;
                return default;
            case State.SizeLf:
                return b == HttpSyntax.LF ? EndSizeLine() : HttpParseError.InvalidChunkLineEnd;
        }

        if (++_lineBytes > _maxLine)
            return HttpParseError.ChunkLineTooLong;
        if (_state == State.Size)
        {
            var digit = HttpSyntax.HexValue(b);
            if (digit >= 0)
            {
                if (_chunkSize > long.MaxValue >> 4)
                    return HttpParseError.ChunkSizeOverflow;
                _chunkSize = (_chunkSize << 4) | (uint)digit;
                _sizeDigits++;
                return default;
            }

            if (_sizeDigits == 0)
                return HttpParseError.InvalidChunkSize;
        }

        // After the digits: the CR that ends the line, or BWS then ";" and extensions (the
        // extension state gets here only with the byte that stopped its skip).
        if (b == HttpSyntax.CR && _state != State.SizeWhitespace)
        {
            _state = State.SizeLf;
            return default;
        }

        if (_state == State.Extension)
            return HttpParseError.InvalidChunkExtension;
        if (b == (byte)';')
            _state = State.Extension;
        else if (HttpSyntax.IsWhitespace(b))
            _state = State.SizeWhitespace;
        else
            return b == HttpSyntax.LF ? HttpParseError.BareLineFeed : HttpParseError.InvalidChunkSize;
        return default;
    }

    private HttpParseError EndSizeLine()
    {
        if (_chunkSize == 0)
        {
            _state = State.Trailers;
            _trailerScanner.Start(0);
            return default;
        }

        if (_maxBodySize >= 0 && _chunkSize > _maxBodySize - _received)
            return HttpParseError.BodyTooLarge;
        _received += _chunkSize;
        _remaining = _chunkSize;
        _state = State.Data;
        return default;
    }

    private HttpBodyStatus ReadTrailers(ReadOnlySpan<byte> input, int position, out ReadOnlySpan<byte> data, out int consumed)
    {
        data = default;
        var section = input.Slice(position);
        var status = _trailerScanner.Parse(
            section, _trailers, _maxFieldBytes, _maxFieldCount,
            HttpParseError.TrailersTooLarge, HttpParseError.TooManyTrailers, out var end, out var error);
        if (status == HttpParseStatus.Error)
            return Fail(error, position, out consumed);
        consumed = position;
        if (status == HttpParseStatus.NeedMoreData)
            return HttpBodyStatus.NeedMoreData;
        data = section.Slice(0, end - 2);
        consumed += end;
        _state = State.Done;
        return HttpBodyStatus.Done;
    }

    private HttpBodyStatus Fail(in HttpParseError error, int position, out int consumed)
    {
        Error = error;
        _state = State.Failed;
        consumed = position;
        return HttpBodyStatus.Error;
    }
}
