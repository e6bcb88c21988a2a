using System.Diagnostics;

namespace NetServer.Internal;

/// <summary>
/// Senders parked until a send queue has room (or has sent up to their watermark), in arrival
/// order: a list linked through the waiters themselves, so a waiter whose cancellation wins leaves
/// it at once instead of staying until the queue moves, and "is anyone waiting?" looks at the
/// head only, not a scan. A stalled peer and an application that retries with timeouts cannot grow it: it holds
/// only senders that are still waiting.
/// </summary>
/// <remarks>
/// <para>
/// Guarded by its owner's lock, given to the constructor: every member is called with that lock
/// held, except <see cref="Withdraw"/>, which takes it. Claims decide who ends a wait (see
/// <see cref="SendWaiter.TryClaim"/>): <see cref="TryTake"/> and <see cref="FailAll"/> claim under
/// the lock; a cancellation claims first, without it, then takes it to unlink its waiter. It must not
/// wait for the lock before claiming: an owner that holds the lock and ends a waiter disposes the
/// waiter's cancellation registration, and that waits for a callback already running, so a
/// callback stuck on the lock would never return.
/// </para>
/// <para>
/// A waiter whose wait was ended by someone else than the owner (its cancellation, a blocking
/// sender's timeout) no longer counts as waiting, even before its <see cref="Withdraw"/> unlinks
/// it: only the owner's release of room (after a send) wakes parked senders, so a sender that
/// parked behind it while the queue had drained would never be woken. Whoever meets it first
/// unlinks it.
/// </para>
/// </remarks>
internal sealed class WaiterQueue(object ownerLock)
{
    private readonly object _lock = ownerLock;
    private SendWaiter? _head;
    private SendWaiter? _tail;
    private int _length;

    /// <summary>Waiters linked (a cancelled one not yet withdrawn included): what the list holds.</summary>
    public int Length => _length;

    /// <summary>
    /// Whether a sender is still waiting (one nobody has ended): new senders go behind it. Only then:
    /// one parked behind a waiter that gave up, in a queue that has drained, would wait for a
    /// release that never comes.
    /// </summary>
    public bool HasWaiting() => Peek() is not null;

    /// <summary>Parks <paramref name="waiter"/> last. Its cancellation, registered afterwards, withdraws it.</summary>
    public void Park(SendWaiter waiter)
    {
        Debug.Assert(Monitor.IsEntered(_lock), "Parked without the owner's lock.");
        waiter.ParkIn(this);
        waiter.Previous = _tail;
        if (_tail is null)
            _head = waiter;
        else
            _tail.Next = waiter;
        _tail = waiter;
        _length++;
    }

    /// <summary>The first waiter nobody has ended yet, or null; cancelled ones met at the head are unlinked on the way.</summary>
    public SendWaiter? Peek()
    {
        while (_head is { } head)
        {
            if (!head.IsClaimed)
                return head;
            Unlink(head);
        }

        return null;
    }

    /// <summary>
    /// Claims <paramref name="waiter"/> (as <see cref="Peek"/> returned it) and unlinks it; the caller
    /// then finishes it. False if its cancellation claimed it first (it is unlinked all the same).
    /// </summary>
    public bool TryTake(SendWaiter waiter)
    {
        Unlink(waiter);
        return waiter.TryClaim();
    }

    /// <summary>Ends every waiter with false: the owner closed.</summary>
    public void FailAll()
    {
        while (_head is { } head)
        {
            if (TryTake(head))
                head.Finish(false);
        }
    }

    /// <summary>Called by whoever ended a waiter's wait other than the owner (without the lock held), once it has claimed it: unlinks it.</summary>
    public void Withdraw(SendWaiter waiter)
    {
        lock (_lock)
            Unlink(waiter);
    }

    private void Unlink(SendWaiter waiter)
    {
        if (waiter.Previous is null && _head != waiter)
            return; // already unlinked
        if (waiter.Previous is { } previous)
            previous.Next = waiter.Next;
        else
            _head = waiter.Next;
        if (waiter.Next is { } next)
            next.Previous = waiter.Previous;
        else
            _tail = waiter.Previous;
        waiter.Previous = null;
        waiter.Next = null;
        _length--;
    }
}
