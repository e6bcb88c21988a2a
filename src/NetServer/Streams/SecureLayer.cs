using NetServer.Tls;
using System.IO;

namespace NetServer.Streams;

/// <summary>
/// A layer that a connection runs over its socket after a handshake (TLS). Plain TCP and Unix
/// sockets have none: the engine then reads and writes the socket directly. With a layer, the
/// engine holds its send queue until <see cref="AuthenticateAsync"/> has produced the stream, then
/// reads and writes application bytes through that stream; everything else (lifecycle, queue,
/// limits, statistics, hooks) stays the same engine.
/// </summary>
internal abstract class SecureLayer
{
    /// <summary>How long the handshake may take before the connection is closed.</summary>
    public abstract TimeSpan HandshakeTimeout { get; }

    /// <summary>
    /// Runs the handshake over <paramref name="transport"/> (the socket's stream: a NetworkStream,
    /// or the loop's own stream for a connection pinned to a polling loop) and returns the stream
    /// that carries the application bytes. The layer reads the transport through a stream that
    /// reports to <paramref name="gate"/> (see <see cref="ReadGate"/>). Throws when the handshake
    /// fails; <paramref name="cancellationToken"/> fires when the handshake timeout passes.
    /// </summary>
    public abstract Task<Stream> AuthenticateAsync(Stream transport, ReadGate gate, CancellationToken cancellationToken);

    /// <summary>
    /// Ends the layer's side of the stream (TLS: close_notify) before the socket's send side is shut
    /// down. Call it through the <see cref="ReadGate"/> given to <see cref="AuthenticateAsync"/>: the
    /// synchronous part (TLS: OpenSSL's shutdown) must not run while a read decrypts; the returned
    /// task completes once the bytes are written.
    /// </summary>
    public abstract Task ShutdownAsync(Stream stream);

    /// <summary>The protocol version the handshake agreed on, as OpenTelemetry's tls.protocol.version says it ("1.3"); null when unknown.</summary>
    public virtual string? ProtocolVersion(Stream stream) => null;
}
