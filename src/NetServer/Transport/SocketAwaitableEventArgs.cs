using System.Collections.Generic;
using System.Diagnostics;
using System.Threading.Tasks.Sources;

namespace NetServer.Transport;

/// <summary>
/// A reusable <see cref="SocketAsyncEventArgs"/> that is its own <see cref="IValueTaskSource{T}"/>:
/// awaiting an operation allocates nothing, a synchronous completion is returned as a completed
/// <see cref="ValueTask{T}"/> without touching the continuation machinery, and errors come back as a
/// <see cref="SocketResult"/> instead of an exception. One operation at a time per instance.
/// </summary>
internal sealed class SocketAwaitableEventArgs : SocketEventArgsBase, IValueTaskSource<SocketResult>
{
    private static readonly Action<object?> s_completedSentinel = static _ => Debug.Fail("The sentinel continuation must never run.");

    private Action<object?>? _continuation;
    private object? _continuationState;

    /// <summary>
    /// A zero-byte receive: completes when data is available (or the connection ends) without
    /// holding a receive buffer, so an idle connection pins no memory.
    /// </summary>
    public ValueTask<SocketResult> WaitForDataAsync(Socket socket)
    {
        SetBuffer(System.Array.Empty<byte>(), 0, 0);
        try
        {
            return socket.ReceiveAsync(this) ? Pending() : CompletedResult();
        }
        catch (ObjectDisposedException)
        {
            return new ValueTask<SocketResult>(new SocketResult(0, SocketError.OperationAborted));
        }
    }

    /// <summary>
    /// Receives up to <paramref name="count"/> bytes into <paramref name="buffer"/> at
    /// <paramref name="offset"/>; <see cref="SocketFlags.Peek"/> leaves them in the socket (the
    /// PROXY header reader looks before it takes, so it never takes the client's own bytes).
    /// </summary>
    public ValueTask<SocketResult> ReceiveAsync(Socket socket, byte[] buffer, int offset, int count, SocketFlags flags)
    {
        if (BufferList is not null)
            BufferList = null;
        SetBuffer(buffer, offset, count);
        SocketFlags = flags;
        try
        {
            return socket.ReceiveAsync(this) ? Pending() : CompletedResult();
        }
        catch (ObjectDisposedException)
        {
            return new ValueTask<SocketResult>(new SocketResult(0, SocketError.OperationAborted));
        }
    }

    /// <summary>
    /// Starts a send for a caller that continues in a callback rather than an await: returns true
    /// when the send is pending (<paramref name="continuation"/> later runs with
    /// <paramref name="state"/> and calls <see cref="TakeResult"/>), or false with the
    /// <paramref name="result"/> of a send that completed at once.
    /// </summary>
    public bool StartSend(Socket socket, byte[] array, int offset, int count, Action<object?> continuation, object state, out SocketResult result)
    {
        if (BufferList is not null)
            BufferList = null;
        SetBuffer(array, offset, count);
        return Continue(TrySendAsync(socket), continuation, state, out result);
    }

    /// <summary>As the other <see cref="StartSend(Socket, byte[], int, int, Action{object?}, object, out SocketResult)"/>, gathering several segments.</summary>
    public bool StartSend(Socket socket, IList<ArraySegment<byte>> segments, Action<object?> continuation, object state, out SocketResult result)
    {
        SetBuffer(null, 0, 0);
        BufferList = segments;
        return Continue(TrySendAsync(socket), continuation, state, out result);
    }

    /// <summary>
    /// Starts the send; a socket closed by another thread meanwhile completes it at once with
    /// <see cref="SocketError.OperationAborted"/> instead of throwing on an I/O thread.
    /// </summary>
    private bool TrySendAsync(Socket socket)
    {
        try
        {
            return socket.SendAsync(this);
        }
        catch (ObjectDisposedException)
        {
            SocketError = SocketError.OperationAborted;
            return false;
        }
    }

    /// <summary>The result of a pending operation started with <c>StartSend</c>, read once from its continuation.</summary>
    public SocketResult TakeResult() => ((IValueTaskSource<SocketResult>)this).GetResult(0);

    private bool Continue(bool pending, Action<object?> continuation, object state, out SocketResult result)
    {
        if (!pending)
        {
            result = new SocketResult(BytesTransferred, SocketError);
            return false;
        }

        result = default;
        ((IValueTaskSource<SocketResult>)this).OnCompleted(continuation, state, 0, ValueTaskSourceOnCompletedFlags.None);
        return true;
    }

    /// <summary>
    /// Receives one datagram; its sender is in <see cref="SocketAsyncEventArgs.RemoteEndPoint"/>
    /// afterwards. The previous sender stays there as the template: the runtime reuses it when the
    /// next datagram comes from the same sender.
    /// </summary>
    public ValueTask<SocketResult> ReceiveFromAsync(Socket socket, byte[] buffer, int count, EndPoint any)
    {
        if (BufferList is not null)
            BufferList = null;
        SetBuffer(buffer, 0, count);
        RemoteEndPoint ??= any;
        try
        {
            return socket.ReceiveFromAsync(this) ? Pending() : CompletedResult();
        }
        catch (ObjectDisposedException)
        {
            return new ValueTask<SocketResult>(new SocketResult(0, SocketError.OperationAborted));
        }
    }

    /// <summary>Sends <paramref name="count"/> bytes of <paramref name="array"/> as one datagram to <paramref name="target"/>.</summary>
    public ValueTask<SocketResult> SendToAsync(Socket socket, byte[] array, int count, EndPoint target)
    {
        if (BufferList is not null)
            BufferList = null;
        SetBuffer(array, 0, count);
        RemoteEndPoint = target;
        try
        {
            return socket.SendToAsync(this) ? Pending() : CompletedResult();
        }
        catch (ObjectDisposedException)
        {
            return new ValueTask<SocketResult>(new SocketResult(0, SocketError.OperationAborted));
        }
    }

    public ValueTask<SocketResult> AcceptAsync(Socket listener)
    {
        AcceptSocket = null;
        return listener.AcceptAsync(this) ? Pending() : CompletedResult();
    }

    public ValueTask<SocketResult> ConnectAsync(Socket socket, EndPoint endpoint)
    {
        RemoteEndPoint = endpoint;
        return socket.ConnectAsync(this) ? Pending() : CompletedResult();
    }

    /// <summary>Forgets the buffers of the last operation so the args pin nothing while pooled.</summary>
    public void ClearBuffers()
    {
        if (BufferList is not null)
            BufferList = null;
        SetBuffer(null, 0, 0);
        AcceptSocket = null;
        RemoteEndPoint = null;
    }

    private ValueTask<SocketResult> Pending() => new(this, 0);

    private ValueTask<SocketResult> CompletedResult() => new(new SocketResult(BytesTransferred, SocketError));

    protected override void OnCompleted(SocketAsyncEventArgs e)
    {
        // Acquire: the state stored before the continuation was published must be seen with it.
        var continuation = Volatile.Read(ref _continuation);
        if (continuation is null)
            continuation = Interlocked.CompareExchange(ref _continuation, s_completedSentinel, null);
        if (continuation is null)
            return; // The awaiter registers later and finds the sentinel.

        var state = _continuationState;
        _continuationState = null;
        _continuation = s_completedSentinel;
        continuation(state);
    }

    SocketResult IValueTaskSource<SocketResult>.GetResult(short token)
    {
        _continuation = null;
        return new SocketResult(BytesTransferred, SocketError);
    }

    // Acquire: seeing the sentinel must also show the operation's results (BytesTransferred,
    // SocketError) written before it was published; a plain read may be reordered before them (the
    // same reordering Kestrel fixed by making this field volatile, dotnet/aspnetcore#50623).
    ValueTaskSourceStatus IValueTaskSource<SocketResult>.GetStatus(short token) =>
        ReferenceEquals(Volatile.Read(ref _continuation), s_completedSentinel) ? ValueTaskSourceStatus.Succeeded : ValueTaskSourceStatus.Pending;

    void IValueTaskSource<SocketResult>.OnCompleted(Action<object?> continuation, object? state, short token, ValueTaskSourceOnCompletedFlags flags)
    {
        _continuationState = state;
        var previous = Volatile.Read(ref _continuation) ?? Interlocked.CompareExchange(ref _continuation, continuation, null);
        if (ReferenceEquals(previous, s_completedSentinel))
        {
            // The operation finished between the start and this registration: run the
            // continuation on the pool rather than inline, so a run of such races cannot deepen the stack.
            _continuationState = null;
            ThreadPoolScheduler.Schedule(continuation, state);
        }
    }
}
