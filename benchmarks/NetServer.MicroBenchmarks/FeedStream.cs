using System;
using System.IO;
using System.Threading;
using System.Threading.Tasks;
using System.Threading.Tasks.Sources;

namespace NetServer.MicroBenchmarks;

/// <summary>
/// The stream a <see cref="FeedLayer"/> gives the engine in place of a TLS stream: reads hand out
/// a <see cref="FrameStream"/> in its cuts (a read returns the rest of the current cut, or less if
/// the engine offers less, as a socket would), writes are counted and dropped. When the bytes run
/// out the read stays pending until <see cref="Feed"/>, which completes it on the caller's thread:
/// the engine's receive loop then runs inline, through every cut, until it waits again.
/// </summary>
/// <remarks>
/// The pending read is this object (an <see cref="IValueTaskSource{TResult}"/> reused for every
/// wait), and the continuation is invoked directly: feeding allocates nothing.
/// </remarks>
internal sealed class FeedStream : Stream, IValueTaskSource<int>
{
    private readonly FrameStream _frames;
    private int _position;   // bytes handed out in this round
    private int _cut;        // index of the current cut
    private int _leftInCut;
    private volatile bool _waiting;
    private Memory<byte> _pendingBuffer;
    private Action<object?>? _continuation;
    private object? _continuationState;
    private readonly TaskCompletionSource _firstWait = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private short _version;
    private int _result;

    public FeedStream(FrameStream frames)
    {
        _frames = frames;
        _position = frames.Bytes.Length; // nothing to read until the first Feed
    }

    /// <summary>Completes once the engine first waits in a read (its receive loop started).</summary>
    public Task FirstWait => _firstWait.Task;

    /// <summary>Reads the engine made (zero-byte waits not counted).</summary>
    public long Reads { get; private set; }

    /// <summary>Bytes the engine wrote (echoes).</summary>
    public long Written { get; private set; }

    /// <summary>Hands the whole frame stream to the waiting engine, in its cuts; returns when the engine waits again.</summary>
    public void Feed()
    {
        _position = 0;
        _cut = 0;
        _leftInCut = _frames.Cuts[0];
        Complete(_pendingBuffer.Length == 0 ? 0 : Take(_pendingBuffer.Span));
    }

    /// <summary>Ends the stream: the waiting read returns 0 (the peer's end), as does every read after it.</summary>
    public void End()
    {
        _position = _frames.Bytes.Length;
        _leftInCut = -1;
        if (_waiting)
            Complete(0);
    }

    public override ValueTask<int> ReadAsync(Memory<byte> buffer, CancellationToken cancellationToken = default)
    {
        if (_leftInCut < 0)
            return new ValueTask<int>(0);
        if (_position == _frames.Bytes.Length)
        {
            _pendingBuffer = buffer;
            _version++;
            _waiting = true;
            return new ValueTask<int>(this, _version);
        }

        return new ValueTask<int>(buffer.Length == 0 ? 0 : Take(buffer.Span));
    }

    public override ValueTask WriteAsync(ReadOnlyMemory<byte> buffer, CancellationToken cancellationToken = default)
    {
        Written += buffer.Length;
        return default;
    }

    private int Take(Span<byte> destination)
    {
        Reads++;
        var count = Math.Min(_leftInCut, destination.Length);
        _frames.Bytes.AsSpan(_position, count).CopyTo(destination);
        _position += count;
        _leftInCut -= count;
        if (_leftInCut == 0 && ++_cut < _frames.Cuts.Length)
            _leftInCut = _frames.Cuts[_cut];
        return count;
    }

    private void Complete(int result)
    {
        if (!_waiting)
            throw new InvalidOperationException("The engine is not waiting in a read.");
        _result = result;
        _pendingBuffer = default;
        _waiting = false;
        var continuation = _continuation!;
        var state = _continuationState;
        _continuation = null;
        _continuationState = null;
        continuation(state);
    }

    int IValueTaskSource<int>.GetResult(short token) => _result;

    ValueTaskSourceStatus IValueTaskSource<int>.GetStatus(short token) =>
        _waiting ? ValueTaskSourceStatus.Pending : ValueTaskSourceStatus.Succeeded;

    void IValueTaskSource<int>.OnCompleted(Action<object?> continuation, object? state, short token, ValueTaskSourceOnCompletedFlags flags)
    {
        _continuationState = state;
        Volatile.Write(ref _continuation, continuation);
        _firstWait.TrySetResult();
    }

    public override bool CanRead => true;

    public override bool CanWrite => true;

    public override bool CanSeek => false;

    public override long Length => throw new NotSupportedException();

    public override long Position
    {
        get => throw new NotSupportedException();
        set => throw new NotSupportedException();
    }

    public override int Read(byte[] buffer, int offset, int count) => throw new NotSupportedException("The engine reads asynchronously.");

    public override void Write(byte[] buffer, int offset, int count) => Written += count;

    public override void Flush()
    {
    }

    public override long Seek(long offset, SeekOrigin origin) => throw new NotSupportedException();

    public override void SetLength(long value) => throw new NotSupportedException();
}
