using System;
using System.Collections.Generic;
using System.IO;
using System.Threading;
using System.Threading.Tasks;
using NetServer.Protobuf.Diagnostics;

namespace NetServer.Protobuf.Requests;

/// <summary>
/// The requests of one connection (a session, or a client across its reconnects) awaiting their
/// replies, by correlation id; written once for sessions and clients.
/// </summary>
/// <remarks>
/// <para>Whoever removes a request from the table completes it: its reply, its deadline, its
/// token, a failed send, or the connection's end. The others find it gone and do nothing, so a
/// late reply, a deadline racing a reply, or a cancellation racing both each end the request once.</para>
/// <para>Entries (and so their timers) are reused. One goes back to the free list only when
/// nothing can touch it any more: its cancellation registration is disposed, and no expiry call of
/// its deadline can still come (the expiry ran, or <see cref="Timers.TimerEntry.Disarm"/> stopped
/// it in time). An entry whose expiry was claimed by the clock while a reply won is left to the
/// collector instead, so a stale expiry never sees an entry reused for another request.</para>
/// </remarks>
internal sealed class RequestTable
{
    private const int MaxFree = 1024;

    private readonly object _lock = new();
    private readonly Dictionary<ulong, PendingRequest> _pending = [];
    private readonly Stack<PendingRequest> _free = new();
    private long _nextId;
    private long _lateReplies;

    /// <summary>Requests awaiting their reply now.</summary>
    public int Count
    {
        get
        {
            lock (_lock)
                return _pending.Count;
        }
    }

    /// <summary>Replies that matched no pending request (it had timed out, been canceled, or never existed).</summary>
    public long LateReplies => Interlocked.Read(ref _lateReplies);

    /// <summary>Entries waiting to be reused (for tests: every finished request's entry comes back).</summary>
    internal int FreeCount
    {
        get
        {
            lock (_lock)
                return _free.Count;
        }
    }

    /// <summary>Entries waiting to be reused whose deadline is still armed (for tests: always 0).</summary>
    internal int ArmedFreeCount
    {
        get
        {
            lock (_lock)
            {
                var armed = 0;
                foreach (var entry in _free)
                    armed += entry.IsArmed ? 1 : 0;
                return armed;
            }
        }
    }

    /// <summary>Registers a request: a new correlation id, its deadline armed, its token watched.</summary>
    public Task<T> Start<T>(ReplyReader<T> reader, TimeSpan timeout, CancellationToken cancellationToken, out ulong id)
    {
        var completion = new ReplyCompletion<T>(reader);
        id = (ulong)Interlocked.Increment(ref _nextId);
        var mark = ProtoTelemetry.Start(id);
        PendingRequest entry;
        lock (_lock)
        {
            entry = _free.Count > 0 ? _free.Pop() : new PendingRequest(this);
            entry.Begin(id, timeout, completion);
            entry.Mark = mark;

            // Armed under the lock, before it is in the table: an expiry takes the lock, so it
            // finds the request; and whoever finishes it sees that the deadline is armed.
            if (timeout != Timeout.InfiniteTimeSpan)
                entry.Arm();
            _pending.Add(id, entry);
        }

        if (cancellationToken.CanBeCanceled)
        {
            entry.Register(cancellationToken);

            // Canceled before the registration was in place: its callback found nothing to do.
            if (cancellationToken.IsCancellationRequested)
                Fail(id, entry, new OperationCanceledException(cancellationToken), ProtoTelemetry.Canceled);
        }

        Release(entry); // set up: from here on only the completion's hold keeps it
        return completion.Task;
    }

    /// <summary>Completes the request <paramref name="reply"/> answers, inside the receive hook; false (and counted, with <paramref name="countLate"/>) when none is pending.</summary>
    public bool TryComplete(in ProtoMessage reply, bool countLate = true)
    {
        if (!TryTake(reply.RequestId, null, out var entry))
        {
            if (countLate)
                Interlocked.Increment(ref _lateReplies);
            return false;
        }

        // Retired before the caller's task completes, so its continuation finds the entry reusable.
        var completion = entry.Completion!;
        ProtoTelemetry.End(entry.Mark, ProtoTelemetry.Ok, null);
        Retire(entry, expired: false);
        completion.Complete(in reply);
        return true;
    }

    /// <summary>Fails the request <paramref name="id"/> if it is still pending (a send that did not go out).</summary>
    public void Fail(ulong id, Exception error) => Fail(id, null, error, ProtoTelemetry.Failed);

    /// <summary>Fails every pending request at once: the connection ended.</summary>
    public void FailAll(DisconnectReason reason)
    {
        List<PendingRequest> entries;
        lock (_lock)
        {
            if (_pending.Count == 0)
                return;
            entries = [.. _pending.Values];
            _pending.Clear();
        }

        foreach (var entry in entries)
        {
            var (completion, id) = (entry.Completion!, entry.Id);
            var error = new IOException($"The connection closed ({reason}) before the reply to request {id} came.");
            ProtoTelemetry.End(entry.Mark, ProtoTelemetry.Disconnected, error);
            Retire(entry, expired: false);
            completion.Fail(error);
        }
    }

    internal void Expire(PendingRequest entry) =>
        Fail(entry.Id, entry, new TimeoutException($"No reply to request {entry.Id} within {entry.Timeout.TotalMilliseconds:0.###} ms."), ProtoTelemetry.TimedOut);

    internal void Cancel(PendingRequest entry, CancellationToken token) =>
        Fail(entry.Id, entry, new OperationCanceledException($"Request {entry.Id} was canceled.", token), ProtoTelemetry.Canceled);

    private void Fail(ulong id, PendingRequest? expected, Exception error, string outcome)
    {
        if (!TryTake(id, expected, out var entry))
            return;
        var completion = entry.Completion!;
        ProtoTelemetry.End(entry.Mark, outcome, error);
        Retire(entry, expired: ReferenceEquals(outcome, ProtoTelemetry.TimedOut));
        completion.Fail(error);
    }

    private bool TryTake(ulong id, PendingRequest? expected, out PendingRequest entry)
    {
        lock (_lock)
        {
            if (_pending.TryGetValue(id, out entry!) && (expected is null || ReferenceEquals(entry, expected)))
                return _pending.Remove(id);
        }

        return false;
    }

    // The request is complete: stop its deadline, then let go of the completion's hold.
    private void Retire(PendingRequest entry, bool expired)
    {
        entry.TimerQuiet = expired || !entry.Armed || entry.Disarm();
        Release(entry);
    }

    private void Release(PendingRequest entry)
    {
        if (!entry.Release() || !entry.TimerQuiet)
            return;
        lock (_lock)
        {
            if (_free.Count < MaxFree)
                _free.Push(entry);
        }
    }
}
