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
    internal override string DiagnosticName => "Messages";

    /// <summary>Default for <see cref="MaxMessageSize"/>: 16 MiB.</summary>
    public const int DefaultMaxMessageSize = 16 * 1024 * 1024;

    /// <summary>Bytes of the length prefix in front of every message.</summary>
    public const int HeaderSize = MessageReader.HeaderSize;

    // Messages up to this size (with their prefix) are framed on the stack and sent as one span.
    private const int StackFrame = 1024;

    // The answers of one delivery: messages up to StackFrame sent from OnMessage on the delivering
    // thread are framed into one pooled batch and handed to the connection as one send when the
    // delivery ends (or the batch is full, or the thread sends or closes otherwise): one engine send
    // per delivery instead of one per message.
    private const int BatchSize = 64 * 1024;

    [ThreadStatic]
    private static MessageProtocol? t_delivering;

    private MessageReader _reader;
    private int _maxMessageSize = DefaultMaxMessageSize;
    private byte[]? _batch;
    private int _batched;
    private int _batchedMessages; // in the batch, counted when it is handed to the connection
    private volatile bool _batchWaiting; // a batch waits for room: no batching until it is in the queue (one parked batch at most)

    /// <summary>Batch memory is held (between deliveries it never is), for tests.</summary>
    internal bool HoldsBatch => _batch is not null;

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

    private int _delivered; // whole messages delivered during this read (netserver.messages.received)

    /// <inheritdoc/>
    protected internal sealed override int OnReceived(ReadOnlySpan<byte> data)
    {
        var connection = Connection;
        if (connection is null)
            return data.Length;
        var outer = t_delivering;
        t_delivering = this;
        try
        {
            return Deliver(connection, data);
        }
        finally
        {
            t_delivering = outer;
            try
            {
                if (_delivered != 0)
                {
                    connection.CountMessagesReceived(Diagnostics.MessageMetrics.Messages, _delivered);
                    _delivered = 0;
                }

                SendBatch(connection);
                if (_batch is { } batch)
                {
                    _batch = null; // an idle connection holds no batch memory
                    ArrayPool<byte>.Shared.Return(batch);
                }
            }
            finally
            {
                OnMessagesDelivered();
            }
        }
    }

    /// <summary>
    /// Called after each read's messages were delivered (one <see cref="OnMessage(ReadOnlySpan{byte})"/>
    /// call each, possibly none), on the same thread, once this connection's own answers from those
    /// calls were handed to the connection (queued, or waiting for room under its send limit), and
    /// before the next read is delivered. A server that passes messages on to other connections
    /// gathers them during the read and sends each connection's share here, one send per connection
    /// per read instead of one per message.
    /// </summary>
    protected virtual void OnMessagesDelivered()
    {
    }

    private int Deliver(StreamConnection connection, ReadOnlySpan<byte> data)
    {
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

            _delivered++;
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

    /// <summary>
    /// Raised once when the connection ended, right after <c>OnDisconnected</c>, whether or not an
    /// override of it called the base: a layer built on this protocol (pending requests to fail, a
    /// subscription to end) hooks its cleanup here so no subclass can skip it.
    /// </summary>
    public event Action<DisconnectReason>? Disconnected;

    internal override void InvokeDisconnected(DisconnectReason reason)
    {
        _reader.Reset(); // a message being reassembled gives its pooled memory back
        try
        {
            base.InvokeDisconnected(reason);
        }
        finally
        {
            Disconnected?.Invoke(reason);
        }
    }

    internal override void InvokeDetached()
    {
        FlushHeld(); // answers batched before a switch inside OnMessage go before the new protocol's sends
        _reader.Reset(); // a message still handed out to OnMessage is released by it, not here
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
        using var writer = StartMessage(TextEncoding.MaxByteCount(text.Length));
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
        if (message.Length <= StackFrame - HeaderSize && ReferenceEquals(t_delivering, this) && !_batchWaiting)
            return Batch(connection, message);
        if (message.Length <= StackFrame - HeaderSize)
        {
            Span<byte> frame = stackalloc byte[HeaderSize + message.Length];
            BinaryPrimitives.WriteInt32LittleEndian(frame, message.Length);
            message.CopyTo(frame.Slice(HeaderSize));
            connection.CountMessagesSent(Diagnostics.MessageMetrics.Messages, 1);
            return connection.SendAsync(frame);
        }

        using var writer = StartMessage(message.Length);
        writer.Write(message);
        return writer.Commit();
    }

    /// <summary>Sends the batched answers of this delivery, if any, when called on the delivering thread.</summary>
    internal override void FlushHeld()
    {
        if (_batched > 0 && ReferenceEquals(t_delivering, this) && Connection is { } connection)
            SendBatch(connection);
    }

    /// <summary>Sends the batch of the protocol delivering on this thread (a multicast from inside OnMessage keeps its order after the answers before it).</summary>
    internal static void FlushDelivering() => t_delivering?.FlushHeld();

    private bool Batch(StreamConnection connection, ReadOnlySpan<byte> message)
    {
        var frame = HeaderSize + message.Length;
        if (_batched + frame > BatchSize)
        {
            if (!SendBatch(connection))
                return false;
            if (_batchWaiting)
                return SendAsync(message); // the batch waits for room: this one meets the send limit on its own
        }

        var batch = _batch ??= ArrayPool<byte>.Shared.Rent(BatchSize);
        BinaryPrimitives.WriteInt32LittleEndian(batch.AsSpan(_batched), message.Length);
        message.CopyTo(batch.AsSpan(_batched + HeaderSize));
        _batched += frame;
        _batchedMessages++;
        return true;
    }

    /// <summary>
    /// Hands the batch to the connection as one send. One that does not fit under the send limit
    /// waits for room (its messages were accepted: none is dropped) and keeps its memory until sent;
    /// the rest of the delivery then sends message by message, each meeting the limit itself.
    /// </summary>
    private bool SendBatch(StreamConnection connection)
    {
        var length = _batched;
        if (length == 0)
            return true;
        _batched = 0;
        connection.CountMessagesSent(Diagnostics.MessageMetrics.Messages, _batchedMessages);
        _batchedMessages = 0;
        var batch = _batch!;
        if (connection.CurrentConnection is not { } engine)
            return false;
        var memory = new ReadOnlyMemory<byte>(batch, 0, length);
        var status = engine.Send(memory.Span, shared: null, waiter: null, out _);
        if (status != SendStatus.Full)
            return status == SendStatus.Accepted;
        _batch = null;
        _batchWaiting = true;
        _ = ReturnWhenSentAsync(StreamConnection.SendWhenRoomAsync(engine, memory, null, CancellationToken.None), batch);
        return true;
    }

    /// <summary>
    /// The parked batch went into the queue (or the connection closed): its memory goes back and
    /// batching resumes. Until then answers meet the send limit one by one, so at most one batch
    /// per connection ever waits beyond the limit.
    /// </summary>
    private async Task ReturnWhenSentAsync(ValueTask<bool> sending, byte[] batch)
    {
        try
        {
            await sending.ConfigureAwait(false);
        }
        catch (OperationCanceledException)
        {
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(batch);
            _batchWaiting = false;
        }
    }

    /// <summary>Sends the parts of <paramref name="message"/> as one message (a header and a body, say), never interleaved with another send.</summary>
    public bool SendAsync(ReadOnlySequence<byte> message)
    {
        using var writer = StartMessage((int)Math.Min(message.Length, int.MaxValue - HeaderSize));
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
        using var writer = StartMessage(message.Length);
        writer.Write(message.Span);
        return writer.CommitAsync(cancellationToken);
    }

    /// <summary>
    /// Starts a message built in place in pooled send memory (a serializer writes straight into
    /// the returned <see cref="IBufferWriter{T}"/>); <see cref="MessageWriter.Commit"/> prefixes its
    /// length and sends it as one unit. Dispose the writer (a <c>using</c>) so the next message reuses it.
    /// </summary>
    /// <param name="sizeHint">Bytes the message will probably need (0 if unknown).</param>
    public MessageWriter StartMessage(int sizeHint = 0)
    {
        if (sizeHint < 0)
            ThrowHelper.ThrowArgumentOutOfRange(nameof(sizeHint), "The size hint cannot be negative.");
        if (sizeHint <= StackFrame - HeaderSize && ReferenceEquals(t_delivering, this) && !_batchWaiting)
            return MessageWriter.RentBatched(this); // an answer from OnMessage: joins the delivery's batch on commit
        var connection = Connection;
        var send = connection is null ? null : connection.StartSend((int)Math.Min((long)sizeHint + HeaderSize, int.MaxValue));
        return MessageWriter.Rent(send);
    }
}
