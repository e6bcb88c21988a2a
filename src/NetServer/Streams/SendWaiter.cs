
namespace NetServer.Streams;

/// <summary>
/// A sender parked until the send queue has room (<see cref="IsFlush"/> false: its bytes are
/// appended when it is released, in arrival order) or until every byte queued before it has been
/// handed to the kernel (<see cref="IsFlush"/> true). Awaited through <see cref="Task"/>, or waited
/// on by the blocking <c>Send</c>. Only the slow path allocates one of these.
/// </summary>
/// <remarks>
/// Whoever ends the wait (the flusher releasing it, a close failing it, a cancellation) first
/// wins <see cref="TryClaim"/>; only the winner touches the payload, so a cancelled send is never
/// also queued. A waiter parked in a <see cref="WaiterQueue"/> leaves it as soon as its
/// cancellation (or its blocking sender's timeout) wins.
/// </remarks>
internal sealed class SendWaiter
{
    private readonly TaskCompletionSource<bool>? _completion;
    private WaiterQueue? _parkedIn;
    private CancellationTokenRegistration _registration; // under lock (this)
    private bool _finished;                              // under lock (this)
    private int _claimed;
    private bool _signaled;
    private bool _result;

    private SendWaiter(bool synchronous)
    {
        if (!synchronous)
            _completion = new TaskCompletionSource<bool>(TaskCreationOptions.RunContinuationsAsynchronously);
    }

    public ReadOnlyMemory<byte> Data { get; private set; }

    public SharedBuffer? Shared { get; private set; }

    public long Watermark { get; set; }

    /// <summary>Where the parked bytes go, for a datagram sender (null for stream senders).</summary>
    public EndPoint? Target { get; private set; }

    public bool IsFlush { get; private set; }

    public int Length => Shared?.Length ?? Data.Length;

    public bool IsClaimed => Volatile.Read(ref _claimed) != 0;

    public Task<bool> Task => _completion!.Task;

    /// <summary>The waiter before this one in its <see cref="WaiterQueue"/> (under the queue's lock).</summary>
    public SendWaiter? Previous { get; set; }

    /// <summary>The waiter after this one in its <see cref="WaiterQueue"/> (under the queue's lock).</summary>
    public SendWaiter? Next { get; set; }

    /// <summary>A sender waiting for room; holds its own reference to <paramref name="shared"/> while parked.</summary>
    public static SendWaiter ForRoom(ReadOnlyMemory<byte> data, SharedBuffer? shared, bool synchronous)
    {
        shared?.AddReference();
        return new SendWaiter(synchronous) { Data = data, Shared = shared };
    }

    /// <summary>A datagram sender waiting for room in a UDP send queue.</summary>
    public static SendWaiter ForDatagram(EndPoint target, ReadOnlyMemory<byte> data) =>
        new(synchronous: false) { Data = data, Target = target };

    /// <summary>A caller waiting until the queue has sent everything up to <paramref name="watermark"/>.</summary>
    public static SendWaiter ForFlush(long watermark, bool synchronous) =>
        new(synchronous) { Watermark = watermark, IsFlush = true };

    /// <summary>Lets <paramref name="token"/> end the wait with a cancellation.</summary>
    public void RegisterCancellation(CancellationToken token)
    {
        if (!token.CanBeCanceled)
            return;
        var registration = token.Register(static state => ((SendWaiter)state!).Cancel(), this);
        bool finished;
        lock (this)
        {
            finished = _finished;
            if (!finished)
                _registration = registration;
        }

        // Released before the registration was stored: nobody else will dispose it.
        if (finished)
            registration.Dispose();
    }

    /// <summary>Records the queue this waiter is parked in, so its cancellation can leave it.</summary>
    public void ParkIn(WaiterQueue queue) => Volatile.Write(ref _parkedIn, queue);

    private void Cancel() => TryLeave(canceled: true);

    /// <summary>
    /// Ends the wait with false unless someone else ended it first (a blocking sender whose send
    /// timeout passed); the waiter leaves its queue at once. False if it was released or failed meanwhile.
    /// </summary>
    public bool TryGiveUp() => TryLeave(canceled: false);

    private bool TryLeave(bool canceled)
    {
        // Claim first, then take the queue's lock (see WaiterQueue); a waiter released or failed meanwhile stays theirs.
        if (!TryClaim())
            return false;
        Volatile.Read(ref _parkedIn)?.Withdraw(this);
        Finish(result: false, canceled);
        return true;
    }

    /// <summary>Takes the right to end this wait; false if someone else already has.</summary>
    public bool TryClaim() => Interlocked.Exchange(ref _claimed, 1) == 0;

    /// <summary>Ends a wait claimed with <see cref="TryClaim"/>.</summary>
    public void Finish(bool result, bool canceled = false)
    {
        // The waiter's own reference; if its bytes were queued, the queue took another.
        Shared?.Release();
        Shared = null;
        Data = default;
        CancellationTokenRegistration registration;
        lock (this)
        {
            _finished = true;
            registration = _registration;
            _registration = default;
        }

        registration.Dispose();
        if (_completion is not null)
        {
            if (canceled)
                _completion.TrySetCanceled();
            else
                _completion.TrySetResult(result);
            return;
        }

        lock (this)
        {
            _result = result;
            _signaled = true;
            Monitor.PulseAll(this);
        }
    }

    /// <summary>Blocks the calling thread until the wait ends and returns its outcome; for the synchronous sends only.</summary>
    public bool WaitSynchronously()
    {
        WaitSynchronously(Timeout.InfiniteTimeSpan);
        return Result;
    }

    /// <summary>The outcome of a synchronous wait that ended (see <see cref="WaitSynchronously(TimeSpan)"/>).</summary>
    public bool Result
    {
        get
        {
            lock (this)
                return _result;
        }
    }

    /// <summary>
    /// Blocks the calling thread until the wait ends or <paramref name="timeout"/> passes; for the
    /// synchronous <c>Send</c> only. Returns whether it ended (its outcome is <see cref="Result"/>).
    /// </summary>
    public bool WaitSynchronously(TimeSpan timeout)
    {
        lock (this)
        {
            if (timeout == Timeout.InfiniteTimeSpan)
            {
                while (!_signaled)
                    Monitor.Wait(this);
                return true;
            }

            return _signaled || (Monitor.Wait(this, timeout) && _signaled) || _signaled;
        }
    }
}
