using System.Buffers;
using System.Collections.Generic;

namespace NetServer.WebSockets;

/// <summary>
/// What <see cref="WsServer"/> and <c>WssServer</c> do for all their sessions, written once: a
/// multicast frame built once and shared by every upgraded session (server frames are not masked,
/// so one copy serves all), and the close handshake with each of them.
/// </summary>
internal static class WsServerFrames
{
    /// <summary>Builds one unmasked frame of <paramref name="payload"/> and multicasts it to the upgraded sessions.</summary>
    public static bool Multicast<TSession>(StreamServer<TSession> server, WsOpcode opcode, ReadOnlySpan<byte> payload)
        where TSession : StreamSession
    {
        if (WsOpcodes.IsControl(opcode) && payload.Length > 125)
            ThrowHelper.ThrowArgumentOutOfRange(nameof(payload), "A ping carries at most 125 bytes.");
        var frame = ArrayPool<byte>.Shared.Rent(WsFrameHeader.MaxHeaderLength + payload.Length);
        try
        {
            var length = WebSocketProtocol.WriteServerFrame(frame, opcode, payload);
            using (Diagnostics.MulticastKind.Of(WsOpcodes.IsControl(opcode) ? -1 : Diagnostics.MessageMetrics.WebSocket))
                return server.Multicast(new ReadOnlySpan<byte>(frame, 0, length)); // one shared copy for every session
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(frame);
        }
    }

    /// <summary>As <see cref="Multicast{TSession}(StreamServer{TSession}, WsOpcode, ReadOnlySpan{byte})"/> for text encoded as UTF-8.</summary>
    public static bool Multicast<TSession>(StreamServer<TSession> server, WsOpcode opcode, ReadOnlySpan<char> text)
        where TSession : StreamSession
    {
        var length = text.IsEmpty ? 0 : TextEncoding.ByteCount(text);
        if (WsOpcodes.IsControl(opcode) && length > 125)
            ThrowHelper.ThrowArgumentOutOfRange(nameof(text), "A ping carries at most 125 bytes.");
        var frame = ArrayPool<byte>.Shared.Rent(WsFrameHeader.MaxHeaderLength + length);
        try
        {
            var header = WsFrameHeader.Write(frame, opcode, fin: true, rsv1: false, length, masked: false, maskKey: 0);
            TextEncoding.Encode(text, frame.AsSpan(header));
            using (Diagnostics.MulticastKind.Of(WsOpcodes.IsControl(opcode) ? -1 : Diagnostics.MessageMetrics.WebSocket))
                return server.Multicast(new ReadOnlySpan<byte>(frame, 0, header + length));
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(frame);
        }
    }

    /// <summary>Starts the close handshake with every upgraded session; false when there was none to close.</summary>
    public static bool CloseAll<TSession>(IEnumerable<TSession> sessions, int status, ReadOnlySpan<byte> reason)
    {
        WebSocketProtocol.CheckReason(reason); // the same answer to a bad reason with no session as with many
        var closed = false;
        foreach (var session in sessions)
        {
            if (session is IWsEndpoint endpoint)
                closed |= endpoint.WebSocket.Close(status, reason);
        }

        return closed;
    }
}

/// <summary>A WebSocket session or client: the protocol it hosts.</summary>
internal interface IWsEndpoint
{
    WebSocketProtocol WebSocket { get; }
}
