using System.Collections.Generic;
using System.Net.WebSockets;
using NetServer.WebSockets;

namespace NetServer;

// What WsSession, WssSession, WsClient and WssClient have in common: NetCoreServer's WebSocket surface
// and the hooks, forwarded to the WebSocketProtocol each hosts (`_ws`).
// Not compiled as it is: SharedMembersGenerator (src/NetServer.Generators) copies this class's
// members into a partial declaration of each class named below.
[SharedMembers("WsSession", "WssSession", "WsClient", "WssClient")]
internal partial class WsEndpointMembers
{
    /// <summary>True once the server accepted the upgrade, until the connection ends.</summary>
    public bool IsWebSocket => _ws.IsUpgraded;

    /// <summary>The subprotocol the server chose, or null.</summary>
    public string? WsSubProtocol => _ws.SubProtocol;

    /// <summary>Whether permessage-deflate was agreed in the handshake.</summary>
    public bool IsWsCompressed => _ws.Deflate is not null;

    WebSocketProtocol IWsEndpoint.WebSocket => _ws;

    /// <summary>Starts the close handshake with 1000 (normal closure): a close frame, then the connection closes once the peer answers, or after <see cref="WsOptions.CloseTimeout"/>; false if not upgraded or closing already.</summary>
    public bool Close() => _ws.Close(WsCloseStatus.Normal, ReadOnlySpan<byte>.Empty);

    /// <summary>Starts the close handshake with <paramref name="status"/> (see <see cref="WsCloseStatus"/>).</summary>
    public bool Close(int status) => _ws.Close(status, ReadOnlySpan<byte>.Empty);

    /// <summary>Starts the close handshake with <paramref name="status"/> and a reason (UTF-8, at most 123 bytes).</summary>
    public bool Close(int status, byte[] buffer) => _ws.Close(status, (ReadOnlySpan<byte>)buffer);

    /// <inheritdoc cref="Close(int, byte[])"/>
    public bool Close(int status, byte[] buffer, long offset, long size) => _ws.Close(status, WebSocketProtocol.Slice(buffer, offset, size));

    /// <inheritdoc cref="Close(int, byte[])"/>
    public bool Close(int status, ReadOnlySpan<byte> buffer) => _ws.Close(status, buffer);

    /// <inheritdoc cref="Close(int, byte[])"/>
    public bool Close(int status, string text) => _ws.Close(status, WebSocketProtocol.Utf8(text.AsSpan(), stackalloc byte[3 * WebSocketProtocol.MaxCloseReasonChars]));

    /// <inheritdoc cref="Close(int, byte[])"/>
    public bool Close(int status, ReadOnlySpan<char> text) => _ws.Close(status, WebSocketProtocol.Utf8(text, stackalloc byte[3 * WebSocketProtocol.MaxCloseReasonChars]));

    /// <summary>Sends a close frame with <paramref name="status"/> and a reason (UTF-8, at most 123 bytes), as <c>Close</c> does; returns the frame's payload size, 0 when a close frame was sent already.</summary>
    public long SendClose(int status, byte[] buffer) => _ws.SendClose(status, (ReadOnlySpan<byte>)buffer);

    /// <inheritdoc cref="SendClose(int, byte[])"/>
    public long SendClose(int status, byte[] buffer, long offset, long size) => _ws.SendClose(status, WebSocketProtocol.Slice(buffer, offset, size));

    /// <inheritdoc cref="SendClose(int, byte[])"/>
    public long SendClose(int status, ReadOnlySpan<byte> buffer) => _ws.SendClose(status, buffer);

    /// <inheritdoc cref="SendClose(int, byte[])"/>
    public long SendClose(int status, string text) => _ws.SendClose(status, WebSocketProtocol.Utf8(text.AsSpan(), stackalloc byte[3 * WebSocketProtocol.MaxCloseReasonChars]));

    /// <inheritdoc cref="SendClose(int, byte[])"/>
    public long SendClose(int status, ReadOnlySpan<char> text) => _ws.SendClose(status, WebSocketProtocol.Utf8(text, stackalloc byte[3 * WebSocketProtocol.MaxCloseReasonChars]));

    /// <summary>Sends a close frame with <paramref name="status"/> and a reason without waiting; false when a close frame was sent already.</summary>
    public bool SendCloseAsync(int status, byte[] buffer) => _ws.SendClose(status, (ReadOnlySpan<byte>)buffer) > 0;

    /// <inheritdoc cref="SendCloseAsync(int, byte[])"/>
    public bool SendCloseAsync(int status, byte[] buffer, long offset, long size) => _ws.SendClose(status, WebSocketProtocol.Slice(buffer, offset, size)) > 0;

    /// <inheritdoc cref="SendCloseAsync(int, byte[])"/>
    public bool SendCloseAsync(int status, ReadOnlySpan<byte> buffer) => _ws.SendClose(status, buffer) > 0;

    /// <inheritdoc cref="SendCloseAsync(int, byte[])"/>
    public bool SendCloseAsync(int status, string text) => _ws.SendClose(status, WebSocketProtocol.Utf8(text.AsSpan(), stackalloc byte[3 * WebSocketProtocol.MaxCloseReasonChars])) > 0;

    /// <inheritdoc cref="SendCloseAsync(int, byte[])"/>
    public bool SendCloseAsync(int status, ReadOnlySpan<char> text) => _ws.SendClose(status, WebSocketProtocol.Utf8(text, stackalloc byte[3 * WebSocketProtocol.MaxCloseReasonChars])) > 0;

    /// <summary>
    /// Sends a message, or a part of one (<paramref name="endOfMessage"/> false: more parts follow,
    /// each its own frame, of the same type; no other message may be sent until the last part),
    /// waiting for room in the send queue instead of refusing (backpressure).
    /// </summary>
    /// <returns>True once queued; false when not connected or closing.</returns>
    /// <exception cref="OperationCanceledException"><paramref name="cancellationToken"/> fired while waiting; nothing was sent.</exception>
    public ValueTask<bool> SendMessageAsync(ReadOnlyMemory<byte> payload, WebSocketMessageType type = WebSocketMessageType.Binary, bool endOfMessage = true, CancellationToken cancellationToken = default) =>
        _ws.SendAsync(payload, type, endOfMessage, cancellationToken);

    /// <summary>Sends a text message, waiting for room in the send queue (backpressure).</summary>
    public ValueTask<bool> SendMessageAsync(string text, CancellationToken cancellationToken = default) =>
        _ws.SendAsync(TextEncoding.Utf8.GetBytes(text), WebSocketMessageType.Text, true, cancellationToken);

    /// <summary>
    /// The next message (its <see cref="ReceivedMessage.IsText"/> says the type), in order, unless
    /// the receive hooks are overridden. A client queues every message for it from the start; a
    /// session from the first call of this or another receive method. Dispose it when done (its
    /// bytes are pooled). One reader at a time.
    /// </summary>
    /// <exception cref="System.IO.IOException">The connection closed and no message is left.</exception>
    /// <exception cref="OperationCanceledException"><paramref name="cancellationToken"/> fired while waiting.</exception>
    public ValueTask<ReceivedMessage> ReceiveMessageAsync(CancellationToken cancellationToken = default) => _ws.ReceiveAsync(cancellationToken);

    /// <summary>Every message until the connection closes (the sequence then ends), as <see cref="ReceiveMessageAsync"/> gives them.</summary>
    public IAsyncEnumerable<ReceivedMessage> ReceiveAllAsync(CancellationToken cancellationToken = default) => _ws.ReceiveAllAsync(cancellationToken);

    /// <summary>Blocks until the next message arrives and returns it as text (empty when the connection closed), as NetCoreServer does; not from inside a hook.</summary>
    public string ReceiveText() => _ws.ReceiveText();

    /// <summary>Blocks until the next message arrives and returns its bytes (empty when the connection closed); not from inside a hook.</summary>
    public Buffer ReceiveBinary() => _ws.ReceiveBinary();

    /// <summary>Sends a text message (bytes given must be UTF-8), queued as one frame; returns its payload size, 0 when not sent (not connected, closing, or over the send limit).</summary>
    public long SendText(byte[] buffer) => _ws.Send(WsOpcode.Text, (ReadOnlySpan<byte>)buffer) ? buffer.Length : 0;

    /// <inheritdoc cref="SendText(byte[])"/>
    public long SendText(byte[] buffer, long offset, long size) => _ws.Send(WsOpcode.Text, buffer, offset, size) ? size : 0;

    /// <inheritdoc cref="SendText(byte[])"/>
    public long SendText(ReadOnlySpan<byte> buffer) => _ws.Send(WsOpcode.Text, buffer) ? buffer.Length : 0;

    /// <inheritdoc cref="SendText(byte[])"/>
    public long SendText(string text) => Math.Max(_ws.Send(WsOpcode.Text, text.AsSpan()), 0);

    /// <inheritdoc cref="SendText(byte[])"/>
    public long SendText(ReadOnlySpan<char> text) => Math.Max(_ws.Send(WsOpcode.Text, text), 0);

    /// <summary>Sends a text message (bytes given must be UTF-8) without waiting; false when not connected, closing, or over the send limit.</summary>
    public bool SendTextAsync(byte[] buffer) => _ws.Send(WsOpcode.Text, (ReadOnlySpan<byte>)buffer);

    /// <inheritdoc cref="SendTextAsync(byte[])"/>
    public bool SendTextAsync(byte[] buffer, long offset, long size) => _ws.Send(WsOpcode.Text, buffer, offset, size);

    /// <inheritdoc cref="SendTextAsync(byte[])"/>
    public bool SendTextAsync(ReadOnlySpan<byte> buffer) => _ws.Send(WsOpcode.Text, buffer);

    /// <inheritdoc cref="SendTextAsync(byte[])"/>
    public bool SendTextAsync(string text) => _ws.Send(WsOpcode.Text, text.AsSpan()) >= 0;

    /// <inheritdoc cref="SendTextAsync(byte[])"/>
    public bool SendTextAsync(ReadOnlySpan<char> text) => _ws.Send(WsOpcode.Text, text) >= 0;

    /// <summary>Sends a binary message, queued as one frame; returns its payload size, 0 when not sent (not connected, closing, or over the send limit).</summary>
    public long SendBinary(byte[] buffer) => _ws.Send(WsOpcode.Binary, (ReadOnlySpan<byte>)buffer) ? buffer.Length : 0;

    /// <inheritdoc cref="SendBinary(byte[])"/>
    public long SendBinary(byte[] buffer, long offset, long size) => _ws.Send(WsOpcode.Binary, buffer, offset, size) ? size : 0;

    /// <inheritdoc cref="SendBinary(byte[])"/>
    public long SendBinary(ReadOnlySpan<byte> buffer) => _ws.Send(WsOpcode.Binary, buffer) ? buffer.Length : 0;

    /// <inheritdoc cref="SendBinary(byte[])"/>
    public long SendBinary(string text) => Math.Max(_ws.Send(WsOpcode.Binary, text.AsSpan()), 0);

    /// <inheritdoc cref="SendBinary(byte[])"/>
    public long SendBinary(ReadOnlySpan<char> text) => Math.Max(_ws.Send(WsOpcode.Binary, text), 0);

    /// <summary>Sends a binary message without waiting; false when not connected, closing, or over the send limit.</summary>
    public bool SendBinaryAsync(byte[] buffer) => _ws.Send(WsOpcode.Binary, (ReadOnlySpan<byte>)buffer);

    /// <inheritdoc cref="SendBinaryAsync(byte[])"/>
    public bool SendBinaryAsync(byte[] buffer, long offset, long size) => _ws.Send(WsOpcode.Binary, buffer, offset, size);

    /// <inheritdoc cref="SendBinaryAsync(byte[])"/>
    public bool SendBinaryAsync(ReadOnlySpan<byte> buffer) => _ws.Send(WsOpcode.Binary, buffer);

    /// <inheritdoc cref="SendBinaryAsync(byte[])"/>
    public bool SendBinaryAsync(string text) => _ws.Send(WsOpcode.Binary, text.AsSpan()) >= 0;

    /// <inheritdoc cref="SendBinaryAsync(byte[])"/>
    public bool SendBinaryAsync(ReadOnlySpan<char> text) => _ws.Send(WsOpcode.Binary, text) >= 0;

    /// <summary>Sends a ping (at most 125 bytes), queued as one frame; returns its payload size, 0 when not sent (not connected, closing, or over the send limit).</summary>
    public long SendPing(byte[] buffer) => _ws.Send(WsOpcode.Ping, (ReadOnlySpan<byte>)buffer) ? buffer.Length : 0;

    /// <inheritdoc cref="SendPing(byte[])"/>
    public long SendPing(byte[] buffer, long offset, long size) => _ws.Send(WsOpcode.Ping, buffer, offset, size) ? size : 0;

    /// <inheritdoc cref="SendPing(byte[])"/>
    public long SendPing(ReadOnlySpan<byte> buffer) => _ws.Send(WsOpcode.Ping, buffer) ? buffer.Length : 0;

    /// <inheritdoc cref="SendPing(byte[])"/>
    public long SendPing(string text) => Math.Max(_ws.Send(WsOpcode.Ping, text.AsSpan()), 0);

    /// <inheritdoc cref="SendPing(byte[])"/>
    public long SendPing(ReadOnlySpan<char> text) => Math.Max(_ws.Send(WsOpcode.Ping, text), 0);

    /// <summary>Sends a ping (at most 125 bytes) without waiting; false when not connected, closing, or over the send limit.</summary>
    public bool SendPingAsync(byte[] buffer) => _ws.Send(WsOpcode.Ping, (ReadOnlySpan<byte>)buffer);

    /// <inheritdoc cref="SendPingAsync(byte[])"/>
    public bool SendPingAsync(byte[] buffer, long offset, long size) => _ws.Send(WsOpcode.Ping, buffer, offset, size);

    /// <inheritdoc cref="SendPingAsync(byte[])"/>
    public bool SendPingAsync(ReadOnlySpan<byte> buffer) => _ws.Send(WsOpcode.Ping, buffer);

    /// <inheritdoc cref="SendPingAsync(byte[])"/>
    public bool SendPingAsync(string text) => _ws.Send(WsOpcode.Ping, text.AsSpan()) >= 0;

    /// <inheritdoc cref="SendPingAsync(byte[])"/>
    public bool SendPingAsync(ReadOnlySpan<char> text) => _ws.Send(WsOpcode.Ping, text) >= 0;

    /// <summary>Sends a pong (at most 125 bytes), queued as one frame; returns its payload size, 0 when not sent (not connected, closing, or over the send limit).</summary>
    public long SendPong(byte[] buffer) => _ws.Send(WsOpcode.Pong, (ReadOnlySpan<byte>)buffer) ? buffer.Length : 0;

    /// <inheritdoc cref="SendPong(byte[])"/>
    public long SendPong(byte[] buffer, long offset, long size) => _ws.Send(WsOpcode.Pong, buffer, offset, size) ? size : 0;

    /// <inheritdoc cref="SendPong(byte[])"/>
    public long SendPong(ReadOnlySpan<byte> buffer) => _ws.Send(WsOpcode.Pong, buffer) ? buffer.Length : 0;

    /// <inheritdoc cref="SendPong(byte[])"/>
    public long SendPong(string text) => Math.Max(_ws.Send(WsOpcode.Pong, text.AsSpan()), 0);

    /// <inheritdoc cref="SendPong(byte[])"/>
    public long SendPong(ReadOnlySpan<char> text) => Math.Max(_ws.Send(WsOpcode.Pong, text), 0);

    /// <summary>Sends a pong (at most 125 bytes) without waiting; false when not connected, closing, or over the send limit.</summary>
    public bool SendPongAsync(byte[] buffer) => _ws.Send(WsOpcode.Pong, (ReadOnlySpan<byte>)buffer);

    /// <inheritdoc cref="SendPongAsync(byte[])"/>
    public bool SendPongAsync(byte[] buffer, long offset, long size) => _ws.Send(WsOpcode.Pong, buffer, offset, size);

    /// <inheritdoc cref="SendPongAsync(byte[])"/>
    public bool SendPongAsync(ReadOnlySpan<byte> buffer) => _ws.Send(WsOpcode.Pong, buffer);

    /// <inheritdoc cref="SendPongAsync(byte[])"/>
    public bool SendPongAsync(string text) => _ws.Send(WsOpcode.Pong, text.AsSpan()) >= 0;

    /// <inheritdoc cref="SendPongAsync(byte[])"/>
    public bool SendPongAsync(ReadOnlySpan<char> text) => _ws.Send(WsOpcode.Pong, text) >= 0;

    /// <inheritdoc/>
    public virtual bool OnWsConnecting(HttpRequest request, HttpResponse response) => true;

    /// <inheritdoc/>
    public virtual void OnWsConnecting(HttpRequest request)
    {
    }

    /// <inheritdoc/>
    public virtual void OnWsConnected(HttpResponse response)
    {
    }

    /// <inheritdoc/>
    public virtual void OnWsConnected(HttpRequest request)
    {
    }

    /// <inheritdoc/>
    public virtual void OnWsDisconnecting()
    {
    }

    /// <inheritdoc/>
    public virtual void OnWsDisconnected()
    {
    }

    /// <summary>
    /// A whole message arrived (valid during the call only); the default queues a copy for
    /// <see cref="ReceiveMessageAsync"/> (on a session, once a receive method was called; otherwise it is dropped).
    /// </summary>
    public virtual void OnWsReceived(byte[] buffer, long offset, long size) => _ws.Enqueue(buffer, offset, size);

    /// <inheritdoc/>
    public virtual void OnWsReceived(WebSocketMessageType type, byte[] buffer, long offset, long size) => OnWsReceived(buffer, offset, size);

    /// <inheritdoc/>
    public virtual void OnWsClose(byte[] buffer, long offset, long size, int status = WsCloseStatus.Normal)
    {
    }

    /// <inheritdoc/>
    public virtual void OnWsPing(byte[] buffer, long offset, long size) => SendPongAsync(buffer, offset, size);

    /// <inheritdoc/>
    public virtual void OnWsPong(byte[] buffer, long offset, long size)
    {
    }

    /// <inheritdoc/>
    public virtual void OnWsError(string error)
    {
    }

    /// <inheritdoc/>
    public virtual void OnWsError(SocketError error)
    {
    }

    internal override void InvokeDisconnecting()
    {
        _ws.Disconnecting();
        base.InvokeDisconnecting();
    }

    internal override void InvokeError(SocketError error)
    {
        base.InvokeError(error);
        _ws.Error(error);
    }

    /// <inheritdoc/>
    protected override void Dispose(bool disposingManagedResources)
    {
        base.Dispose(disposingManagedResources);
        if (disposingManagedResources)
            _ws.Dispose();
    }
}
