using System.IO;
using System.Runtime.CompilerServices;
using System.Threading.Tasks.Sources;

namespace NetServer.Tls;

/// <summary>
/// The transport stream under a secure layer (the socket's <see cref="System.Net.Sockets.NetworkStream"/> under the
/// SslStream): tells the connection's <see cref="ReadGate"/> when the layer's read is parked in it,
/// waiting for bytes, and makes a read that completes wait for the gate before its bytes go up.
/// Writes pass straight through. Awaiting a read that does not complete at once allocates nothing:
/// the stream is its own value-task source, reused (the layer never overlaps its reads).
/// </summary>
internal sealed class GatedStream : Stream, IValueTaskSource<int>
{
    private readonly Stream _inner;
    private readonly ReadGate _gate;
    private readonly Action _readCompleted;
    private ManualResetValueTaskSourceCore<int> _read;
    private ConfiguredValueTaskAwaitable<int>.ConfiguredValueTaskAwaiter _pending;
    private int _readLength; // what the pending read asked for (a zero-byte read waits for data; its 0 is no end)

    public GatedStream(Stream inner, ReadGate gate)
    {
        _inner = inner;
        _gate = gate;
        _readCompleted = OnReadCompleted;
    }

    public override bool CanRead => _inner.CanRead;

    public override bool CanWrite => _inner.CanWrite;

    public override bool CanSeek => false;

    public override long Length => throw new NotSupportedException();

    public override long Position
    {
        get => throw new NotSupportedException();
        set => throw new NotSupportedException();
    }

    public override ValueTask<int> ReadAsync(Memory<byte> buffer, CancellationToken cancellationToken = default)
    {
        _gate.Park();
        ValueTask<int> read;
        try
        {
            read = _inner.ReadAsync(buffer, cancellationToken);
        }
        catch
        {
            _gate.Unpark();
            throw;
        }

        if (read.IsCompleted)
        {
            _gate.Unpark();
            if (!read.IsCompletedSuccessfully)
                return read;
            return new ValueTask<int>(Counted(read.Result, buffer.Length));
        }

        _readLength = buffer.Length;
        _read.Reset();
        _pending = read.ConfigureAwait(false).GetAwaiter();
        _pending.UnsafeOnCompleted(_readCompleted);
        return new ValueTask<int>(this, _read.Version);
    }

    public override Task<int> ReadAsync(byte[] buffer, int offset, int count, CancellationToken cancellationToken) =>
        ReadAsync(buffer.AsMemory(offset, count), cancellationToken).AsTask();

    public override int Read(Span<byte> buffer)
    {
        _gate.Park();
        try
        {
            return Counted(_inner.Read(buffer), buffer.Length);
        }
        finally
        {
            _gate.Unpark();
        }
    }

    public override int Read(byte[] buffer, int offset, int count) => Read(buffer.AsSpan(offset, count));

    public override ValueTask WriteAsync(ReadOnlyMemory<byte> buffer, CancellationToken cancellationToken = default) =>
        _inner.WriteAsync(buffer, cancellationToken);

    public override Task WriteAsync(byte[] buffer, int offset, int count, CancellationToken cancellationToken) =>
        _inner.WriteAsync(buffer, offset, count, cancellationToken);

    public override void Write(ReadOnlySpan<byte> buffer) => _inner.Write(buffer);

    public override void Write(byte[] buffer, int offset, int count) => _inner.Write(buffer, offset, count);

    public override void Flush() => _inner.Flush();

    public override Task FlushAsync(CancellationToken cancellationToken) => _inner.FlushAsync(cancellationToken);

    public override long Seek(long offset, SeekOrigin origin) => throw new NotSupportedException();

    public override void SetLength(long value) => throw new NotSupportedException();

    protected override void Dispose(bool disposing)
    {
        if (disposing)
            _inner.Dispose();
        base.Dispose(disposing);
    }

    private void OnReadCompleted()
    {
        var pending = _pending;
        _pending = default;

        // Waits out a shutdown that runs now: the bytes are decrypted only after it.
        _gate.Unpark();
        int count;
        try
        {
            count = pending.GetResult();
        }
        catch (Exception e)
        {
            _read.SetException(e);
            return;
        }

        _read.SetResult(Counted(count, _readLength));
    }

    /// <summary>Tells the gate when a read that asked for bytes got none: the socket's stream ended.</summary>
    private int Counted(int count, int asked)
    {
        if (count == 0 && asked > 0)
            _gate.NoteTransportEnded();
        return count;
    }

    int IValueTaskSource<int>.GetResult(short token) => _read.GetResult(token);

    ValueTaskSourceStatus IValueTaskSource<int>.GetStatus(short token) => _read.GetStatus(token);

    void IValueTaskSource<int>.OnCompleted(Action<object?> continuation, object? state, short token, ValueTaskSourceOnCompletedFlags flags) =>
        _read.OnCompleted(continuation, state, token, flags);
}
