namespace NetServer.Http;

/// <summary>The answering half of <see cref="HttpServerProtocol"/>: refusals, responses, streamed bodies, the end of an answer.</summary>
internal sealed partial class HttpServerProtocol
{
    /// <summary>Answers a request that broke a rule with its status, tells the application, and closes after the answer.</summary>
    private void Refuse(StreamConnection connection, int status, string reason)
    {
        _phase = Phase.Closing;
        _deadline.Stop();
        Request.IsErrorSet = true;
        try
        {
            _handler.ReceivedRequestError(Request, $"{status}: {reason}");
        }
        finally
        {
            SendError(connection, status, reason);
        }
    }

    /// <summary>Sends a short plain-text error response and closes the connection once it is out.</summary>
    /// <param name="connection">The connection.</param>
    /// <param name="status">The status code.</param>
    /// <param name="reason">The body text, which says what was wrong.</param>
    /// <param name="fields">More header field lines, each ending with CRLF ("Sec-WebSocket-Version: 13\r\n").</param>
    internal void SendError(StreamConnection connection, int status, string reason, string fields = "")
    {
        _phase = Phase.Closing;
        _telemetry.End(status, null);
        // The error path may allocate: it ends the connection.
        var body = TextEncoding.Utf8.GetBytes(reason);
        var head = TextEncoding.Utf8.GetBytes(
            $"HTTP/1.1 {status} {HttpStatusPhrases.Get(status)}\r\nContent-Type: text/plain; charset=UTF-8\r\nContent-Length: {body.Length}\r\n{fields}Connection: close\r\n\r\n");
        connection.SendAsync(Concat(head, body));
        connection.DisconnectOnProtocolError(reason);
    }

    private static byte[] Concat(byte[] head, byte[] body)
    {
        var all = new byte[head.Length + body.Length];
        head.CopyTo(all, 0);
        body.CopyTo(all, head.Length);
        return all;
    }

    /// <summary>
    /// The response ends the connection: it says "Connection: close", or its body has no length
    /// (neither Content-Length nor chunked) and so runs until the close.
    /// </summary>
    private static bool ClosesConnection(HttpResponse response, bool isHeadRequest)
    {
        var store = response.Store;
        if (store.TryGetHeader("Connection"u8, out var connection) && HttpSyntax.HasToken(connection, "close"u8))
            return true;
        var status = store.Status;
        var bodyless = isHeadRequest || status is >= 100 and < 200 or 204 or 304;
        return !bodyless && store.HeadLength == 0; // a head never ended has no length (SetBody and SetBodyLength write one)
    }

    /// <summary>Sends <paramref name="response"/> as the answer to the current request (or, with none pending, as it is).</summary>
    /// <param name="response">The response; its <see cref="HttpMessage.Cache"/> holds the bytes.</param>
    /// <param name="blocking">Wait until the bytes are taken (the compatible <c>SendResponse</c>) instead of queuing.</param>
    /// <returns>Bytes sent or queued; 0 when not connected or refused.</returns>
    public long SendResponse(HttpResponse response, bool blocking)
    {
        if (response is null)
            ThrowHelper.ThrowArgumentNull(nameof(response));
        var connection = Connection;
        if (connection is null)
            return 0;

        var store = response.Store;
        var cache = response.Cache;
        var length = (int)cache.Size;
        var bodyInCache = length - store.HeadLength;
        if (_isHeadRequest && store.HeadLength > 0)
            length = store.HeadLength; // a HEAD answer has the GET answer's head and no body
        var status = store.Status;
        var bytes = new ReadOnlySpan<byte>(cache.Data, 0, length);
        var sent = _closeAfter && status >= 200 && EndsHead(bytes, store.HeadLength) && !store.TryGetHeader("Connection"u8, out _)
            ? SendSayingClose(connection, bytes, store.HeadLength)
            : Send(connection, bytes, blocking);
        if (status is >= 100 and < 200 && status != 101)
            return sent; // an interim answer: the final one follows

        _closeResponse = _closeAfter || ClosesConnection(response, _isHeadRequest);
        _answered = true;
        _answerStatus = status;
        var bodyless = _isHeadRequest || status is 204 or 304 or < 200;

        // The head alone with chunked coding: chunks follow until EndBody. Also for HEAD (the
        // application answers it as it would the GET): its parts are dropped, but the answer ends
        // only with EndBody, so parts sent after the head cannot land in the next request's answer.
        _chunkedBody = status is >= 200 and not (204 or 304) && store.IsChunked && store.HeadLength == cache.Size;
        _bodyRemaining = bodyless || _chunkedBody ? 0 : Math.Max(0, store.BodyLength - bodyInCache);
        if (!_chunkedBody && _bodyRemaining == 0)
            EndAnswer(connection);
        return sent;
    }

    /// <summary>
    /// Sends body bytes of the response whose head went out alone (<c>SetBodyLength</c>, or
    /// "Transfer-Encoding: chunked": then each call is one chunk). The answer is over once the
    /// declared length went out, or with <see cref="EndBody"/> for a chunked one.
    /// </summary>
    public long SendBody(ReadOnlySpan<byte> body, bool blocking)
    {
        var connection = Connection;
        if (connection is null)
            return 0;
        if (_isHeadRequest)
            return body.Length; // a HEAD answer carries no body: taken and dropped
        if (_chunkedBody)
        {
            if (body.IsEmpty)
                return 0; // an empty chunk would end the body
            using var writer = connection.StartSend(body.Length + 16);
            HttpChunks.WriteChunk(writer, body);
            return writer.Commit() ? body.Length : 0; // queued either way: a chunk is framed in place in the send queue
        }

        var sent = Send(connection, body, blocking);
        if (_bodyRemaining > 0)
        {
            _bodyRemaining -= Math.Min(_bodyRemaining, body.Length);
            if (_bodyRemaining == 0)
                EndAnswer(connection);
        }

        return sent;
    }

    /// <summary>As <see cref="SendBody(ReadOnlySpan{byte}, bool)"/> for <paramref name="size"/> bytes of <paramref name="buffer"/> from <paramref name="offset"/>.</summary>
    public long SendBody(byte[] buffer, long offset, long size, bool blocking)
    {
        ThrowHelper.ValidateRange(buffer, offset, size, out var start, out var count);
        return SendBody(new ReadOnlySpan<byte>(buffer, start, count), blocking);
    }

    /// <summary>As <see cref="SendBody(ReadOnlySpan{byte}, bool)"/> for <paramref name="text"/> encoded as UTF-8.</summary>
    public long SendBodyText(ReadOnlySpan<char> text, bool blocking)
    {
        var rented = System.Buffers.ArrayPool<byte>.Shared.Rent(TextEncoding.MaxByteCount(text.Length));
        try
        {
            return SendBody(rented.AsSpan(0, TextEncoding.Encode(text, rented)), blocking);
        }
        finally
        {
            System.Buffers.ArrayPool<byte>.Shared.Return(rented);
        }
    }

    /// <summary>Ends a chunked response body (the last chunk, no trailers): the answer is complete.</summary>
    public bool EndBody()
    {
        var connection = Connection;
        if (connection is null || !_chunkedBody)
            return false;
        _chunkedBody = false;
        var sent = _isHeadRequest || connection.SendAsync(HttpChunks.LastChunk);
        EndAnswer(connection);
        return sent;
    }

    /// <summary>
    /// Sends a whole response from the static cache (what OnReceivedCachedRequest does by
    /// default), saying "Connection: close" in its head when the connection closes after it.
    /// </summary>
    /// <returns>False when not connected.</returns>
    public bool SendCachedResponse(byte[] content)
    {
        var connection = Connection;
        if (connection is null || content is null)
            return false;
        var bytes = new ReadOnlySpan<byte>(content);
        _answerStatus = StatusOf(bytes);
        var headEnd = _closeAfter ? bytes.IndexOf("\r\n\r\n"u8) : -1;
        return headEnd >= 0 ? SendSayingClose(connection, bytes, headEnd + 4) > 0 : connection.SendAsync(bytes);
    }

    /// <summary>
    /// Sends a final answer after which the connection closes (the request said "Connection: close",
    /// or HTTP/1.0 without keep-alive) with "Connection: close" added to its head, as RFC 9112
    /// section 9.6 asks (and Kestrel does), when the application did not set a Connection header.
    /// </summary>
    private static long SendSayingClose(StreamConnection connection, ReadOnlySpan<byte> bytes, int headLength)
    {
        using var writer = connection.StartSend(bytes.Length + ConnectionClose.Length);
        writer.Write(bytes.Slice(0, headLength - 2)); // the head without its empty last line
        writer.Write(ConnectionClose);
        writer.Write(bytes.Slice(headLength));
        return writer.Commit() ? bytes.Length - 2 + ConnectionClose.Length : 0;
    }

    private static bool EndsHead(ReadOnlySpan<byte> bytes, int headLength) =>
        headLength >= 4 && headLength <= bytes.Length && bytes.Slice(headLength - 4, 4).SequenceEqual("\r\n\r\n"u8);

    /// <summary>The status code of a response's bytes ("HTTP/1.1 200 ..."), 0 when they do not start with a status line.</summary>
    private static int StatusOf(ReadOnlySpan<byte> response)
    {
        if (response.Length < 12 || response[8] != (byte)' ')
            return 0;
        var status = 0;
        for (var i = 9; i < 12; i++)
        {
            var digit = response[i] - '0';
            if ((uint)digit > 9)
                return 0;
            status = status * 10 + digit;
        }

        return status;
    }

    private static ReadOnlySpan<byte> ConnectionClose => "Connection: close\r\n\r\n"u8;

    private static long Send(StreamConnection connection, ReadOnlySpan<byte> bytes, bool blocking) =>
        blocking ? connection.Send(bytes) : (connection.SendAsync(bytes) ? bytes.Length : 0);

    /// <summary>The current request is fully answered: close, or go on with the next request.</summary>
    private void EndAnswer(StreamConnection connection)
    {
        _telemetry.End(_answerStatus, null);
        if (_closeResponse)
        {
            _phase = Phase.Closing;
            connection.StartDisconnect(); // graceful: the response already queued goes out first
        }
        else if (_phase == Phase.Answering)
        {
            _phase = Phase.Head;
            _deadline.ArmKeepAlive(_limits.KeepAliveTimeout);
            // Answered from another thread (later, or while the delivery is still unwinding): resume,
            // so the requests waiting in the receive buffer are parsed. On the delivering thread
            // parsing simply goes on. A resume before the delivery's pause is harmless: Complete
            // checks the phase again after pausing.
            if (Volatile.Read(ref _deliveringThread) != Environment.CurrentManagedThreadId)
                connection.ResumeReceiving();
        }
    }
}
