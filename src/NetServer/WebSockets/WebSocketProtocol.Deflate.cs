namespace NetServer.WebSockets;

// permessage-deflate (RFC 7692) on this connection, when the handshake agreed on it: a message is
// compressed whole into one frame with RSV1 set, and a received message with RSV1 set is inflated
// when its last frame arrived, bounded by MaxMessageSize. With context takeover the compressor's
// window spans messages, so the order messages are compressed in must be the order they leave in:
// compressing and queuing a message happen under one lock.
internal sealed partial class WebSocketProtocol
{
    private readonly object _deflateGate = new();
    private WsDeflater? _deflater;
    private WsInflater? _inflater;
    private int _minCompressedSize;

    /// <summary>The extension agreed for the current connection, or null.</summary>
    public WsDeflateParameters? Deflate { get; private set; }

    private void StartDeflate(WsDeflateParameters? agreed)
    {
        StopDeflate();
        Deflate = agreed;
        if (agreed is not { } parameters)
            return;
        var options = _options.Deflate ?? new WsDeflateOptions();
        _minCompressedSize = options.MinMessageSize;
        _deflater = new WsDeflater(options.Level, parameters.ResetsCompressor(_isServer));
        _inflater = new WsInflater(_options.MaxMessageSize, parameters.ResetsDecompressor(_isServer));
    }

    private void StopDeflate()
    {
        lock (_deflateGate)
        {
            _deflater?.Dispose();
            _deflater = null;
        }

        _inflater?.Dispose();
        _inflater = null;
    }

    private bool ShouldCompress(WsOpcode opcode, int length) =>
        _deflater is not null && opcode is WsOpcode.Text or WsOpcode.Binary && length >= _minCompressedSize;

    private bool SendCompressed(StreamConnection connection, WsOpcode opcode, ReadOnlySpan<byte> payload)
    {
        bool sent;
        lock (_deflateGate)
        {
            if (_deflater is not { } deflater)
                return false;
            var compressed = deflater.Compress(payload);
            using var writer = connection.StartSend(WsFrameHeader.MaxHeaderLength + compressed.Length);
            WriteFrame(writer, opcode, fin: true, rsv1: true, compressed);
            sent = writer.Commit();
        }

        if (!sent)
            LostCompressedMessage(connection);
        return sent;
    }

    private ValueTask<bool> SendCompressedAsync(StreamConnection connection, WsOpcode opcode, ReadOnlySpan<byte> payload, CancellationToken cancellationToken)
    {
        ValueTask<bool> sending;
        lock (_deflateGate)
        {
            if (_deflater is not { } deflater)
                return new ValueTask<bool>(false);
            var compressed = deflater.Compress(payload);
            using var writer = connection.StartSend(WsFrameHeader.MaxHeaderLength + compressed.Length);
            WriteFrame(writer, opcode, fin: true, rsv1: true, compressed);
            sending = writer.CommitAsync(cancellationToken); // queued or parked in order before the lock is let go
        }

        return AwaitSent(connection, sending); // completes at once, without allocating, when the message was queued at once
    }

    private async ValueTask<bool> AwaitSent(StreamConnection connection, ValueTask<bool> sending)
    {
        try
        {
            var sent = await sending.ConfigureAwait(false);
            if (!sent)
                LostCompressedMessage(connection);
            return sent;
        }
        catch (OperationCanceledException)
        {
            LostCompressedMessage(connection);
            throw;
        }
    }

    /// <summary>
    /// A compressed message was refused after it went through the compressor: with a shared window
    /// the peer could no longer inflate what follows, so the connection cannot go on.
    /// </summary>
    private void LostCompressedMessage(StreamConnection connection)
    {
        if (Deflate is { } parameters && !parameters.ResetsCompressor(_isServer))
            connection.DisconnectOnProtocolError("A compressed message was refused by the send queue; with context takeover the stream cannot go on without it.");
    }
}
