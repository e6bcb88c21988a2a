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
/// A small message started inside the protocol's own <c>OnMessage</c> is built in the writer's
/// scratch memory and joins that delivery's answer batch on commit (one engine send per delivery,
/// as <c>SendAsync</c>); once it grows past 1 KiB it moves into the send queue's memory.
/// Dispose it when done (a <c>using</c>): it goes back to a per-thread cache, so building messages
/// allocates nothing. A message that is not committed is dropped by <see cref="Dispose"/>. Do not
/// touch the writer after disposing it: the next <c>StartMessage</c> on this thread may hand it out again.
/// </remarks>
public sealed class MessageWriter : IBufferWriter<byte>, IDisposable
{
    [ThreadStatic]
    private static MessageWriter? t_cached;

    // Largest payload built in scratch memory for the answer batch; a longer one moves to the send queue.
    private const int BatchedLimit = 1024 - MessageProtocol.HeaderSize;

    private SendWriter? _send; // null: built in _scratch (for _batchOwner's batch, or dropped when not connected)
    private MessageProtocol? _batchOwner; // the delivering protocol whose answer batch takes the message
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
        writer._batchOwner = null;
        writer._written = 0;
        writer._active = true;
        if (send is not null)
            ReservePrefix(send);
        return writer;
    }

    /// <summary>A writer building in scratch memory for <paramref name="owner"/>'s answer batch.</summary>
    internal static MessageWriter RentBatched(MessageProtocol owner)
    {
        var writer = Rent(null);
        writer._batchOwner = owner;
        return writer;
    }

    private static void ReservePrefix(SendWriter send)
    {
        send.GetSpan(MessageProtocol.HeaderSize);
        send.Advance(MessageProtocol.HeaderSize); // the prefix, filled in by Commit
    }

    /// <inheritdoc/>
    public void Advance(int count)
    {
        EnsureActive();
        if (_send is not null)
            _send.Advance(count);
        else if (count < 0 || (_batchOwner is null ? 0 : _written) + count > _scratch.Length)
            ThrowHelper.ThrowArgumentOutOfRange(nameof(count), "Advance past the memory returned by GetMemory/GetSpan.");
        _written += count;
    }

    /// <inheritdoc/>
    public Memory<byte> GetMemory(int sizeHint = 0)
    {
        EnsureActive();
        SpillIfLarge(sizeHint);
        return _send is not null ? _send.GetMemory(sizeHint) : Scratch(sizeHint);
    }

    /// <inheritdoc/>
    public Span<byte> GetSpan(int sizeHint = 0)
    {
        EnsureActive();
        SpillIfLarge(sizeHint);
        return _send is not null ? _send.GetSpan(sizeHint) : Scratch(sizeHint).Span;
    }

    /// <summary>Appends <paramref name="data"/> to the message.</summary>
    public void Write(ReadOnlySpan<byte> data)
    {
        EnsureActive();
        SpillIfLarge(data.Length);
        if (_send is not null)
            _send.Write(data);
        else if (_batchOwner is not null)
            data.CopyTo(Scratch(data.Length).Span);
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
        if (_batchOwner is { } owner && _send is null)
        {
            EnsureActive();
            _active = false;
            return owner.SendAsync(_scratch.AsSpan(0, (int)_written)); // into the batch, or straight on when batching is off
        }

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
        if (_batchOwner is not null)
            Spill(); // awaited backpressure is the send queue's: the batch never waits for room per message
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
        _batchOwner = null;
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
        _send.Owner?.CountMessagesSent(Diagnostics.MessageMetrics.Messages, 1);
        return _send;
    }

    private Memory<byte> Scratch(int sizeHint)
    {
        // Not connected: the message is built and then dropped; a small scratch array takes the
        // writes. Batched: the payload so far stays at the front, the caller writes after it.
        var offset = _batchOwner is null ? 0 : (int)_written;
        var needed = offset + Math.Max(sizeHint, _batchOwner is null ? 256 : 1);
        if (_scratch.Length < needed)
        {
            var grown = new byte[Math.Max(needed, _batchOwner is null ? 256 : BatchedLimit)];
            _scratch.AsSpan(0, offset).CopyTo(grown);
            _scratch = grown;
        }

        return _scratch.AsMemory(offset);
    }

    /// <summary>A batched message about to pass <see cref="BatchedLimit"/> moves into the send queue's memory.</summary>
    private void SpillIfLarge(int sizeHint)
    {
        if (_batchOwner is not null && _send is null && _written + Math.Max(sizeHint, 1) > BatchedLimit)
            Spill();
    }

    private void Spill()
    {
        var owner = _batchOwner!;
        _batchOwner = null;
        if (_send is not null)
            return;
        var payload = _scratch.AsSpan(0, (int)_written);
        _send = owner.Connection?.StartSend((int)Math.Min(_written + MessageProtocol.HeaderSize + 1024, int.MaxValue)); // sends the batch first: order kept
        if (_send is null)
            return; // the connection is gone: the rest is built in scratch and dropped
        ReservePrefix(_send);
        _send.Write(payload);
    }

    private void EnsureActive()
    {
        if (!_active)
            ThrowHelper.ThrowInvalidOperation("This MessageWriter's message was already committed or disposed; get a new one with StartMessage().");
    }
}
