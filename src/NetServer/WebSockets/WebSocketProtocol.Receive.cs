using System.Buffers.Binary;
using System.Net.WebSockets;

namespace NetServer.WebSockets;

// Receiving: frames are read from the retained input as they arrive. A frame's header waits in the
// receive buffer until it is whole (14 bytes at most), a control frame until its payload is too
// (139 bytes at most); a data frame's payload is consumed as it comes, unmasked into the message
// buffer (a pooled buffer bounded by MaxMessageSize), so a frame larger than the receive buffer
// needs no more than what has arrived of it. Text is checked as UTF-8 while it arrives.
internal sealed partial class WebSocketProtocol
{
    private const int MaxControlPayload = 125;

    private readonly PooledBuffer _message;
    private WsUtf8Validator _utf8;
    private byte[]? _control;                // a control frame's unmasked payload (125 bytes at most)
    private WsFrameHeader _frame;            // the data frame whose payload is being consumed
    private long _frameRemaining;            // payload bytes of _frame not consumed yet
    private int _maskOffset;                 // position in the mask key of the next payload byte
    private bool _inFrame;                   // a data frame's payload is being consumed
    private WsOpcode _messageOpcode;         // Text or Binary while a message is being received; Continuation when none is
    private bool _messageCompressed;         // the message being received is compressed (RSV1 on its first frame)
    private long _messageLength;             // payload bytes received for the message (compressed ones when compressed)
    private WebSocketMessageType _deliveringType; // the type of the message being delivered, for Enqueue
    private volatile bool _heard;            // something arrived since the keep-alive clock last looked

    private int _delivered; // whole messages delivered during this read (netserver.messages.received)

    protected internal override int OnReceived(ReadOnlySpan<byte> data)
    {
        var connection = Connection;
        if (connection is null || (Volatile.Read(ref _closeState) & (int)(CloseFlags.CloseReceived | CloseFlags.Failed)) != 0)
            return data.Length; // after the peer's close (or a failure) nothing more is read as WebSocket
        _heard = true;
        _deadline.Heard(_options.KeepAliveInterval);
        var consumed = 0;
        try
        {
            while (true)
            {
                if (!_inFrame)
                {
                    if (!ReadFrameStart(data, ref consumed))
                    {
                        if (!IsReading(connection))
                            return data.Length;
                        break; // the next frame's header (or control frame) has not fully arrived
                    }

                    if (!_inFrame)
                    {
                        if (!IsReading(connection))
                            return data.Length;
                        continue; // a control frame was handled whole
                    }
                }

                var available = (int)Math.Min(data.Length - consumed, _frameRemaining);
                if (available > 0)
                {
                    if (!ReadPayload(data.Slice(consumed, available)))
                        return data.Length;
                    consumed += available;
                    _frameRemaining -= available;
                }

                if (_frameRemaining > 0)
                    break; // the rest of this frame's payload has not arrived yet
                _inFrame = false;
                if (_frame.Fin && (!EndMessage() || !IsReading(connection)))
                    return data.Length;
            }

            return consumed;
        }
        finally
        {
            if (_delivered != 0)
            {
                connection.CountMessagesReceived(Diagnostics.MessageMetrics.WebSocket, _delivered);
                _delivered = 0;
            }

            if (_messageOpcode == WsOpcode.Continuation && _message.Length == 0)
            {
                _message.Release(); // between messages the connection holds no message memory
                _inflater?.Release();
            }
        }
    }

    /// <summary>Whether frames may still be read: the connection is ours and no close arrived or failure happened.</summary>
    private bool IsReading(StreamConnection connection) =>
        ReferenceEquals(Connection, connection) && (Volatile.Read(ref _closeState) & (int)(CloseFlags.CloseReceived | CloseFlags.Failed)) == 0;

    /// <summary>
    /// Reads a frame's header (and a control frame whole); false when more bytes are needed or the
    /// connection failed. On true, <see cref="_inFrame"/> says whether a data frame's payload follows.
    /// </summary>
    private bool ReadFrameStart(ReadOnlySpan<byte> data, ref int consumed)
    {
        var input = data.Slice(consumed);
        var status = WsFrameHeader.TryRead(input, out var header);
        if (status == WsHeaderStatus.NeedMoreData)
            return false;
        if (status == WsHeaderStatus.InvalidLength)
            return Fail(WsCloseStatus.ProtocolError, "A frame's 64-bit payload length has its most significant bit set.");
        if (!CheckHeader(header))
            return false;

        if (WsOpcodes.IsControl(header.Opcode))
        {
            var length = (int)header.PayloadLength;
            if (input.Length < header.HeaderLength + length)
                return false; // a control frame is handled whole: at most 139 bytes wait in the receive buffer
            var payload = _control ??= new byte[MaxControlPayload];
            var source = input.Slice(header.HeaderLength, length);
            if (header.Masked)
                WsMask.CopyMasked(source, payload, header.MaskKey, 0);
            else
                source.CopyTo(payload);
            consumed += header.HeaderLength + length;
            return HandleControl(header.Opcode, payload, length);
        }

        consumed += header.HeaderLength;
        if (header.Opcode != WsOpcode.Continuation)
        {
            _messageOpcode = header.Opcode;
            _messageCompressed = header.Rsv1;
            _messageLength = 0;
            _utf8.Reset();
        }

        _frame = header;
        _frameRemaining = header.PayloadLength;
        _maskOffset = 0;
        _messageLength += header.PayloadLength;
        _inFrame = true;
        return true;
    }

    /// <summary>The rules a header must follow on this connection (RFC 6455 5.2-5.5); fails the connection when one is broken.</summary>
    private bool CheckHeader(in WsFrameHeader header)
    {
        var opcode = header.Opcode;
        if (!WsOpcodes.IsKnown((byte)opcode))
            return Fail(WsCloseStatus.ProtocolError, $"A frame has the reserved opcode {(byte)opcode}.");
        if (header.Masked != _isServer)
        {
            return Fail(WsCloseStatus.ProtocolError, _isServer
                ? "A client frame is not masked (RFC 6455 5.1)."
                : "A server frame is masked (RFC 6455 5.1).");
        }

        var rsv = header.Rsv;
        if (rsv != 0 && !(header.Rsv1 && (rsv & 3) == 0 && _inflater is not null && opcode is WsOpcode.Text or WsOpcode.Binary))
        {
            return Fail(WsCloseStatus.ProtocolError, _inflater is null
                ? $"A frame has reserved bits set ({rsv}) and no extension was negotiated."
                : $"A frame has reserved bits set ({rsv}) that the negotiated extension does not allow there.");
        }

        if (WsOpcodes.IsControl(opcode))
        {
            if (!header.Fin)
                return Fail(WsCloseStatus.ProtocolError, "A control frame is fragmented.");
            if (header.PayloadLength > MaxControlPayload)
                return Fail(WsCloseStatus.ProtocolError, $"A control frame carries {header.PayloadLength} bytes (at most 125 are allowed).");
            return true;
        }

        if (opcode == WsOpcode.Continuation && _messageOpcode == WsOpcode.Continuation)
            return Fail(WsCloseStatus.ProtocolError, "A continuation frame arrived without a message to continue.");
        if (opcode != WsOpcode.Continuation && _messageOpcode != WsOpcode.Continuation)
            return Fail(WsCloseStatus.ProtocolError, "A new message started before the fragmented one was finished.");

        var soFar = opcode == WsOpcode.Continuation ? _messageLength : 0;
        var compressed = opcode == WsOpcode.Continuation ? _messageCompressed : header.Rsv1;
        if (header.PayloadLength > (compressed ? MaxCompressedLength : _options.MaxMessageSize) - soFar)
            return Fail(WsCloseStatus.MessageTooBig, $"A message is larger than the limit ({_options.MaxMessageSize} bytes, MaxMessageSize).");
        return true;
    }

    /// <summary>
    /// The most compressed bytes a message may take. MaxMessageSize bounds the inflated message,
    /// and deflate makes incompressible data larger (stored blocks add 5 bytes per 64 KiB, fixed
    /// Huffman codes take up to 9 bits a byte): a message within the limit may not be refused for
    /// its compressed size. The compressed bytes are inflated as they arrive, never held, so this
    /// bound only keeps one message from going on forever.
    /// </summary>
    private long MaxCompressedLength => _options.MaxMessageSize + (_options.MaxMessageSize / 8L) + 1024;

    /// <summary>Takes payload bytes of the current data frame; false when the connection failed.</summary>
    private bool ReadPayload(ReadOnlySpan<byte> payload)
    {
        if (!_message.TryGetWritable(payload.Length, out var free))
            return Fail(WsCloseStatus.MessageTooBig, $"A message is larger than the limit ({_options.MaxMessageSize} bytes, MaxMessageSize).");
        var destination = new Span<byte>(free.Array, free.Offset, payload.Length);
        if (_frame.Masked)
            _maskOffset = WsMask.CopyMasked(payload, destination, _frame.MaskKey, _maskOffset);
        else
            payload.CopyTo(destination);

        if (_messageCompressed)
        {
            // The compressed bytes go to the inflater as they arrive; the buffer is only a scratch.
            return _inflater!.Append(destination) || (_inflater.Failure == WsInflateFailure.TooBig
                ? Fail(WsCloseStatus.MessageTooBig, _inflater.Error)
                : Fail(WsCloseStatus.InvalidPayload, _inflater.Error));
        }

        if (_messageOpcode == WsOpcode.Text && !_utf8.Append(destination))
            return Fail(WsCloseStatus.InvalidPayload, "A text message is not valid UTF-8.");
        _message.Advance(payload.Length);
        return true;
    }

    /// <summary>A message's last frame was read: checks and delivers it; false when the connection failed.</summary>
    private bool EndMessage()
    {
        var type = _messageOpcode == WsOpcode.Text ? WebSocketMessageType.Text : WebSocketMessageType.Binary;
        var compressed = _messageCompressed;
        _messageOpcode = WsOpcode.Continuation;
        _messageCompressed = false;
        ArraySegment<byte> message;
        if (compressed)
        {
            if (!_inflater!.Finish(out _))
            {
                return _inflater.Failure == WsInflateFailure.TooBig
                    ? Fail(WsCloseStatus.MessageTooBig, _inflater.Error)
                    : Fail(WsCloseStatus.InvalidPayload, _inflater.Error);
            }

            message = _inflater.Message;

            if (type == WebSocketMessageType.Text && !WsUtf8Validator.IsValid(message.AsSpan()))
                return Fail(WsCloseStatus.InvalidPayload, "A text message is not valid UTF-8.");
        }
        else
        {
            if (type == WebSocketMessageType.Text && !_utf8.IsComplete)
                return Fail(WsCloseStatus.InvalidPayload, "A text message ends inside a UTF-8 sequence.");
            message = _message.WrittenSegment;
            if (message.Array is null)
                message = new ArraySegment<byte>(Array.Empty<byte>());
        }

        _deliveringType = type;
        _delivered++;
        try
        {
            _hooks.OnWsReceived(type, message.Array!, message.Offset, message.Count);
        }
        finally
        {
            if (!compressed)
                _message.Consume(_message.Length);
        }

        return true;
    }

    /// <summary>A whole control frame; false when the connection failed or closed.</summary>
    private bool HandleControl(WsOpcode opcode, byte[] payload, int length)
    {
        switch (opcode)
        {
            case WsOpcode.Ping:
                var outer = t_answeringPing; // restored, not cleared, should deliveries ever nest on a thread
                t_answeringPing = this;
                try
                {
                    _hooks.OnWsPing(payload, 0, length);
                }
                finally
                {
                    t_answeringPing = outer;
                }

                return true;
            case WsOpcode.Pong:
                _hooks.OnWsPong(payload, 0, length);
                return true;
            default:
                return ReceivedClose(payload, length);
        }
    }

    /// <summary>The peer's close frame (RFC 6455 5.5.1, 7.4): checked, reported, answered; the connection then closes.</summary>
    private bool ReceivedClose(byte[] payload, int length)
    {
        var status = WsCloseStatus.NoStatus;
        if (length == 1)
            return Fail(WsCloseStatus.ProtocolError, "A close frame carries a single byte (a status code takes two).");
        if (length >= 2)
        {
            status = BinaryPrimitives.ReadUInt16BigEndian(payload);
            if (!WsCloseStatus.IsValidOnWire(status))
                return Fail(WsCloseStatus.ProtocolError, $"A close frame carries the status {status}, which may not be sent.");
            if (!WsUtf8Validator.IsValid(new ReadOnlySpan<byte>(payload, 2, length - 2)))
                return Fail(WsCloseStatus.InvalidPayload, "A close frame's reason is not valid UTF-8.");
        }

        SetCloseFlag(CloseFlags.CloseReceived);
        _deadline.Stop();
        LeaveMulticast();
        try
        {
            _hooks.OnWsClose(payload, length >= 2 ? 2 : 0, Math.Max(length - 2, 0), status);
        }
        finally
        {
            // Answered with the same status (an empty close for none) unless the hook closed with its own.
            if (!IsCloseSent)
                SendCloseFrame(status == WsCloseStatus.NoStatus ? -1 : status, ReadOnlySpan<byte>.Empty);
            CloseHandshakeDone();
        }

        return false;
    }

    private void ResetReceive()
    {
        _inFrame = false;
        _frameRemaining = 0;
        _messageOpcode = WsOpcode.Continuation;
        _messageCompressed = false;
        _messageLength = 0;
        _utf8.Reset();
        _message.Consume(_message.Length);
    }
}
