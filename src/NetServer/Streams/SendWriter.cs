using System.Buffers;

namespace NetServer;

/// <summary>
/// Builds one message in pooled send memory and sends it as one unit: bytes of a message are never
/// interleaved with another send's, from any thread. Get one with
/// <see cref="StreamConnection.StartSend"/>, write through <see cref="IBufferWriter{T}"/> (a
/// serializer can write straight into it), then <see cref="Commit"/> once. A message that is not
/// committed is dropped by <see cref="Dispose"/>.
/// </summary>
/// <remarks>
/// <para>The memory comes from the connection's pool and goes to its send queue as it is: a large
/// message is linked into the queue (or handed to the socket) without a copy. A small one (up to
/// 1 KiB) committed while the queue is busy is copied once into the queue's current chunk, where
/// it coalesces with its neighbours into one socket write instead of costing a chunk of its own.</para>
/// <para>Dispose the writer when done (a <c>using</c>): that gives it back to a per-thread pool, so
/// building messages allocates nothing; one never disposed is simply collected. After
/// <see cref="Dispose"/> the object may be handed out again by <see cref="StreamConnection.StartSend"/>:
/// do not touch it afterwards (a second Dispose could drop another message). Not thread-safe: one
/// thread builds one message.</para>
/// </remarks>
public sealed class SendWriter : IBufferWriter<byte>, IDisposable
{
    /// <summary>Messages up to this size are copied into a busy queue's chunk on commit (see remarks).</summary>
    internal const int SmallMessage = 1024;

    private const int MaxChunk = 256 * 1024;

    [ThreadStatic]
    private static SendWriter? t_cached;

    private StreamConnection? _owner; // set while rented (from StartSend until Dispose)
    private bool _active;             // a message is being built: from StartSend until Commit or Dispose
    private Connection? _connection;
    private BufferPool? _pool;
    private byte[]?[] _chunks = new byte[]?[4];
    private int[] _counts = new int[4];
    private int _chunkCount;  // chunks in use; the last one is being written
    private int _chunkSize;
    private long _written;

    private SendWriter()
    {
    }

    /// <summary>Bytes written so far.</summary>
    public long WrittenCount => _written;

    internal int ChunkCount => _chunkCount;

    /// <summary>The connection it builds a send for (null when not rented).</summary>
    internal StreamConnection? Owner => _owner;

    internal static SendWriter Rent(StreamConnection owner, Connection? connection, BufferPool pool, int chunkSize)
    {
        var writer = t_cached ?? new SendWriter();
        t_cached = null;
        writer._owner = owner;
        writer._active = true;
        writer._connection = connection;
        writer._pool = pool;
        writer._chunkSize = Math.Max(chunkSize, 256);
        return writer;
    }

    /// <inheritdoc/>
    public void Advance(int count)
    {
        if (count < 0 || _chunkCount == 0 || _counts[_chunkCount - 1] + count > _chunks[_chunkCount - 1]!.Length)
            ThrowHelper.ThrowArgumentOutOfRange(nameof(count), "Advance past the memory returned by GetMemory/GetSpan.");
        _counts[_chunkCount - 1] += count;
        _written += count;
    }

    /// <inheritdoc/>
    public Memory<byte> GetMemory(int sizeHint = 0)
    {
        var chunk = Reserve(sizeHint);
        var used = _counts[_chunkCount - 1];
        return new Memory<byte>(chunk, used, chunk.Length - used);
    }

    /// <inheritdoc/>
    public Span<byte> GetSpan(int sizeHint = 0)
    {
        var chunk = Reserve(sizeHint);
        var used = _counts[_chunkCount - 1];
        return new Span<byte>(chunk, used, chunk.Length - used);
    }

    /// <summary>Appends <paramref name="data"/> to the message.</summary>
    public void Write(ReadOnlySpan<byte> data)
    {
        while (!data.IsEmpty)
        {
            var span = GetSpan(Math.Min(data.Length, MaxChunk));
            var part = Math.Min(span.Length, data.Length);
            data.Slice(0, part).CopyTo(span);
            Advance(part);
            data = data.Slice(part);
        }
    }

    /// <summary>
    /// Overwrites bytes already written, at <paramref name="position"/> from the start of the message:
    /// a length prefix whose value is known only once the body is written (advance past a
    /// placeholder first, write the body, then fill the placeholder in).
    /// </summary>
    /// <exception cref="ArgumentOutOfRangeException">The range is not within the bytes written so far.</exception>
    public void WriteAt(long position, ReadOnlySpan<byte> data)
    {
        EnsureActive();
        if (position < 0 || position > _written - data.Length)
            ThrowHelper.ThrowArgumentOutOfRange(nameof(position), "WriteAt can only overwrite bytes already written.");
        for (var i = 0; i < _chunkCount && !data.IsEmpty; i++)
        {
            var count = _counts[i];
            if (position >= count)
            {
                position -= count;
                continue;
            }

            var part = (int)Math.Min(count - position, data.Length);
            data.Slice(0, part).CopyTo(new Span<byte>(_chunks[i]!, (int)position, part));
            data = data.Slice(part);
            position = 0;
        }
    }

    /// <summary>
    /// Sends the message as one unit, with the outcome of <see cref="StreamConnection.SendAsync(ReadOnlySpan{byte})"/>:
    /// false (and OnError with <c>NoBufferSpaceAvailable</c>) when it does not fit within
    /// <c>OptionSendBufferLimit</c>, false when not connected. Either way the message is over: its
    /// memory is sent or returned; dispose the writer to reuse it. (A session's override of
    /// <c>SendAsync</c> does not see writer messages.)
    /// </summary>
    public bool Commit() => CommitCore(pastLimit: false);

    /// <summary>
    /// As <see cref="Commit"/>, and admitted past <c>OptionSendBufferLimit</c> when it does not
    /// fit (never ahead of parked senders): for a protocol's small replies that may not be dropped
    /// for want of room (a WebSocket close frame, the pong that answers a ping). Bounded by their
    /// protocol: sent while answering a delivery, they make receiving pause at the high-water mark.
    /// </summary>
    internal bool CommitPastLimit() => CommitCore(pastLimit: true);

    private bool CommitCore(bool pastLimit)
    {
        EnsureActive();
        _owner!.FlushProtocolHeld(); // what the protocol holds back from this thread was sent before this message
        var connection = _connection;
        try
        {
            if (connection is null || _written == 0)
                return connection is not null && connection.IsOpen;
            var status = connection.SendWritten(this, pastLimit);
            if (status == SendStatus.Full)
                connection.ReportSendRefused();
            return status == SendStatus.Accepted;
        }
        finally
        {
            EndMessage();
        }
    }

    /// <summary>
    /// Sends the message as one unit with backpressure: completes when it is accepted within
    /// <c>OptionSendBufferLimit</c>, at once when there is room, otherwise once enough queued bytes
    /// have gone out. The message is over when this returns (a message that must wait is copied):
    /// dispose the writer to reuse it.
    /// </summary>
    /// <returns>True once accepted; false if the connection is closed (or closes while waiting).</returns>
    /// <exception cref="OperationCanceledException"><paramref name="cancellationToken"/> fired while waiting; nothing was sent.</exception>
    public ValueTask<bool> CommitAsync(CancellationToken cancellationToken = default)
    {
        EnsureActive();
        _owner!.FlushProtocolHeld();
        var connection = _connection;
        if (cancellationToken.IsCancellationRequested)
        {
            EndMessage();
            return new ValueTask<bool>(Task.FromCanceled<bool>(cancellationToken));
        }

        if (connection is null || _written == 0)
        {
            EndMessage();
            return new ValueTask<bool>(connection is not null && connection.IsOpen);
        }

        var status = connection.SendWritten(this);
        if (status != SendStatus.Full)
        {
            EndMessage();
            return new ValueTask<bool>(status == SendStatus.Accepted);
        }

        // The slow path: the message waits as a pooled copy, like any parked send.
        var copy = _pool!.Rent((int)Math.Min(_written, int.MaxValue));
        var length = (int)_written;
        CopyTo(copy);
        var pool = _pool;
        EndMessage();
        return StreamConnection.SendCopyWhenRoomAsync(connection, pool, copy, length, cancellationToken);
    }

    /// <summary>Drops a message not committed, and gives the writer back for reuse by this thread's next <see cref="StreamConnection.StartSend"/>.</summary>
    public void Dispose()
    {
        if (_owner is null)
            return;
        EndMessage();
        _owner = null;
        _connection = null;
        _pool = null;
        t_cached = this;
    }

    // --- Engine side ---

    /// <summary>The <paramref name="index"/>-th chunk and how many of its bytes are the message.</summary>
    internal byte[] Chunk(int index, out int count)
    {
        count = _counts[index];
        return _chunks[index]!;
    }

    /// <summary>The engine takes the chunk (it goes to the send queue, which returns it to the pool when sent).</summary>
    internal void GiveUp(int index) => _chunks[index] = null;

    /// <summary>Copies the message into <paramref name="destination"/> (which holds at least <see cref="WrittenCount"/> bytes).</summary>
    internal void CopyTo(Span<byte> destination)
    {
        for (var i = 0; i < _chunkCount; i++)
        {
            new ReadOnlySpan<byte>(_chunks[i]!, 0, _counts[i]).CopyTo(destination);
            destination = destination.Slice(_counts[i]);
        }
    }

    /// <summary>Ends the message: returns what the engine did not take; no more writes or commits.</summary>
    private void EndMessage()
    {
        for (var i = 0; i < _chunkCount; i++)
        {
            if (_chunks[i] is { } chunk)
                _pool!.Return(chunk);
            _chunks[i] = null;
            _counts[i] = 0;
        }

        _chunkCount = 0;
        _written = 0;
        _active = false;
    }

    private void EnsureActive()
    {
        if (!_active)
            ThrowHelper.ThrowInvalidOperation("This SendWriter's message was already committed or disposed; get a new one with StartSend().");
    }

    private byte[] Reserve(int sizeHint)
    {
        EnsureActive();
        if (sizeHint < 0)
            ThrowHelper.ThrowArgumentOutOfRange(nameof(sizeHint), "The size hint cannot be negative.");
        if (_chunkCount > 0)
        {
            var last = _chunks[_chunkCount - 1]!;
            var free = last.Length - _counts[_chunkCount - 1];
            if (free > 0 && free >= sizeHint)
                return last;
        }

        // Chunks double as the message grows (up to 256 KiB), so a large message is a few chunks.
        var size = _chunkCount == 0 ? _chunkSize : Math.Min(_chunks[_chunkCount - 1]!.Length * 2, MaxChunk);
        var chunk = _pool!.Rent(Math.Max(size, sizeHint));
        if (_chunkCount == _chunks.Length)
        {
            Array.Resize(ref _chunks, _chunks.Length * 2);
            Array.Resize(ref _counts, _counts.Length * 2);
        }

        _chunks[_chunkCount] = chunk;
        _counts[_chunkCount] = 0;
        _chunkCount++;
        return chunk;
    }
}
