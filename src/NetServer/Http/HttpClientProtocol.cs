namespace NetServer.Http;

/// <summary>What <see cref="HttpClientProtocol"/> calls on the client that hosts it (<see cref="HttpClient"/> or <c>HttpsClient</c>).</summary>
internal interface IHttpClientHandler
{
    void ReceivedResponseHeader(HttpResponse response);

    void ReceivedResponse(HttpResponse response);

    void ReceivedResponseError(HttpResponse response, string error);

    /// <summary>The connection ended (after any response it completed).</summary>
    void Closed();
}

/// <summary>Takes the answer to a request that asked to switch protocols (a WebSocket upgrade) before the client's hooks.</summary>
internal interface IHttpClientUpgrade
{
    /// <summary>True when <paramref name="response"/> was the awaited upgrade answer (accepted or not).</summary>
    bool ReceivedResponse(HttpResponse response);

    /// <summary>True when the malformed answer was the awaited upgrade answer.</summary>
    bool ReceivedResponseError(string error);

    /// <summary>The connection ended.</summary>
    void Closed();
}

/// <summary>
/// The client side of HTTP/1.1 over any stream client (TCP, TLS, Unix sockets): sends requests and
/// parses their responses from the retained receive buffer, in order (requests may be pipelined),
/// with Content-Length, chunked (trailers kept) and until-close bodies, interim 1xx responses
/// skipped, and no body for HEAD, 204 and 304. A malformed response closes the connection.
/// </summary>
internal sealed class HttpClientProtocol : StreamProtocol
{
    internal override string DiagnosticName => "HTTP";

    // At most this many requests may wait for their responses on one connection.
    private const int MaxOutstanding = 64;

    private readonly IHttpClientHandler _handler;
    private readonly HttpHead _head = new();
    private readonly HttpHead _trailers = new();
    private readonly bool[] _headRequests = new bool[MaxOutstanding]; // a ring: was each outstanding request HEAD
    private readonly object _sync = new();
    private HttpHeadParser _parser;
    private HttpBodyReader _body;
    private int _first;
    private int _outstanding;
    private bool _inBody;
    private bool _chunkedRequest; // the request sent last has a chunked body still being sent
    private byte[]? _hostField;   // "Host: endpoint" for requests built without one

    public HttpClientProtocol(IHttpClientHandler handler, HttpLimits limits)
    {
        _handler = handler;
        Limits = limits;
        Response = new HttpResponse(BufferPool.Shared);
    }

    /// <summary>The limits responses are held to (head size, body size: <see cref="HttpLimits.MaxResponseHeadersTotalSize"/>, <see cref="HttpLimits.MaxRequestBodySize"/> is not applied to responses).</summary>
    public HttpLimits Limits { get; }

    /// <summary>The response being received (reused for every response of the connection).</summary>
    public HttpResponse Response { get; }

    /// <summary>The largest response body kept whole in <see cref="Response"/> (default 64 MiB).</summary>
    public long MaxResponseBodySize { get; set; } = 64L * 1024 * 1024;

    /// <summary>Requests sent whose responses have not arrived.</summary>
    public int Outstanding => Volatile.Read(ref _outstanding);

    /// <summary>Sends <paramref name="request"/> (its <see cref="HttpMessage.Cache"/>); false when not connected, refused, or too many requests wait.</summary>
    public long SendRequest(HttpRequest request, bool blocking, string? traceParent = null)
    {
        if (request is null)
            ThrowHelper.ThrowArgumentNull(nameof(request));
        var connection = Connection;
        if (connection is null)
            return 0;

        var store = request.Store;
        lock (_sync)
        {
            if (_outstanding == MaxOutstanding)
                return 0;
            _headRequests[(_first + _outstanding) % MaxOutstanding] = store.MethodBytes.SequenceEqual("HEAD"u8);
            _outstanding++;
        }

        _chunkedRequest = store.IsChunked && store.HeadLength == request.Cache.Size;
        var cache = request.Cache;
        var bytes = new ReadOnlySpan<byte>(cache.Data, 0, (int)cache.Size);
        var addHost = !store.TryGetHeader("Host"u8, out _);
        if ((addHost || traceParent is not null) && bytes.IndexOf("\r\n"u8) is var lineEnd and >= 0)
        {
            // HTTP/1.1 requires Host (RFC 9112 3.2) and NetCoreServer's request builders never add
            // one: it goes in after the request line, naming the endpoint the client connects to.
            // So does the trace context of the request's activity (W3C Trace Context), when traced.
            using var writer = connection.StartSend(bytes.Length + 160);
            writer.Write(bytes.Slice(0, lineEnd + 2));
            if (addHost)
                writer.Write(HostField(connection));
            if (traceParent is not null)
                WriteField(writer, "traceparent: "u8, traceParent);
            writer.Write(bytes.Slice(lineEnd + 2));
            var length = writer.WrittenCount;
            return writer.Commit() ? length : 0; // queued also for a blocking send: the engine bounds the queue
        }

        return blocking ? connection.Send(bytes) : (connection.SendAsync(bytes) ? bytes.Length : 0);
    }

    private static void WriteField(SendWriter writer, ReadOnlySpan<byte> name, string value)
    {
        writer.Write(name);
        var span = writer.GetSpan(value.Length * 3 + 2);
        var length = TextEncoding.Encode(value.AsSpan(), span);
        "\r\n"u8.CopyTo(span.Slice(length));
        writer.Advance(length + 2);
    }

    private byte[] HostField(StreamConnection connection)
    {
        if (_hostField is { } known)
            return known;
        var host = (connection as StreamClient)?.Endpoint switch
        {
            DnsEndPoint dns => $"{dns.Host}:{dns.Port}",
            IPEndPoint { AddressFamily: AddressFamily.InterNetworkV6 } ip => $"[{ip.Address}]:{ip.Port}",
            IPEndPoint ip => $"{ip.Address}:{ip.Port}",
            _ => "localhost",
        };
        return _hostField = TextEncoding.Utf8.GetBytes($"Host: {host}\r\n");
    }

    /// <summary>Sends body bytes of a request whose head went out alone; with chunked coding each call is one chunk.</summary>
    public long SendBody(ReadOnlySpan<byte> body, bool blocking)
    {
        var connection = Connection;
        if (connection is null)
            return 0;
        if (!_chunkedRequest)
            return blocking ? connection.Send(body) : (connection.SendAsync(body) ? body.Length : 0);
        if (body.IsEmpty)
            return 0;
        using var writer = connection.StartSend(body.Length + 16);
        HttpChunks.WriteChunk(writer, body);
        return writer.Commit() ? body.Length : 0;
    }

    /// <summary>Ends a chunked request body (the last chunk).</summary>
    public bool EndBody()
    {
        if (!_chunkedRequest || Connection is not { } connection)
            return false;
        _chunkedRequest = false;
        return connection.SendAsync(HttpChunks.LastChunk);
    }

    protected internal override int OnReceived(ReadOnlySpan<byte> data)
    {
        var connection = Connection;
        if (connection is null)
            return data.Length;
        var consumed = 0;
        while (consumed < data.Length || _inBody)
        {
            if (!_inBody)
            {
                if (!ReadHead(connection, data, ref consumed))
                    return consumed;
            }
            else if (!ReadBody(connection, data, ref consumed))
            {
                return consumed;
            }
        }

        return consumed;
    }

    private bool ReadHead(StreamConnection connection, ReadOnlySpan<byte> data, ref int consumed)
    {
        var input = data.Slice(consumed);
        bool wasHead;
        lock (_sync)
            wasHead = _outstanding > 0 && _headRequests[_first];
        var status = _parser.ParseResponseHead(input, wasHead, Limits, _head, out var used);
        if (status == HttpParseStatus.NeedMoreData)
            return false;
        if (status == HttpParseStatus.Error)
        {
            Fail(connection, _parser.Error.Reason!);
            consumed = data.Length;
            return false;
        }

        consumed += used;
        if (_head.Status is >= 100 and < 200 && _head.Status != 101)
            return true; // interim (100 Continue, 103 Early Hints): the final response follows

        Response.LoadHead(input.Slice(0, used), _head);
        _handler.ReceivedResponseHeader(Response);
        _body = new HttpBodyReader(_head.Framing, _head.ContentLength, MaxResponseBodySize, Limits, _trailers);
        if (_head.Framing == HttpBodyFraming.None)
            return Deliver(connection);
        _inBody = true;
        return true;
    }

    private bool ReadBody(StreamConnection connection, ReadOnlySpan<byte> data, ref int consumed)
    {
        while (true)
        {
            var status = _body.Read(data.Slice(consumed), out var part, out var used);
            consumed += used;
            switch (status)
            {
                case HttpBodyStatus.NeedMoreData:
                    return false;
                case HttpBodyStatus.Error:
                    Fail(connection, _body.Error.Reason!);
                    consumed = data.Length;
                    return false;
                case HttpBodyStatus.Data:
                    if (!Response.AppendBody(part, MaxResponseBodySize))
                    {
                        Fail(connection, $"The response body is larger than the limit ({MaxResponseBodySize} bytes).");
                        consumed = data.Length;
                        return false;
                    }

                    break;
                default:
                    if (!part.IsEmpty)
                        Response.SetTrailers(part, _trailers.Headers);
                    _inBody = false;
                    return Deliver(connection);
            }
        }
    }

    /// <summary>A whole response: hand it over; true when parsing may go on.</summary>
    private bool Deliver(StreamConnection connection)
    {
        lock (_sync)
        {
            if (_outstanding > 0)
            {
                _first = (_first + 1) % MaxOutstanding;
                _outstanding--;
            }
        }

        var upgrade = _head.Status == 101;
        var close = _head.CloseAfter;
        _handler.ReceivedResponse(Response);
        if (upgrade || !ReferenceEquals(Connection, connection))
            return false; // another protocol (WebSocket) speaks from here on
        if (close)
        {
            connection.StartDisconnect();
            return false;
        }

        return true;
    }

    private void Fail(StreamConnection connection, string error)
    {
        _inBody = false;
        Response.IsErrorSet = true;
        try
        {
            _handler.ReceivedResponseError(Response, error);
        }
        finally
        {
            connection.DisconnectOnProtocolError(error);
        }
    }

    internal override void InvokeDisconnected(DisconnectReason reason)
    {
        // A body delimited by the close ends here; any other cut-short response is an error.
        if (_inBody && _head.Framing == HttpBodyFraming.UntilClose)
        {
            _inBody = false;
            _handler.ReceivedResponse(Response);
        }
        else if (_inBody)
        {
            _inBody = false;
            Response.IsErrorSet = true;
            _handler.ReceivedResponseError(Response, "The connection closed before the whole response body arrived.");
        }

        lock (_sync)
        {
            _first = 0;
            _outstanding = 0;
        }

        _parser.Reset();
        _handler.Closed();
        base.InvokeDisconnected(reason); // Response keeps the last response: an awaiting caller may still read it
    }
}
