using NetServer.WebSockets;

namespace NetServer;

// What WsServer (TCP, Unix sockets) and WssServer (TLS) have in common: the WebSocket settings, the
// close handshake with every session, multicast frames built once, the stop that says going away.
// Not compiled as it is: SharedMembersGenerator (src/NetServer.Generators) copies this class's
// members into a partial declaration of each class named below.
[SharedMembers("WsServer", "WssServer")]
internal partial class WsServerMembers
{
    /// <summary>The WebSocket settings of every session (read at each upgrade): message size, timeouts, subprotocols, origins, permessage-deflate.</summary>
    public WsOptions WsOptions { get; } = new();

    /// <summary>Starts the close handshake with every WebSocket session, with 1000 (normal closure).</summary>
    public virtual bool CloseAll() => CloseAll(WsCloseStatus.Normal);

    /// <summary>Starts the close handshake with every WebSocket session, with <paramref name="status"/>; each closes once its peer answers (or after <see cref="WsOptions.CloseTimeout"/>).</summary>
    public virtual bool CloseAll(int status) => WsServerFrames.CloseAll(Sessions.Values, status, ReadOnlySpan<byte>.Empty);

    /// <summary>Starts the close handshake with every WebSocket session, with <paramref name="status"/> and a reason (UTF-8, at most 123 bytes).</summary>
    public virtual bool CloseAll(int status, byte[] buffer) => WsServerFrames.CloseAll(Sessions.Values, status, (ReadOnlySpan<byte>)buffer);

    /// <inheritdoc cref="CloseAll(int, byte[])"/>
    public virtual bool CloseAll(int status, byte[] buffer, long offset, long size) => WsServerFrames.CloseAll(Sessions.Values, status, WebSocketProtocol.Slice(buffer, offset, size));

    /// <inheritdoc cref="CloseAll(int, byte[])"/>
    public virtual bool CloseAll(int status, ReadOnlySpan<byte> buffer) => WsServerFrames.CloseAll(Sessions.Values, status, buffer);

    /// <inheritdoc cref="CloseAll(int, byte[])"/>
    public virtual bool CloseAll(int status, string text) => WsServerFrames.CloseAll(Sessions.Values, status, WebSocketProtocol.Utf8(text.AsSpan(), stackalloc byte[3 * WebSocketProtocol.MaxCloseReasonChars]));

    /// <inheritdoc cref="CloseAll(int, byte[])"/>
    public virtual bool CloseAll(int status, ReadOnlySpan<char> text) => WsServerFrames.CloseAll(Sessions.Values, status, WebSocketProtocol.Utf8(text, stackalloc byte[3 * WebSocketProtocol.MaxCloseReasonChars]));

    /// <summary>Sends a text message (bytes given must be UTF-8) to every WebSocket session: one frame built once and shared; false if the server is not started.</summary>
    public bool MulticastText(byte[] buffer) => WsServerFrames.Multicast(this, WsOpcode.Text, (ReadOnlySpan<byte>)buffer);

    /// <inheritdoc cref="MulticastText(byte[])"/>
    public bool MulticastText(byte[] buffer, long offset, long size) => WsServerFrames.Multicast(this, WsOpcode.Text, WebSocketProtocol.Slice(buffer, offset, size));

    /// <inheritdoc cref="MulticastText(byte[])"/>
    public bool MulticastText(ReadOnlySpan<byte> buffer) => WsServerFrames.Multicast(this, WsOpcode.Text, buffer);

    /// <inheritdoc cref="MulticastText(byte[])"/>
    public bool MulticastText(string text) => WsServerFrames.Multicast(this, WsOpcode.Text, text.AsSpan());

    /// <inheritdoc cref="MulticastText(byte[])"/>
    public bool MulticastText(ReadOnlySpan<char> text) => WsServerFrames.Multicast(this, WsOpcode.Text, text);

    /// <summary>Sends a binary message to every WebSocket session: one frame built once and shared; false if the server is not started.</summary>
    public bool MulticastBinary(byte[] buffer) => WsServerFrames.Multicast(this, WsOpcode.Binary, (ReadOnlySpan<byte>)buffer);

    /// <inheritdoc cref="MulticastBinary(byte[])"/>
    public bool MulticastBinary(byte[] buffer, long offset, long size) => WsServerFrames.Multicast(this, WsOpcode.Binary, WebSocketProtocol.Slice(buffer, offset, size));

    /// <inheritdoc cref="MulticastBinary(byte[])"/>
    public bool MulticastBinary(ReadOnlySpan<byte> buffer) => WsServerFrames.Multicast(this, WsOpcode.Binary, buffer);

    /// <inheritdoc cref="MulticastBinary(byte[])"/>
    public bool MulticastBinary(string text) => WsServerFrames.Multicast(this, WsOpcode.Binary, text.AsSpan());

    /// <inheritdoc cref="MulticastBinary(byte[])"/>
    public bool MulticastBinary(ReadOnlySpan<char> text) => WsServerFrames.Multicast(this, WsOpcode.Binary, text);

    /// <summary>Sends a ping (at most 125 bytes) to every WebSocket session: one frame built once and shared; false if the server is not started.</summary>
    public bool MulticastPing(byte[] buffer) => WsServerFrames.Multicast(this, WsOpcode.Ping, (ReadOnlySpan<byte>)buffer);

    /// <inheritdoc cref="MulticastPing(byte[])"/>
    public bool MulticastPing(byte[] buffer, long offset, long size) => WsServerFrames.Multicast(this, WsOpcode.Ping, WebSocketProtocol.Slice(buffer, offset, size));

    /// <inheritdoc cref="MulticastPing(byte[])"/>
    public bool MulticastPing(ReadOnlySpan<byte> buffer) => WsServerFrames.Multicast(this, WsOpcode.Ping, buffer);

    /// <inheritdoc cref="MulticastPing(byte[])"/>
    public bool MulticastPing(string text) => WsServerFrames.Multicast(this, WsOpcode.Ping, text.AsSpan());

    /// <inheritdoc cref="MulticastPing(byte[])"/>
    public bool MulticastPing(ReadOnlySpan<char> text) => WsServerFrames.Multicast(this, WsOpcode.Ping, text);

    /// <summary>
    /// Stops as the base server does, after saying "going away" (1001) to every WebSocket session
    /// and letting what their connections queued go out (as <c>DisconnectAll</c> does): a plain stop
    /// drops queued bytes, and peers would see the connection end without a close frame (1006).
    /// </summary>
    /// <returns>True if stopped; false if not started.</returns>
    public override bool Stop()
    {
        if (IsStarted)
        {
            WsServerFrames.CloseAll(Sessions.Values, WsCloseStatus.GoingAway, "Server stopping"u8);
            DisconnectAll();
        }

        return base.Stop();
    }
}
