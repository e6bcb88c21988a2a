using System;
using System.Threading;
using NetServer.Protobuf.Diagnostics;
using NetServer.Timers;

namespace NetServer.Protobuf.Requests;

/// <summary>
/// One request awaiting its reply: its entry in the <see cref="RequestTable"/> and its deadline on
/// the shared clock (<see cref="TimerWheel.Shared"/>). Entries are reused by their table, so a
/// request allocates no timer; see <see cref="RequestTable"/> for when one may be reused.
/// </summary>
internal sealed class PendingRequest(RequestTable table) : TimerEntry
{
    private static readonly Action<object?> s_canceled = static state => ((PendingRequest)state!).OnCanceled();

    private CancellationTokenRegistration _registration;
    private CancellationToken _token;

    // Two holds: the caller's, until the entry is fully set up, and the completion's, until
    // whoever completed it has disarmed it. The last to let go cleans up and recycles.
    private int _holds;

    public ulong Id { get; private set; }

    public TimeSpan Timeout { get; private set; }

    public IReplyCompletion? Completion { get; set; }

    /// <summary>This use's start for its metrics and activity (default: nobody listened).</summary>
    public RequestMark Mark { get; set; }

    /// <summary>Armed in this use; with <see cref="TimerQuiet"/> it tells whether an expiry call may still come.</summary>
    public bool Armed { get; private set; }

    /// <summary>True once no <see cref="OnExpired"/> of this use can come any more (it ran, it was disarmed in time, or it was never armed).</summary>
    public bool TimerQuiet { get; set; }

    public void Begin(ulong id, TimeSpan timeout, IReplyCompletion completion)
    {
        Id = id;
        Timeout = timeout;
        Completion = completion;
        Armed = false;
        TimerQuiet = false;
        _token = default;
        _registration = default;
        _holds = 2;
    }

    public void Arm()
    {
        Armed = true;
        ArmAfter(Timeout);
    }

    public void Register(CancellationToken token)
    {
        _token = token;
        _registration = token.Register(s_canceled, this);
    }

    /// <summary>Lets go of one hold; true when it was the last (the caller then recycles the entry if its timer is quiet).</summary>
    public bool Release()
    {
        if (Interlocked.Decrement(ref _holds) != 0)
            return false;

        // Waits for a cancellation callback running on another thread (it found the request gone
        // and returns at once); from inside the callback itself it does not wait.
        _registration.Dispose();
        _registration = default;
        _token = default;
        Completion = null;
        Mark = default;
        return true;
    }

    protected override void OnExpired() => table.Expire(this);

    private void OnCanceled() => table.Cancel(this, _token);
}
