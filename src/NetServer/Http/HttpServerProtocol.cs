namespace NetServer.Http;

/// <summary>
/// The server side of HTTP/1.1 over any stream session (TCP, TLS, Unix sockets): parses requests
/// from the retained receive buffer, hands them to the session's hooks one at a time, answers in
/// order, enforces the limits and timeouts, and closes a connection that broke a rule after
/// answering it with the rule's status. <see cref="HttpSession"/> and <c>HttpsSession</c> host it;
/// their public surface only forwards here.
/// </summary>
/// <remarks>
/// <para>Pipelining: a request is parsed only once the one before it is answered. A request not
/// answered inside its hook pauses receiving until the application sends its response (from any
/// thread), so later requests wait as unparsed bytes in the receive buffer, bounded by it, and
/// responses can never leave out of order.</para>
/// <para>Timeouts run on the process's shared clock (one entry per connection): between requests
/// the keep-alive timeout (the connection closes quietly), from a request's first byte to the end
/// of its head the request-headers timeout (408), while a body arrives the minimum data rate
/// (408). None runs while the application works on a request.</para>
/// </remarks>
internal sealed partial class HttpServerProtocol : StreamProtocol
{
    internal override string DiagnosticName => "HTTP";

    private static readonly byte[] s_continue = "HTTP/1.1 100 Continue\r\n\r\n"u8.ToArray();

    [ThreadStatic]
    private static byte[]? t_staticScratch; // a head built for one static reply, sent before the call returns

    private readonly IHttpSessionHandler _handler;
    private readonly HttpLimits _limits;
    private readonly HttpLimits _headLimits; // the same without the body limit: it is applied per request, after the header hook
    private readonly HttpHead _head = new();
    private readonly HttpHead _trailers = new();
    private readonly HttpDeadline _deadline;
    private HttpHeadParser _parser;
    private HttpBodyReader _body;
    private volatile Phase _phase;
    private bool _isHeadRequest;   // the request being answered is HEAD: its response goes without a body
    private bool _closeAfter;      // the request being answered asked to close (or its framing forces it)
    private bool _streamingBody;   // the application takes this request's body in parts
    private int _deliveringThread; // the thread inside OnReceived (0: none): an answer from it lets parsing go on without a resume
    private bool _answered;        // the request being delivered was answered during its hooks
    private bool _closeResponse;   // the answer being sent ends the connection
    private bool _chunkedBody;     // the answer's head went out with chunked coding: body parts are chunks until EndBody
    private long _bodyRemaining;   // the answer's head declared more body than went out with it
    private int _answerStatus;     // the status of the answer that went out for the request (its metrics and trace)
    private Diagnostics.HttpRequestTelemetry _telemetry;

    public HttpServerProtocol(IHttpSessionHandler handler, HttpLimits limits)
    {
        _handler = handler;
        _limits = limits;
        _headLimits = limits.WithoutBodyLimit();
        _deadline = new HttpDeadline(this);
        Request = new HttpRequest(BufferPool.Shared);
        Response = new HttpResponse(BufferPool.Shared);
        MaxRequestBodySize = limits.MaxRequestBodySize;
    }

    private enum Phase : byte
    {
        Head,      // waiting for (or reading) a request head
        Body,      // reading the body of Request
        Answering, // Request is complete and not answered yet: receiving is paused
        Closing,   // a rule was broken or the connection is to close after the response: nothing more is parsed
    }

    /// <summary>The request being received or answered (reused for every request of the connection).</summary>
    public HttpRequest Request { get; }

    /// <summary>The session's response object (reused; the application fills it and sends it).</summary>
    public HttpResponse Response { get; }

    /// <summary>The body limit of the current request (set from the limits for each request; the header hook may change it).</summary>
    public long? MaxRequestBodySize { get; set; }

    /// <summary>The limits this connection enforces.</summary>
    public HttpLimits Limits => _limits;

    protected internal override void OnConnected() => _deadline.ArmKeepAlive(_limits.KeepAliveTimeout);

    protected internal override int OnReceived(ReadOnlySpan<byte> data)
    {
        var connection = Connection;
        if (connection is null)
            return data.Length;
        Volatile.Write(ref _deliveringThread, Environment.CurrentManagedThreadId);
        try
        {
            return Receive(connection, data);
        }
        finally
        {
            Volatile.Write(ref _deliveringThread, 0);
        }
    }

    private int Receive(StreamConnection connection, ReadOnlySpan<byte> data)
    {
        var consumed = 0;
        while (consumed < data.Length || _phase == Phase.Body)
        {
            switch (_phase)
            {
                case Phase.Head:
                    if (!ReadHead(connection, data, ref consumed))
                        return _phase == Phase.Closing ? data.Length : consumed;
                    break;
                case Phase.Body:
                    if (!ReadBody(connection, data, ref consumed))
                        return _phase == Phase.Closing ? data.Length : consumed;
                    break;
                case Phase.Answering:
                    return consumed; // the next request waits in the receive buffer until this one is answered
                default:
                    return data.Length; // closing: whatever else arrives is dropped
            }
        }

        return consumed;
    }

    /// <summary>Parses a request head; true when one was complete and its body (if any) is next.</summary>
    private bool ReadHead(StreamConnection connection, ReadOnlySpan<byte> data, ref int consumed)
    {
        var input = data.Slice(consumed);
        var status = _parser.ParseRequestHead(input, _headLimits, _head, out var used);
        if (status == HttpParseStatus.NeedMoreData)
        {
            // A head that did not arrive whole in one read is timed from here (no-op once armed);
            // one that did needs no clock read at all.
            _deadline.ArmHeaders(_limits.RequestHeadersTimeout);
            consumed += used;
            return false;
        }

        if (status == HttpParseStatus.Error)
        {
            Refuse(connection, _parser.Error.Status, _parser.Error.Reason!);
            return false;
        }

        Request.LoadHead(input.Slice(0, used), _head);
        consumed += used;
        _isHeadRequest = Request.Store.MethodBytes.SequenceEqual("HEAD"u8);
        _closeAfter = _head.CloseAfter;
        _streamingBody = false;
        _answered = false;
        _answerStatus = 0;
        MaxRequestBodySize = _limits.MaxRequestBodySize;
        _deadline.Stop();
        _telemetry.Start(connection, Request.Store, _head.MinorVersion);

        var entered = _telemetry.Enter(out var previous);
        try
        {
            _handler.ReceivedRequestHeader(Request);
        }
        finally
        {
            if (entered)
                System.Diagnostics.Activity.Current = previous;
        }

        if (_phase == Phase.Closing || !ReferenceEquals(Connection, connection))
            return false;

        var framing = _head.Framing;
        _body = new HttpBodyReader(framing, _head.ContentLength, MaxRequestBodySize, _limits, _trailers);
        if (_answered)
        {
            // Answered from the header hook (a refusal, say): the body it did not want is not read,
            // so the connection cannot carry another request.
            _phase = Phase.Closing;
            if (framing != HttpBodyFraming.None)
                connection.StartDisconnect();
            return false;
        }

        if (framing == HttpBodyFraming.None)
            return Complete(connection, consumed < data.Length);

        if (_head.ExpectContinue && _body.Error.IsNone && _head.MinorVersion >= 1)
            connection.SendAsync(s_continue);
        _phase = Phase.Body;
        _deadline.ArmBodyRate(_limits);
        return true;
    }

    /// <summary>Reads body bytes; true when the request is complete and answered (parsing may go on).</summary>
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
                    Refuse(connection, _body.Error.Status, _body.Error.Reason!);
                    return false;
                case HttpBodyStatus.Data:
                    _deadline.CountBody(part.Length);
                    if (_streamingBody)
                    {
                        _handler.ReceivedRequestBodyPart(Request, part);
                        if (_phase == Phase.Closing || !ReferenceEquals(Connection, connection))
                            return false;
                        if (connection.IsReceivingPaused)
                            return false; // backpressure: the rest waits in the receive buffer
                    }
                    else if (!Request.AppendBody(part, MaxRequestBodySize ?? long.MaxValue))
                    {
                        Refuse(connection, 413, "The request body is larger than the limit (MaxRequestBodySize).");
                        return false;
                    }

                    break;
                default:
                    if (!part.IsEmpty)
                        Request.SetTrailers(part, _trailers.Headers);
                    _deadline.Stop();
                    return Complete(connection, consumed < data.Length);
            }
        }
    }

    /// <summary>Hands a whole request to the application; true when it was answered and the next one may be parsed.</summary>
    /// <param name="connection">The connection.</param>
    /// <param name="moreInput">Bytes of the next (pipelined) request follow this one's in the delivery.</param>
    private bool Complete(StreamConnection connection, bool moreInput)
    {
        _phase = Phase.Answering;
        if (_head.IsUpgrade && _handler.Upgrade is { } upgrade && upgrade.TryUpgrade(Request))
        {
            _answered = true;
            return _phase == Phase.Head && ReferenceEquals(Connection, connection); // false once another protocol took over
        }

        // Pipelined requests answered during this delivery leave in one write: the first answer
        // waits for the others instead of going out alone (the last one of a lone request still does).
        if (moreInput)
            connection.ExpectMoreSends();

        if (_handler.Cache is { Empty: false } cache && ServeStatic(connection, cache))
            return _phase == Phase.Head && ReferenceEquals(Connection, connection);
        var entered = _telemetry.Enter(out var previous);
        try
        {
            _handler.ReceivedRequest(Request);
        }
        finally
        {
            if (entered)
                System.Diagnostics.Activity.Current = previous;
        }

        if (_phase != Phase.Answering || !ReferenceEquals(Connection, connection))
            return _phase == Phase.Head && ReferenceEquals(Connection, connection);

        // Not answered yet: hold further requests until the application answers.
        connection.PauseReceiving();
        if (_phase != Phase.Answering)
            connection.ResumeReceiving(); // answered from another thread in between
        return false;
    }

    /// <summary>Answers a GET or HEAD for static content from the cache; false when the request is not for it.</summary>
    private bool ServeStatic(StreamConnection connection, FileCache cache)
    {
        var scratch = t_staticScratch ??= new byte[StaticContent.MinScratchSize];
        var store = Request.Store;
        var reply = StaticContent.Serve(cache, store.MethodBytes, store.TargetBytes, new StoreHeaders(store), scratch);
        if (!reply.IsStatic)
            return false;

        _answered = true;
        _closeResponse = _closeAfter;
        _answerStatus = StatusOf(reply.Content is { } cached ? cached : new ReadOnlySpan<byte>(scratch, 0, reply.HeadLength));
        if (reply.Content is { } content)
        {
            _handler.ReceivedCachedRequest(Request, content); // NetCoreServer's hook: the default sends the cached response
        }
        else
        {
            var head = new ReadOnlySpan<byte>(scratch, 0, reply.HeadLength);
            if (_closeAfter && EndsHead(head, head.Length))
                SendSayingClose(connection, head, head.Length);
            else if (!head.IsEmpty)
                connection.SendAsync(head);
            if (!reply.Cached.IsEmpty)
                connection.SendAsync(reply.Cached.Span);
            _closeResponse |= reply.Kind == StaticReplyKind.BadRequest;
        }

        EndAnswer(connection);
        return true;
    }

    /// <summary>The parsed request's header fields, for the static-content layer (no strings, no boxing).</summary>
    private readonly struct StoreHeaders(HttpMessageStore store) : IHttpHeaderSource
    {
        public bool TryGetHeader(ReadOnlySpan<byte> name, out ReadOnlySpan<byte> value) => store.TryGetHeader(name, out value);
    }

    /// <summary>Gives the request's and response's memory back (another protocol took the connection over).</summary>
    internal void ReleaseMessages()
    {
        Request.Release();
        Response.Release();
    }

    /// <summary>The header hook asks for the body in parts (an upload larger than memory).</summary>
    public void StreamRequestBody() => _streamingBody = true;

    /// <summary>The keep-alive or request-headers deadline passed.</summary>
    internal void OnDeadline(HttpDeadlineKind kind)
    {
        var connection = Connection;
        if (connection is null || _phase == Phase.Closing)
            return;
        if (kind == HttpDeadlineKind.KeepAlive)
        {
            _phase = Phase.Closing;
            connection.StartDisconnect(); // idle between requests: close quietly, as Kestrel does
            return;
        }

        // A 408 is a broken limit like any other: the application hears of it (OnReceivedRequestError).
        Refuse(connection, 408, kind == HttpDeadlineKind.Headers
            ? "The request headers did not arrive within the limit (RequestHeadersTimeout)."
            : "The request body arrived slower than the minimum data rate (MinRequestBodyDataRate).");
    }

    internal override void InvokeDisconnected(DisconnectReason reason)
    {
        _deadline.Stop();
        _telemetry.End(_answerStatus, Diagnostics.ConnectionMetrics.ReasonName(reason)); // no-op when the answer ended it
        _phase = Phase.Closing;
        try
        {
            base.InvokeDisconnected(reason);
        }
        finally
        {
            Request.Release();
            Response.Release();
        }
    }

    internal override void InvokeDetached()
    {
        _deadline.Stop(); // an upgrade (WebSocket) took the connection over
        _telemetry.End(_answerStatus == 0 ? 101 : _answerStatus, null);
        base.InvokeDetached();
    }
}
