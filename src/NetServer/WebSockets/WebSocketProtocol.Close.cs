namespace NetServer.WebSockets;

// Closing (RFC 6455 7): the side that closes first sends its close frame and waits, up to
// CloseTimeout, for the peer's; the side that receives one answers it. Then the server closes the
// TCP connection, and a client waits (again up to CloseTimeout) for the server to do so. Keep-alive
// pings and every wait run on one shared-clock entry per connection.
internal sealed partial class WebSocketProtocol
{
    /// <summary>
    /// Starts the close handshake: sends a close frame with <paramref name="status"/> and
    /// <paramref name="reason"/>, then waits for the peer's close frame (the connection closes then,
    /// or after <see cref="WsOptions.CloseTimeout"/>). A status that may not be sent (RFC 6455 7.4:
    /// below 1000, 1004-1006, 1015, 1016-2999, 5000 and over; -1 for none) goes out as a close frame
    /// without a status, which the peer reports as 1005: NetCoreServer programs pass such codes
    /// (its multicast benchmark closes with 100), and sending them would make a conforming peer fail
    /// the connection instead of closing it.
    /// </summary>
    /// <returns>False if not upgraded or a close frame was sent already.</returns>
    public bool Close(int status, ReadOnlySpan<byte> reason)
    {
        CheckReason(reason);
        if (!WsCloseStatus.IsValidOnWire(status))
        {
            status = -1;
            reason = default; // a reason travels only after a status
        }

        if (!SendCloseFrame(status, reason))
            return false;
        if ((Volatile.Read(ref _closeState) & (int)CloseFlags.CloseReceived) != 0)
            CloseHandshakeDone(); // our frame answered theirs
        else
            _deadline.ArmClose(_options.CloseTimeout);
        return true;
    }

    /// <summary>The most characters a close reason may have (123 UTF-8 bytes at most, each character at least one).</summary>
    public const int MaxCloseReasonChars = MaxControlPayload - 2;

    /// <summary>A close reason given as text, encoded as UTF-8 into <paramref name="scratch"/> (at least 3 x <see cref="MaxCloseReasonChars"/> bytes).</summary>
    public static ReadOnlySpan<byte> Utf8(ReadOnlySpan<char> text, Span<byte> scratch)
    {
        if (text.Length > MaxCloseReasonChars)
            ThrowHelper.ThrowArgumentOutOfRange(nameof(text), "A close reason takes at most 123 bytes of UTF-8.");
        return text.IsEmpty ? default : scratch.Slice(0, TextEncoding.Encode(text, scratch));
    }

    /// <summary>The compatible (buffer, offset, size) triple as a span, checked.</summary>
    public static ReadOnlySpan<byte> Slice(byte[] buffer, long offset, long size)
    {
        ThrowHelper.ValidateRange(buffer, offset, size, out var start, out var count);
        return new ReadOnlySpan<byte>(buffer, start, count);
    }

    /// <summary>Both close frames have been exchanged: the server closes now, a client waits for the server's close.</summary>
    private void CloseHandshakeDone()
    {
        var connection = Connection;
        if (connection is null)
            return;
        if (_isServer)
            connection.StartDisconnect(); // our close frame is queued; it goes out before the socket closes
        else
            _deadline.ArmClose(_options.CloseTimeout);
    }

    /// <summary>
    /// Fails the connection (RFC 6455 7.1.7): tells the application, sends a close frame with
    /// <paramref name="status"/> unless one went already, and closes once it is out. Always false,
    /// so a parser can return its result.
    /// </summary>
    private bool Fail(int status, string reason)
    {
        var connection = Connection;
        if (connection is null || !SetCloseFlag(CloseFlags.Failed))
            return false;
        _deadline.Stop();
        _inFrame = false;
        try
        {
            _hooks.OnWsError(reason);
        }
        finally
        {
            var text = TextEncoding.Utf8.GetBytes(reason);
            SendCloseFrame(status, new ReadOnlySpan<byte>(text, 0, Math.Min(text.Length, TruncatedLength(text, MaxControlPayload - 2))));
            connection.DisconnectOnProtocolError(reason);
        }

        return false;
    }

    /// <summary>How many bytes of a UTF-8 text fit in <paramref name="limit"/> without cutting a character.</summary>
    private static int TruncatedLength(byte[] text, int limit)
    {
        if (text.Length <= limit)
            return text.Length;
        var length = limit;
        while (length > 0 && (text[length] & 0xC0) == 0x80)
            length--;
        return length;
    }

    /// <summary>Sets a close flag; false when it was set already.</summary>
    private bool SetCloseFlag(CloseFlags flag)
    {
        while (true)
        {
            var state = Volatile.Read(ref _closeState);
            if ((state & (int)flag) != 0)
                return false;
            if (Interlocked.CompareExchange(ref _closeState, state | (int)flag, state) == state)
                return true;
        }
    }

    /// <summary>A deadline of this connection passed (on a pool thread).</summary>
    internal void OnDeadline(WsDeadlineKind kind)
    {
        var connection = Connection;
        if (connection is null)
            return;
        switch (kind)
        {
            case WsDeadlineKind.KeepAlive:
                if (IsCloseSent)
                    return;
                if (_heard)
                {
                    _heard = false;
                    _deadline.ArmKeepAlive(_options.KeepAliveInterval);
                    return;
                }

                // Armed before the ping goes: an answer that comes at once must find the wait for it.
                _deadline.ArmPong(_options.KeepAliveTimeout);
                Send(WsOpcode.Ping, ReadOnlySpan<byte>.Empty);
                return;
            case WsDeadlineKind.Pong:
                if (_heard)
                {
                    _heard = false;
                    _deadline.ArmKeepAlive(_options.KeepAliveInterval);
                    return;
                }

                ReportTimeout(connection, $"The peer answered no keep-alive ping within {_options.KeepAliveTimeout.TotalSeconds:0.###} s (KeepAliveTimeout).");
                return;
            default:
                ReportTimeout(connection, (Volatile.Read(ref _closeState) & (int)CloseFlags.CloseReceived) != 0
                    ? $"The server did not close the connection within {_options.CloseTimeout.TotalSeconds:0.###} s of the close handshake (CloseTimeout)."
                    : $"The peer did not answer the close frame within {_options.CloseTimeout.TotalSeconds:0.###} s (CloseTimeout).");
                return;
        }
    }

    private void ReportTimeout(StreamConnection connection, string error)
    {
        var closingNormally = _isServer is false && (Volatile.Read(ref _closeState) & (int)CloseFlags.CloseReceived) != 0 && IsCloseSent;
        if (!closingNormally)
            _hooks.OnWsError(error);
        connection.StartDisconnect();
    }
}
