using System.Buffers;
using System.Collections.Generic;
using System.Diagnostics;

namespace NetServer.Streams;

/// <summary>
/// The bytes a connection has accepted for sending and not yet handed to the kernel, in two parts:
/// <em>pending</em> (appended by any sender, under the connection's send lock) and <em>in flight</em>
/// (owned by the one flusher, no lock). Small sends are copied into pooled chunks and coalesce;
/// multicast payloads are queued by reference. Every chunk has exactly one owning segment.
/// </summary>
internal sealed class SendQueue(BufferPool pool)
{
    /// <summary>Most segments one send call gathers (the runtime gathers up to 8 without allocating).</summary>
    public const int MaxGather = 8;

    /// <summary>Size of a thread's staging buffer for coalescing many small segments into one send.</summary>
    public const int StagingSize = 64 * 1024;

    /// <summary>Segments up to this size are worth copying into the staging buffer.</summary>
    private const int StageableSegment = 2048;

    private readonly BufferPool _pool = pool;
    private SegmentQueue _pending = new();
    private SegmentQueue _inflight = new();
    private long _pendingBytes;
    private long _inflightBytes;

    // The chunk at the end of the pending list that small sends may still copy into.
    private byte[]? _tail;

    // Chunks the flusher finished with are kept (as many as one send can finish) for the next
    // appends: a queue that stays busy then reuses its own chunks instead of churning the shared
    // pool, whose per-core caches overflow when many connections return chunks in bursts.
    // Given back when the queue idles.
    private const int MaxSpares = MaxGather + 1;
    private byte[]?[]? _finished; // flusher only
    private int _finishedCount;
    private byte[]?[]? _spares; // under the send lock
    private int _spareCount;

    public long PendingBytes => _pendingBytes;

    public long InflightBytes => _inflightBytes;

    public bool HasPending => !_pending.IsEmpty;

    public bool HasInflight => !_inflight.IsEmpty;

    // --- Appending (caller holds the send lock) ---

    /// <summary>Copies <paramref name="data"/> to the end of the pending bytes.</summary>
    public void AppendCopy(ReadOnlySpan<byte> data, int chunkSize)
    {
        if (data.IsEmpty)
            return; // an empty segment would linger in flight with nothing to send
        if (_tail is not null)
        {
            ref var last = ref _pending.Last;
            var end = last.Offset + last.Count;
            if (_tail.Length - end >= data.Length)
            {
                data.CopyTo(_tail.AsSpan(end));
                last.Count += data.Length;
                _pendingBytes += data.Length;
                return;
            }
        }

        var chunk = RentChunk(Math.Max(chunkSize, data.Length));
        data.CopyTo(chunk);
        _pending.Add(new SendSegment { Array = chunk, Offset = 0, Count = data.Length });
        _tail = chunk;
        _pendingBytes += data.Length;
    }

    /// <summary>
    /// Queues a pooled chunk the caller gives up (a <see cref="NetServer.SendWriter"/>'s): its first
    /// <paramref name="count"/> bytes are sent without a copy, the queue returns it to the pool once
    /// they are, and small sends after it may still copy into its free end.
    /// </summary>
    public void AppendOwned(byte[] chunk, int count)
    {
        _pending.Add(new SendSegment { Array = chunk, Offset = 0, Count = count });
        _tail = chunk;
        _pendingBytes += count;
    }

    /// <summary>Queues a reference to <paramref name="shared"/> (taking one reference).</summary>
    public void AppendShared(SharedBuffer shared)
    {
        shared.AddReference();
        _pending.Add(new SendSegment { Array = shared.Array, Offset = 0, Count = shared.Length, Shared = shared });
        _tail = null;
        _pendingBytes += shared.Length;
    }

    /// <summary>Moves everything pending behind what is in flight (the flusher calls this under the send lock).</summary>
    public void MovePendingToInflight()
    {
        if (_inflight.IsEmpty)
        {
            (_inflight, _pending) = (_pending, _inflight);
        }
        else
        {
            while (!_pending.IsEmpty)
            {
                _inflight.Add(_pending.First);
                _pending.RemoveFirst();
            }
        }

        _inflightBytes += _pendingBytes;
        _pendingBytes = 0;
        _tail = null;
    }

    // --- In flight (flusher only) ---

    /// <summary>Puts the unsent end of a direct send in flight as a pooled copy.</summary>
    public void AddInflightCopy(ReadOnlySpan<byte> data)
    {
        var chunk = _pool.Rent(data.Length);
        data.CopyTo(chunk);
        _inflight.Add(new SendSegment { Array = chunk, Offset = 0, Count = data.Length });
        _inflightBytes += data.Length;
    }

    /// <summary>Puts the unsent end of a direct multi-part send in flight as one pooled copy.</summary>
    public void AddInflightCopy(in ReadOnlySequence<byte> data)
    {
        var length = (int)data.Length;
        var chunk = _pool.Rent(length);
        data.CopyTo(chunk);
        _inflight.Add(new SendSegment { Array = chunk, Offset = 0, Count = length });
        _inflightBytes += length;
    }

    /// <summary>Puts a pooled chunk the caller gives up in flight (a writer's message sent directly); returned to the pool once sent.</summary>
    public void AddInflightOwned(byte[] chunk, int count)
    {
        _inflight.Add(new SendSegment { Array = chunk, Offset = 0, Count = count });
        _inflightBytes += count;
    }

    /// <summary>Puts the unsent end of a directly sent shared buffer in flight, by reference.</summary>
    public void AddInflightShared(SharedBuffer shared, int offset)
    {
        shared.AddReference();
        _inflight.Add(new SendSegment { Array = shared.Array, Offset = offset, Count = shared.Length - offset, Shared = shared });
        _inflightBytes += shared.Length - offset;
    }

    /// <summary>The first in-flight segment (for a single-buffer send).</summary>
    public ref SendSegment FirstInflight => ref _inflight.First;

    public int InflightSegments => _inflight.Count;

    /// <summary>Fills <paramref name="gather"/> with up to <see cref="MaxGather"/> in-flight segments; returns their byte count.</summary>
    public int Gather(List<ArraySegment<byte>> gather)
    {
        gather.Clear();
        long total = 0;
        var count = Math.Min(_inflight.Count, MaxGather);
        for (var i = 0; i < count; i++)
        {
            ref var segment = ref _inflight[i];
            if (total + segment.Count > int.MaxValue)
                break;
            gather.Add(segment.AsArraySegment());
            total += segment.Count;
        }

        return (int)total;
    }

    /// <summary>Whether the segments at the front are small enough to be worth staging (the first two are checked).</summary>
    public bool CanStage => _inflight.Count > 1 && _inflight[0].Count <= StageableSegment && _inflight[1].Count <= StageableSegment;

    /// <summary>
    /// Copies the front in-flight segments into <paramref name="staging"/> while they fit and are
    /// small; returns the byte count. The segments stay queued until <see cref="ConsumeInflight"/>.
    /// </summary>
    public int Stage(byte[] staging)
    {
        var used = 0;
        for (var i = 0; i < _inflight.Count; i++)
        {
            ref var segment = ref _inflight[i];
            if (segment.Count > StageableSegment || used + segment.Count > staging.Length)
                break;
            System.Buffer.BlockCopy(segment.Array, segment.Offset, staging, used, segment.Count);
            used += segment.Count;
        }

        return used;
    }

    /// <summary>Drops <paramref name="sent"/> bytes from the front of what is in flight, releasing finished segments.</summary>
    public void ConsumeInflight(int sent)
    {
        Debug.Assert(sent <= _inflightBytes);
        _inflightBytes -= sent;
        while (sent > 0)
        {
            ref var first = ref _inflight.First;
            if (sent < first.Count)
            {
                first.Offset += sent;
                first.Count -= sent;
                return;
            }

            sent -= first.Count;
            if (first.Shared is null)
            {
                _finished ??= new byte[]?[MaxGather + 1];
                if (_finishedCount < _finished.Length)
                    _finished[_finishedCount++] = first.Array;
                else
                    _pool.Return(first.Array);
            }
            else
            {
                first.Shared.Release();
            }

            _inflight.RemoveFirst();
        }
    }

    /// <summary>Moves chunks the flusher finished with to the spares (caller holds the send lock).</summary>
    public void RecycleFinished()
    {
        while (_finishedCount > 0)
        {
            var array = _finished![--_finishedCount]!;
            _finished[_finishedCount] = null;
            _spares ??= new byte[]?[MaxSpares];
            if (_spareCount < MaxSpares)
                _spares[_spareCount++] = array;
            else
                _pool.Return(array);
        }
    }

    private byte[] RentChunk(int size)
    {
        while (_spareCount > 0)
        {
            var spare = _spares![--_spareCount]!;
            _spares[_spareCount] = null;
            if (spare.Length >= size)
                return spare;
            _pool.Return(spare);
        }

        return _pool.Rent(size);
    }

    /// <summary>Gives the spare chunks back to the pool (the queue went idle; caller holds the send lock).</summary>
    public void ReleaseSpares()
    {
        RecycleFinished();
        while (_spareCount > 0)
        {
            _pool.Return(_spares![--_spareCount]!);
            _spares[_spareCount] = null;
        }
    }

    /// <summary>Releases every queued byte (the connection is gone); returns how many there were.</summary>
    public long Clear()
    {
        var dropped = _pendingBytes + _inflightBytes;
        Drain(_inflight);
        Drain(_pending);
        ReleaseSpares();
        _pendingBytes = _inflightBytes = 0;
        _tail = null;
        return dropped;
    }

    private void Drain(SegmentQueue queue)
    {
        while (!queue.IsEmpty)
        {
            queue.First.Release(_pool);
            queue.RemoveFirst();
        }
    }
}
