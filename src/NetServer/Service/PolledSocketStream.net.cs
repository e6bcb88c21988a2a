using System.IO;
using System.Runtime.CompilerServices;
using System.Threading.Tasks.Sources;

namespace NetServer.Service;

/// <summary>
/// The transport stream under a secure layer (TLS) for a connection pinned to a loop that polls
/// its socket: reads and writes go straight to the non-blocking socket, and a read or write that
/// would block waits through the loop's poller, so the layer's reads complete on the loop's thread
/// (or on the thread pool, see <see cref="PollRegistration.Inline"/>) with no thread of the
/// runtime's socket engine in between. It never closes the socket.
/// </summary>
/// <remarks>
/// A read that did not fill its buffer emptied the socket, so the next read waits for the poller
/// first instead of probing (the poller is edge-triggered: new bytes bring a new signal). A
/// zero-byte read (how SslStream waits for data before it takes a buffer) returns at once when the
/// socket may still hold bytes, otherwise once the poller signals. A reader that had its turn on
/// the loop lets the loop go round before it reads on (<see cref="PollRegistration.ShouldYield"/>).
/// The layer never overlaps its reads, nor its writes, so one waiter of each kind is enough.
/// </remarks>
internal sealed class PolledSocketStream(Socket socket, PollRegistration registration) : Stream, IValueTaskSource
{
    private static readonly Action<object?> s_writable = static state => ((PolledSocketStream)state!).Writable();
    private static readonly Action<object?> s_wakeReader = static state => ((PollRegistration)state!).WakeReader();
    private static readonly Action<object?> s_wakeWriter = static state => ((PollRegistration)state!).WakeWriter();

    private ManualResetValueTaskSourceCore<bool> _writable;
    private bool _drained; // the last read emptied the socket: the next one waits for a signal first

    public override bool CanRead => true;

    public override bool CanWrite => true;

    public override bool CanSeek => false;

    public override long Length => throw new NotSupportedException();

    public override long Position
    {
        get => throw new NotSupportedException();
        set => throw new NotSupportedException();
    }

    public override ValueTask<int> ReadAsync(Memory<byte> buffer, CancellationToken cancellationToken = default)
    {
        if (!_drained)
        {
            if (buffer.IsEmpty)
                return new ValueTask<int>(0);
            if (registration.ShouldYield())
                return ReadWhenReadableAsync(buffer, yieldFirst: true, cancellationToken);
            var received = SocketIO.TryReceive(socket, buffer.Span, out var error);
            if (error == SocketError.Success)
                return new ValueTask<int>(Received(received, buffer.Length));
            if (error != SocketError.WouldBlock)
                return ValueTask.FromException<int>(Failure(error));
        }

        return ReadWhenReadableAsync(buffer, yieldFirst: false, cancellationToken);
    }

    public override Task<int> ReadAsync(byte[] buffer, int offset, int count, CancellationToken cancellationToken) =>
        ReadAsync(buffer.AsMemory(offset, count), cancellationToken).AsTask();

    public override int Read(Span<byte> buffer)
    {
        _drained = false; // read by other means: the next asynchronous read looks first
        while (true)
        {
            var received = SocketIO.TryReceive(socket, buffer, out var error);
            if (error == SocketError.Success)
                return received;
            if (error != SocketError.WouldBlock)
                throw Failure(error);
            var ready = SocketIO.Poll(socket, SelectMode.SelectRead, Timeout.Infinite);
            if (ready != SocketError.Success)
                throw Failure(ready);
        }
    }

    public override int Read(byte[] buffer, int offset, int count) => Read(buffer.AsSpan(offset, count));

    public override ValueTask WriteAsync(ReadOnlyMemory<byte> buffer, CancellationToken cancellationToken = default)
    {
        var sent = SocketIO.TrySend(socket, buffer.Span, out var error);
        if (error is not (SocketError.Success or SocketError.WouldBlock))
            return ValueTask.FromException(Failure(error));
        return sent == buffer.Length ? default : WriteWhenWritableAsync(buffer.Slice(sent), cancellationToken);
    }

    public override Task WriteAsync(byte[] buffer, int offset, int count, CancellationToken cancellationToken) =>
        WriteAsync(buffer.AsMemory(offset, count), cancellationToken).AsTask();

    public override void Write(ReadOnlySpan<byte> buffer)
    {
        while (!buffer.IsEmpty)
        {
            var sent = SocketIO.TrySend(socket, buffer, out var error);
            if (error is not (SocketError.Success or SocketError.WouldBlock))
                throw Failure(error);
            buffer = buffer.Slice(sent);
            if (buffer.IsEmpty)
                return;
            var ready = SocketIO.Poll(socket, SelectMode.SelectWrite, Timeout.Infinite);
            if (ready != SocketError.Success)
                throw Failure(ready);
        }
    }

    public override void Write(byte[] buffer, int offset, int count) => Write(buffer.AsSpan(offset, count));

    public override void Flush()
    {
    }

    public override Task FlushAsync(CancellationToken cancellationToken) => Task.CompletedTask;

    public override long Seek(long offset, SeekOrigin origin) => throw new NotSupportedException();

    public override void SetLength(long value) => throw new NotSupportedException();

    private void Writable() => _writable.SetResult(true);

    private int Received(int received, int asked)
    {
        _drained = received < asked;
        return received;
    }

    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder<>))]
    private async ValueTask<int> ReadWhenReadableAsync(Memory<byte> buffer, bool yieldFirst, CancellationToken cancellationToken)
    {
        // A read of the handshake (its timeout's token) ends when the token fires, as over a NetworkStream.
        using var cancel = cancellationToken.CanBeCanceled ? cancellationToken.UnsafeRegister(s_wakeReader, registration) : default;
        while (true)
        {
            cancellationToken.ThrowIfCancellationRequested();
            // A yield (the reader had its turn on the loop) waits for the loop to come round, not for a signal.
            var wait = yieldFirst ? registration.YieldReaderAsync() : registration.WaitReadableAsync();
            yieldFirst = false;
            if (!wait.IsCompleted && cancellationToken.IsCancellationRequested)
                registration.WakeReader(); // fired before the wait began: its wake found nothing
            var waited = await wait.ConfigureAwait(false);
            _drained = false; // a signal may have ended the wait: even a cancelled read leaves the socket to be looked at first
            cancellationToken.ThrowIfCancellationRequested();
            if (!waited.IsSuccess)
                throw Failure(waited.Error);
            if (buffer.IsEmpty)
                return 0;
            var received = SocketIO.TryReceive(socket, buffer.Span, out var error);
            if (error == SocketError.Success)
                return Received(received, buffer.Length);
            if (error != SocketError.WouldBlock)
                throw Failure(error);
        }
    }

    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder))]
    private async ValueTask WriteWhenWritableAsync(ReadOnlyMemory<byte> rest, CancellationToken cancellationToken)
    {
        // A write of the handshake (its timeout's token) ends when the token fires, as over a
        // NetworkStream: a peer that reads nothing cannot hold the handshake past its timeout.
        using var cancel = cancellationToken.CanBeCanceled ? cancellationToken.UnsafeRegister(s_wakeWriter, registration) : default;
        while (true)
        {
            cancellationToken.ThrowIfCancellationRequested();
            _writable.Reset();
            if (registration.WaitWritable(s_writable, this))
            {
                if (cancellationToken.IsCancellationRequested)
                    registration.WakeWriter(); // fired before the wait began: its wake found nothing
                await new ValueTask(this, _writable.Version).ConfigureAwait(false);
            }

            cancellationToken.ThrowIfCancellationRequested();
            if (registration.IsClosed)
                throw Failure(SocketError.OperationAborted);
            var sent = SocketIO.TrySend(socket, rest.Span, out var error);
            if (error is not (SocketError.Success or SocketError.WouldBlock))
                throw Failure(error);
            rest = rest.Slice(sent);
            if (rest.IsEmpty)
                return;
        }
    }

    private static IOException Failure(SocketError error) =>
        new("Unable to transfer data on the transport connection.", new SocketException((int)error));

    void IValueTaskSource.GetResult(short token) => _writable.GetResult(token);

    ValueTaskSourceStatus IValueTaskSource.GetStatus(short token) => _writable.GetStatus(token);

    void IValueTaskSource.OnCompleted(Action<object?> continuation, object? state, short token, ValueTaskSourceOnCompletedFlags flags) =>
        _writable.OnCompleted(continuation, state, token, flags);
}
