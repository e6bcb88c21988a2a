using System.Collections.Generic;

namespace NetServer;

/// <summary>
/// The WebSocket settings of a server (for every session it accepts) or of a client: message size
/// limit, close and keep-alive timing, subprotocols, allowed origins and permessage-deflate. Change
/// them before <c>Start</c> (server) or <c>Connect</c> (client); a connection takes a snapshot at
/// its upgrade. Every setter checks its value and throws <see cref="ArgumentOutOfRangeException"/>
/// when it makes no sense. See docs/websocket.md.
/// </summary>
public sealed class WsOptions
{
    /// <summary>The default <see cref="MaxMessageSize"/>: 16 MiB.</summary>
    public const int DefaultMaxMessageSize = 16 * 1024 * 1024;

    private int _maxMessageSize = DefaultMaxMessageSize;
    private TimeSpan _closeTimeout = TimeSpan.FromSeconds(5);
    private TimeSpan _keepAliveInterval = TimeSpan.Zero;
    private TimeSpan _keepAliveTimeout = TimeSpan.FromSeconds(30);
    private TimeSpan _handshakeTimeout = TimeSpan.FromSeconds(30);

    /// <summary>
    /// The largest message accepted, in bytes (after decompression with permessage-deflate). A
    /// frame that would take a message past it closes the connection with 1009 (message too big)
    /// before any of its payload is buffered (compressed data may exceed it by deflate's expansion of
    /// incompressible bytes: an eighth and 1 KiB). Default 16 MiB; at most 2 GiB - 1.
    /// </summary>
    public int MaxMessageSize
    {
        get => _maxMessageSize;
        set => _maxMessageSize = value > 0 ? value : throw new ArgumentOutOfRangeException(nameof(MaxMessageSize), "The maximum message size must be positive.");
    }

    /// <summary>
    /// How long the closing side waits for the peer's close frame (after sending its own), and a
    /// client for the server to close the TCP connection after the close handshake, before it
    /// closes the connection itself. Default 5 s.
    /// </summary>
    public TimeSpan CloseTimeout
    {
        get => _closeTimeout;
        set => _closeTimeout = Positive(value, nameof(CloseTimeout));
    }

    /// <summary>
    /// Sends a ping when nothing was received for this long (<see cref="TimeSpan.Zero"/>, the
    /// default: no keep-alive pings). A peer that then answers nothing within
    /// <see cref="KeepAliveTimeout"/> is disconnected (<see cref="DisconnectReason.TimedOut"/>).
    /// Runs on the shared clock: no timer per connection.
    /// </summary>
    public TimeSpan KeepAliveInterval
    {
        get => _keepAliveInterval;
        set => _keepAliveInterval = value >= TimeSpan.Zero ? value : throw new ArgumentOutOfRangeException(nameof(KeepAliveInterval), "The keep-alive interval cannot be negative.");
    }

    /// <summary>How long a keep-alive ping waits for the peer to send anything (its pong) before the connection is closed. Default 30 s.</summary>
    public TimeSpan KeepAliveTimeout
    {
        get => _keepAliveTimeout;
        set => _keepAliveTimeout = Positive(value, nameof(KeepAliveTimeout));
    }

    /// <summary>A client's limit for the opening handshake (the 101 answer) after connecting, used by the blocking <c>Connect</c> and the awaitable <c>ConnectAsync</c>. Default 30 s.</summary>
    public TimeSpan HandshakeTimeout
    {
        get => _handshakeTimeout;
        set => _handshakeTimeout = Positive(value, nameof(HandshakeTimeout));
    }

    /// <summary>
    /// Subprotocols (Sec-WebSocket-Protocol). A server lists those it speaks, in its order of
    /// preference, and picks the first of them the client offers (none when the client offers none
    /// of them: the upgrade still succeeds, without a subprotocol). A client offers these, in order,
    /// and refuses an answer that names one it did not offer. Empty by default.
    /// </summary>
    public IList<string> SubProtocols { get; } = new List<string>();

    /// <summary>
    /// A server's allowed values of the Origin header (compared without regard to case), such as
    /// "https://example.com". Empty (the default) allows any origin, and requests without one (not
    /// from a browser). An upgrade from another origin is refused with 403. For anything more
    /// elaborate, override <c>OnWsConnecting</c> and return false.
    /// </summary>
    public IList<string> AllowedOrigins { get; } = new List<string>();

    /// <summary>
    /// permessage-deflate (RFC 7692): null (the default) neither offers nor accepts it; set it to
    /// compress messages in both directions when the peer agrees. See docs/websocket-deflate.md for
    /// what it costs in memory and when not to use it.
    /// </summary>
    public WsDeflateOptions? Deflate { get; set; }

    private static TimeSpan Positive(TimeSpan value, string name) =>
        value > TimeSpan.Zero ? value : throw new ArgumentOutOfRangeException(name, "The time must be positive.");
}
