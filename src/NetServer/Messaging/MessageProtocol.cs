using System.Buffers;
using System.Buffers.Binary;
using NetServer.Messaging;

namespace NetServer;

/// <summary>
/// Length-prefixed messages over any stream connection (TCP, TLS, Unix domain sockets; sessions
/// and clients): each message is a 4-byte little-endian length, then that many bytes. Every
/// message sent arrives whole, as one <see cref="OnMessage"/> call, never interleaved with
/// another, from any number of sending threads. See docs/messaging.md.
/// </summary>
/// <remarks>
/// <para>Host it on any connection by setting <see cref="StreamConnection.Protocol"/>, or use the
/// ready-made <see cref="MessageServer"/>, <see cref="MessageSession"/> and <c>MessageClient</c>.</para>
/// <para>Receiving: a message is handed to <see cref="OnMessage"/> straight from the connection's
/// pooled receive buffer when it fits there (<see cref="StreamConnection.ReceiveRetentionLimit"/>,
/// 64 KiB by default); a longer one is reassembled in pooled memory that grows as its bytes arrive,
/// up to <see cref="MaxMessageSize"/>. A negative length or one over the maximum closes the
/// connection with <see cref="DisconnectReason.ProtocolError"/> before anything is allocated for it.</para>
/// <para>Sending: each send is one unit in the connection's send queue; under load many messages
/// leave in one socket write, and sends made inside a hook go out together when it returns.</para>
/// </remarks>
public class MessageProtocol : StreamProtocol
{
    /// <summary>Default for <see cref="MaxMessageSize"/>: 16 MiB.</summary>
    public const int DefaultMaxMessageSize = 16 * 1024 * 1024;

    /// <summary>Bytes of the length prefix in front of every message.</summary>
    public const int HeaderSize = MessageReader.HeaderSize;

    // Messages up to this size (with their prefix) are framed on the stack and sent as one span.
    private const int StackFrame = 1024;

    private MessageReader _reader;
    private int _maxMessageSize = DefaultMaxMessageSize;

    /// <summary>
    /// The largest message accepted from the peer, in bytes (default 16 MiB, at most
    /// <see cref="int.MaxValue"/>, 2 GiB - 1). A longer announced length closes the connection with
    /// <see cref="DisconnectReason.ProtocolError"/>. Sends are not limited by it.
    /// </summary>
    public int MaxMessageSize
    {
        get => _maxMessageSize;
        set
        {
            if (value < 0)
                ThrowHelper.ThrowArgumentOutOfRange(nameof(MaxMessageSize), "The maximum message size cannot be negative.");
            _maxMessageSize = value;
        }
    }

    /// <summary>
    /// Called with every message received, whole, in order, never concurrently with itself. The span
    /// is valid only during the call: copy what you keep. Sends made here go out together when the
    /// call returns. Calling <see cref="StreamConnection.PauseReceiving"/> here stops delivery after
    /// this message; the next ones follow on resume.
    /// </summary>
    protected virtual void OnMessage(ReadOnlySpan<byte> message)
    {
    }

    /// <inheritdoc/>
    protected internal sealed override int OnReceived(ReadOnlySpan<byte> data)
    {
        var connection = Connection;
        if (connection is null)
            return data.Length;
        var retention = connection.ReceiveRetentionLimit;
        var consumed = 0;
        while (true)
        {
            var status = _reader.Read(data.Slice(consumed), _maxMessageSize, retention, out var message, out var used);
            consumed += used;
            if (status == MessageReadStatus.NeedMoreData)
                return consumed;
            if (status == MessageReadStatus.InvalidLength)
            {
                connection.DisconnectOnProtocolError(_reader.Error!);
                return data.Length;
            }

            try
            {
                OnMessage(message);
            }
            finally
            {
                _reader.ReleaseMessage();
            }

            // Stop after this message when the handler paused, closed or replaced the protocol.
            if (!ReferenceEquals(Connection, connection) || connection.IsReceivingPaused || !connection.IsConnected)
                return consumed;
        }
    }

    internal override void InvokeDisconnected(DisconnectReason reason)
    {
        _reader.Reset(); // a message being reassembled gives its pooled memory back
        base.InvokeDisconnected(reason);
    }

    internal override void InvokeDetached()
    {
        _reader.Reset();
        base.InvokeDetached();
    }

    // --- Sending ---

    /// <summary>Sends <paramref name="message"/> as one message (queued; see <see cref="SendAsync(ReadOnlySpan{byte})"/>).</summary>
    public bool SendAsync(byte[] message)
    {
        if (message is null)
            ThrowHelper.ThrowArgumentNull(nameof(message));
        return SendAsync(new ReadOnlySpan<byte>(message));
    }

    /// <summary>Sends <paramref name="count"/> bytes of <paramref name="buffer"/> from <paramref name="offset"/> as one message.</summary>
    public bool SendAsync(byte[] buffer, int offset, int count) => SendAsync(new ReadOnlySpan<byte>(buffer, offset, count));

    /// <summary>Sends UTF-8 <paramref name="text"/> as one message.</summary>
    public bool SendAsync(string text)
    {
        if (text is null)
            ThrowHelper.ThrowArgumentNull(nameof(text));
        using var writer = BeginMessage(TextEncoding.MaxByteCount(text.Length));
        var span = writer.GetSpan(TextEncoding.MaxByteCount(text.Length));
        writer.Advance(TextEncoding.Encode(text.AsSpan(), span));
        return writer.Commit();
    }

    /// <summary>
    /// Sends <paramref name="message"/> as one message without waiting: it is copied into the send
    /// queue (or written straight to the socket when the queue is idle).
    /// </summary>
    /// <returns>True if accepted; false if not connected, or when the connection's send limit
    /// (<see cref="StreamConnection.OptionSendBufferLimit"/>) refused it (the connection's OnError
    /// says <c>NoBufferSpaceAvailable</c>); use <see cref="SendAsync(ReadOnlyMemory{byte}, CancellationToken)"/> to wait for room instead.</returns>
    public bool SendAsync(ReadOnlySpan<byte> message)
    {
        var connection = Connection;
        if (connection is null)
            return false;
        if (message.Length <= StackFrame - HeaderSize)
        {
            Span<byte> frame = stackalloc byte[HeaderSize + message.Length];
            BinaryPrimitives.WriteInt32LittleEndian(frame, message.Length);
            message.CopyTo(frame.Slice(HeaderSize));
            return connection.SendAsync(frame);
        }

        using var writer = BeginMessage(message.Length);
        writer.Write(message);
        return writer.Commit();
    }

    /// <summary>Sends the parts of <paramref name="message"/> as one message (a header and a body, say), never interleaved with another send.</summary>
    public bool SendAsync(ReadOnlySequence<byte> message)
    {
        using var writer = BeginMessage((int)Math.Min(message.Length, int.MaxValue - HeaderSize));
        foreach (var part in message)
            writer.Write(part.Span);
        return writer.Commit();
    }

    /// <summary>
    /// Sends <paramref name="message"/> as one message with backpressure: completes when the
    /// message is accepted within the connection's send limit, at once when there is room,
    /// otherwise once enough queued bytes went out. <paramref name="message"/> may be reused when
    /// the task completes.
    /// </summary>
    /// <returns>True once accepted; false if the connection is closed (or closes while waiting).</returns>
    /// <exception cref="OperationCanceledException"><paramref name="cancellationToken"/> fired while waiting; nothing was sent.</exception>
    public ValueTask<bool> SendAsync(ReadOnlyMemory<byte> message, CancellationToken cancellationToken = default)
    {
        using var writer = BeginMessage(message.Length);
        writer.Write(message.Span);
        return writer.CommitAsync(cancellationToken);
    }

    /// <summary>
    /// Starts a message built in place in pooled send memory (a serializer writes straight into
    /// the returned <see cref="IBufferWriter{T}"/>); <see cref="MessageWriter.Commit"/> prefixes its
    /// length and sends it as one unit. Dispose the writer (a <c>using</c>) so the next message reuses it.
    /// </summary>
    /// <param name="sizeHint">Bytes the message will probably need (0 if unknown).</param>
    public MessageWriter BeginMessage(int sizeHint = 0)
    {
        if (sizeHint < 0)
            ThrowHelper.ThrowArgumentOutOfRange(nameof(sizeHint), "The size hint cannot be negative.");
        var connection = Connection;
        var send = connection is null ? null : connection.BeginSend((int)Math.Min((long)sizeHint + HeaderSize, int.MaxValue));
        return MessageWriter.Rent(send);
    }
}
