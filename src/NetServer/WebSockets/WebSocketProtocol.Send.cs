using System.Buffers.Binary;
using System.Net.WebSockets;

namespace NetServer.WebSockets;

// Sending: every frame is built in place in pooled send memory (header, then the payload copied,
// masked with a fresh key on the client side, or compressed) and committed as one unit, so frames
// from many threads never interleave and a control frame may go out between the fragments of a
// message. Nothing is allocated per frame. A small frame is built on the stack and handed to the
// engine as one span instead: the engine copies it into the send queue's current chunk (or writes it
// straight to the socket) either way, and a writer would rent and return a send chunk (16 KiB) for it.
internal sealed partial class WebSocketProtocol
{
    // Text up to this many UTF-8 bytes is encoded straight into the send memory (one contiguous span).
    private const int DirectTextLimit = 64 * 1024;

    // Frames up to this size (header included) are built on the stack: SendWriter.SmallMessage, the
    // size up to which a writer's message is copied into a busy queue anyway.
    private const int StackFrameLimit = SendWriter.SmallMessage;

    [ThreadStatic]
    private static WebSocketProtocol? t_answeringPing; // the protocol whose OnWsPing runs on this thread

    private bool _sendingFragmented;          // a message sent in parts is open: the next data frame continues it
    private WebSocketMessageType _fragmentType;

    /// <summary>Sends a whole message or a control frame without waiting (queued); false when not connected, closing or refused.</summary>
    public bool Send(WsOpcode opcode, ReadOnlySpan<byte> payload)
    {
        if (!CanSend(opcode, out var connection))
            return false;
        if (WsOpcodes.IsControl(opcode) && payload.Length > MaxControlPayload)
            ThrowHelper.ThrowArgumentOutOfRange(nameof(payload), "A ping or pong carries at most 125 bytes.");
        CountMessage(connection, opcode);
        if (ShouldCompress(opcode, payload.Length))
            return SendCompressed(connection, opcode, payload);
        if (payload.Length <= StackFrameLimit - WsFrameHeader.MaxHeaderLength)
        {
            Span<byte> frame = stackalloc byte[WsFrameHeader.MaxHeaderLength + payload.Length];
            var header = WriteHeader(frame, opcode, payload.Length, out var key);
            var body = frame.Slice(header, payload.Length);
            if (_isServer)
                payload.CopyTo(body);
            else
                WsMask.CopyMasked(payload, body, key, 0);
            return SendFrame(connection, frame.Slice(0, header + payload.Length), IsAnsweringPing(opcode));
        }

        using var writer = connection.StartSend(WsFrameHeader.MaxHeaderLength + payload.Length);
        WriteFrame(writer, opcode, fin: true, rsv1: false, payload);
        return Commit(writer, opcode);
    }

    /// <summary>
    /// Commits a frame. The pong that answers a ping (sent from OnWsPing, during the delivery) may
    /// go past the send limit: RFC 6455 5.5.2 says it MUST be sent, and a peer that floods pings
    /// without reading is stopped by the high-water mark, which pauses receiving after the delivery.
    /// </summary>
    private bool Commit(SendWriter writer, WsOpcode opcode) => IsAnsweringPing(opcode) ? writer.CommitPastLimit() : writer.Commit();

    private bool IsAnsweringPing(WsOpcode opcode) => opcode == WsOpcode.Pong && ReferenceEquals(t_answeringPing, this);

    /// <summary>As <see cref="Send(WsOpcode, ReadOnlySpan{byte})"/> for <paramref name="size"/> bytes of <paramref name="buffer"/> from <paramref name="offset"/>.</summary>
    public bool Send(WsOpcode opcode, byte[] buffer, long offset, long size)
    {
        ThrowHelper.ValidateRange(buffer, offset, size, out var start, out var count);
        return Send(opcode, new ReadOnlySpan<byte>(buffer, start, count));
    }

    /// <summary>Sends <paramref name="text"/> encoded as UTF-8 in a text (or ping, pong) frame; returns its UTF-8 length, or -1 when not sent.</summary>
    public int Send(WsOpcode opcode, ReadOnlySpan<char> text)
    {
        if (!CanSend(opcode, out var connection))
            return -1;
        var length = text.IsEmpty ? 0 : TextEncoding.ByteCount(text);
        if (length > DirectTextLimit || ShouldCompress(opcode, length) || (WsOpcodes.IsControl(opcode) && length > MaxControlPayload))
        {
            var rented = System.Buffers.ArrayPool<byte>.Shared.Rent(Math.Max(length, 1));
            try
            {
                return Send(opcode, new ReadOnlySpan<byte>(rented, 0, TextEncoding.Encode(text, rented))) ? length : -1;
            }
            finally
            {
                System.Buffers.ArrayPool<byte>.Shared.Return(rented);
            }
        }

        CountMessage(connection, opcode); // the paths above count in Send(opcode, payload)
        if (length <= StackFrameLimit - WsFrameHeader.MaxHeaderLength)
        {
            Span<byte> frame = stackalloc byte[WsFrameHeader.MaxHeaderLength + length];
            var headerLength = WriteHeader(frame, opcode, length, out var frameKey);
            var encoded = frame.Slice(headerLength, length);
            TextEncoding.Encode(text, encoded);
            if (!_isServer)
                WsMask.Apply(encoded, frameKey, 0);
            return SendFrame(connection, frame.Slice(0, headerLength + length), IsAnsweringPing(opcode)) ? length : -1;
        }

        using var writer = connection.StartSend(WsFrameHeader.MaxHeaderLength + length);
        var masked = !_isServer;
        var key = masked ? WsMask.NewKey() : 0u;
        var span = writer.GetSpan(WsFrameHeader.MaxHeaderLength + length);
        var header = WsFrameHeader.Write(span, opcode, fin: true, rsv1: false, length, masked, key);
        var payload = span.Slice(header, length);
        TextEncoding.Encode(text, payload);
        if (masked)
            WsMask.Apply(payload, key, 0);
        writer.Advance(header + length);
        return Commit(writer, opcode) ? length : -1;
    }

    /// <summary>
    /// Sends a message, or a part of one (<paramref name="endOfMessage"/> false: more parts follow,
    /// each its own frame), waiting for room in the send queue instead of refusing.
    /// </summary>
    /// <returns>True once queued; false when not connected or closing.</returns>
    public ValueTask<bool> SendAsync(ReadOnlyMemory<byte> payload, WebSocketMessageType type, bool endOfMessage, CancellationToken cancellationToken)
    {
        if (type == WebSocketMessageType.Close)
            ThrowHelper.ThrowArgumentOutOfRange(nameof(type), "Close with CloseAsync (or Close), not as a message.");
        var opcode = type == WebSocketMessageType.Text ? WsOpcode.Text : WsOpcode.Binary;
        if (!CanSend(opcode, out var connection))
            return new ValueTask<bool>(false);

        if (!_sendingFragmented && endOfMessage && ShouldCompress(opcode, payload.Length))
        {
            connection.CountMessagesSent(Diagnostics.MessageMetrics.WebSocket, 1);
            return SendCompressedAsync(connection, opcode, payload.Span, cancellationToken);
        }

        // A message in parts: its first frame carries the type, the others are continuations.
        if (_sendingFragmented)
        {
            if (type != _fragmentType)
                ThrowHelper.ThrowInvalidOperation("A message sent in parts keeps its type until its last part.");
            opcode = WsOpcode.Continuation;
        }

        if (endOfMessage)
            connection.CountMessagesSent(Diagnostics.MessageMetrics.WebSocket, 1);
        _sendingFragmented = !endOfMessage;
        _fragmentType = type;
        using var writer = connection.StartSend(WsFrameHeader.MaxHeaderLength + payload.Length);
        WriteFrame(writer, opcode, endOfMessage, rsv1: false, payload.Span);
        return writer.CommitAsync(cancellationToken);
    }

    /// <summary>
    /// Sends a close frame with <paramref name="status"/> and a UTF-8 reason (at most 123 bytes), and
    /// waits for the peer's as <see cref="Close(int, ReadOnlySpan{byte})"/> does; returns the frame's
    /// payload size, 0 if a close frame was sent already.
    /// </summary>
    public long SendClose(int status, ReadOnlySpan<byte> reason) => Close(status, reason) ? 2 + reason.Length : 0;

    internal static void CheckReason(ReadOnlySpan<byte> reason)
    {
        if (reason.Length > MaxControlPayload - 2)
            ThrowHelper.ThrowArgumentOutOfRange(nameof(reason), "A close reason takes at most 123 bytes.");
    }

    /// <summary>Sends a close frame with <paramref name="status"/> (-1: none) unless one was sent; marks the connection as closing.</summary>
    private bool SendCloseFrame(int status, ReadOnlySpan<byte> reason)
    {
        var connection = Connection;
        if (connection is null || !_upgraded || !SetCloseFlag(CloseFlags.CloseSent))
            return false;
        LeaveMulticast();
        Span<byte> payload = stackalloc byte[MaxControlPayload];
        var length = 0;
        if (status >= 0)
        {
            BinaryPrimitives.WriteUInt16BigEndian(payload, (ushort)status);
            reason.CopyTo(payload.Slice(2));
            length = 2 + reason.Length;
        }

        // One close frame per connection, and it may not be lost behind a full send queue (an echo
        // of a large message, say): the peer waits for it (RFC 6455 5.5.1). So it goes past the limit.
        using var writer = connection.StartSend(WsFrameHeader.MaxHeaderLength + length);
        WriteFrame(writer, WsOpcode.Close, fin: true, rsv1: false, payload.Slice(0, length));
        return writer.CommitPastLimit();
    }

    /// <summary>Frames may be sent: upgraded, connected, and (for data, pings and pongs) no close sent yet.</summary>
    /// <summary>A whole data message is about to be queued: counted for <c>netserver.messages.sent</c> (control frames are not messages).</summary>
    private static void CountMessage(StreamConnection connection, WsOpcode opcode)
    {
        if (opcode is WsOpcode.Text or WsOpcode.Binary)
            connection.CountMessagesSent(Diagnostics.MessageMetrics.WebSocket, 1);
    }

    private bool CanSend(WsOpcode opcode, out StreamConnection connection)
    {
        connection = Connection!;
        return connection is not null && _upgraded && (opcode == WsOpcode.Close || !IsCloseSent);
    }

    /// <summary>Writes the header of a whole unfragmented frame of <paramref name="length"/> bytes into <paramref name="destination"/>, with a fresh mask key on the client side; returns its length.</summary>
    private int WriteHeader(Span<byte> destination, WsOpcode opcode, int length, out uint key)
    {
        var masked = !_isServer;
        key = masked ? WsMask.NewKey() : 0u;
        return WsFrameHeader.Write(destination, opcode, fin: true, rsv1: false, length, masked, key);
    }

    /// <summary>
    /// Hands a frame built on the stack to the engine as one unit, as a writer's commit does (and,
    /// like it, not through an override of the connection's <c>SendAsync</c>, and past the limit for
    /// a pong answering a ping): false when not connected or refused by the send limit (OnError says
    /// <c>NoBufferSpaceAvailable</c>).
    /// </summary>
    private static bool SendFrame(StreamConnection connection, ReadOnlySpan<byte> frame, bool pastLimit)
    {
        if (connection.CurrentConnection is not { } engine)
            return false;
        var status = engine.Send(frame, shared: null, waiter: null, SendMode.Direct, out _, pastLimit);
        if (status == SendStatus.Full)
            engine.ReportSendRefused();
        return status == SendStatus.Accepted;
    }

    /// <summary>Writes a frame: the header, then the payload (masked with a fresh key by a client).</summary>
    private void WriteFrame(SendWriter writer, WsOpcode opcode, bool fin, bool rsv1, ReadOnlySpan<byte> payload)
    {
        var masked = !_isServer;
        var key = masked ? WsMask.NewKey() : 0u;
        var header = WsFrameHeader.Write(writer.GetSpan(WsFrameHeader.MaxHeaderLength), opcode, fin, rsv1, payload.Length, masked, key);
        writer.Advance(header);
        if (!masked)
        {
            writer.Write(payload);
            return;
        }

        var offset = 0;
        while (!payload.IsEmpty)
        {
            var span = writer.GetSpan(Math.Min(payload.Length, DirectTextLimit));
            var part = Math.Min(span.Length, payload.Length);
            offset = WsMask.CopyMasked(payload.Slice(0, part), span, key, offset);
            writer.Advance(part);
            payload = payload.Slice(part);
        }
    }

    /// <summary>Builds an unmasked frame into <paramref name="destination"/> (a server's multicast frame); returns its length.</summary>
    public static int WriteServerFrame(Span<byte> destination, WsOpcode opcode, ReadOnlySpan<byte> payload)
    {
        var header = WsFrameHeader.Write(destination, opcode, fin: true, rsv1: false, payload.Length, masked: false, maskKey: 0);
        payload.CopyTo(destination.Slice(header));
        return header + payload.Length;
    }

    private void LeaveMulticast() => (Connection as StreamSession)?.LeaveMulticast();
}
