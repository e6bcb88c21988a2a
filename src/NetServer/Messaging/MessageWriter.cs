using System.Buffers;
using System.Buffers.Binary;

namespace NetServer;

/// <summary>
/// Builds one length-prefixed message in pooled send memory (get one with
/// <see cref="MessageProtocol.StartMessage"/>): write the payload through
/// <see cref="IBufferWriter{T}"/> (protobuf-net, <c>Utf8JsonWriter</c> and others write straight
/// into it), then <see cref="Commit"/> once: the length prefix is filled in and the message goes
/// out as one unit, never interleaved with another send. Not thread-safe: one thread builds one message.
/// </summary>
/// <remarks>
/// Dispose it when done (a <c>using</c>): it goes back to a per-thread cache, so building messages
/// allocates nothing. A message that is not committed is dropped by <see cref="Dispose"/>. Do not
/// touch the writer after disposing it: the next <c>StartMessage</c> on this thread may hand it out again.
/// </remarks>
public sealed class MessageWriter : IBufferWriter<byte>, IDisposable
{
    [ThreadStatic]
    private static MessageWriter? t_cached;

    private SendWriter? _send; // null when the connection was gone at StartMessage: writes are dropped
    private byte[] _scratch = [];
    private long _written;
    private bool _active;

    private MessageWriter()
    {
    }

    /// <summary>Payload bytes written so far (the length prefix not counted).</summary>
    public long WrittenCount => _written;

    internal static MessageWriter Rent(SendWriter? send)
    {
        var writer = t_cached ?? new MessageWriter();
        t_cached = null;
        writer._send = send;
        writer._written = 0;
        writer._active = true;
        if (send is not null)
        {
            send.GetSpan(MessageProtocol.HeaderSize);
            send.Advance(MessageProtocol.HeaderSize); // the prefix, filled in by Commit
        }

        return writer;
    }

    /// <inheritdoc/>
    public void Advance(int count)
    {
        EnsureActive();
        if (_send is not null)
            _send.Advance(count);
        else if (count < 0 || count > _scratch.Length)
            ThrowHelper.ThrowArgumentOutOfRange(nameof(count), "Advance past the memory returned by GetMemory/GetSpan.");
        _written += count;
    }

    /// <inheritdoc/>
    public Memory<byte> GetMemory(int sizeHint = 0)
    {
        EnsureActive();
        return _send is not null ? _send.GetMemory(sizeHint) : Scratch(sizeHint);
    }

    /// <inheritdoc/>
    public Span<byte> GetSpan(int sizeHint = 0)
    {
        EnsureActive();
        return _send is not null ? _send.GetSpan(sizeHint) : Scratch(sizeHint).Span;
    }

    /// <summary>Appends <paramref name="data"/> to the message.</summary>
    public void Write(ReadOnlySpan<byte> data)
    {
        EnsureActive();
        if (_send is not null)
            _send.Write(data);
        _written += data.Length;
    }

    /// <summary>
    /// Prefixes the length and sends the message as one unit without waiting, with the outcome of
    /// <see cref="MessageProtocol.SendAsync(ReadOnlySpan{byte})"/> (false when not connected or
    /// refused by the send limit).
    /// </summary>
    /// <exception cref="InvalidOperationException">The message is longer than 2 GiB - 1 bytes, or was already committed.</exception>
    public bool Commit()
    {
        var send = Finish();
        try
        {
            return send is not null && send.Commit();
        }
        finally
        {
            _active = false;
        }
    }

    /// <summary>
    /// Prefixes the length and sends the message as one unit with backpressure (see
    /// <see cref="MessageProtocol.SendAsync(ReadOnlyMemory{byte}, CancellationToken)"/>).
    /// </summary>
    public ValueTask<bool> CommitAsync(CancellationToken cancellationToken = default)
    {
        var send = Finish();
        try
        {
            return send is null ? new ValueTask<bool>(false) : send.CommitAsync(cancellationToken);
        }
        finally
        {
            _active = false;
        }
    }

    /// <summary>Drops a message not committed and gives the writer back for reuse by this thread's next <c>StartMessage</c>.</summary>
    public void Dispose()
    {
        if (ReferenceEquals(t_cached, this))
            return;
        _active = false;
        _send?.Dispose();
        _send = null;
        _written = 0;
        if (_scratch.Length > 64 * 1024)
            _scratch = []; // a large message built while not connected is not kept for the thread's life
        t_cached = this;
    }

    private SendWriter? Finish()
    {
        EnsureActive();
        if (_written > int.MaxValue)
        {
            _active = false;
            ThrowHelper.ThrowInvalidOperation($"A message holds at most {int.MaxValue} bytes; this one has {_written}.");
        }

        if (_send is null)
            return null;
        Span<byte> prefix = stackalloc byte[MessageProtocol.HeaderSize];
        BinaryPrimitives.WriteInt32LittleEndian(prefix, (int)_written);
        _send.WriteAt(0, prefix);
        return _send;
    }

    private Memory<byte> Scratch(int sizeHint)
    {
        // Not connected: the message is built and then dropped; a small scratch array takes the writes.
        if (_scratch.Length < Math.Max(sizeHint, 256))
            _scratch = new byte[Math.Max(sizeHint, 256)];
        return _scratch;
    }

    private void EnsureActive()
    {
        if (!_active)
            ThrowHelper.ThrowInvalidOperation("This MessageWriter's message was already committed or disposed; get a new one with StartMessage().");
    }
}
