
namespace NetServer.Streams;

/// <summary>
/// The sessions a multicast goes to: an array of slots that readers walk without a lock or an
/// enumerator allocation, while connects and disconnects take and free slots under a lock.
/// A session that connects during a multicast may or may not get that message; one that
/// disconnects during it refuses the send. A session may leave and join again while it lives;
/// once removed for good (it disconnected) it cannot join again.
/// </summary>
internal sealed class SessionRegistry<TSession>
    where TSession : StreamSession
{
    private readonly object _lock = new();
    private TSession?[] _slots = new TSession?[16];
    private int[] _free = new int[16];
    private int _freeCount;
    private int _used;

    /// <summary>The slot array and how many of its slots were ever used; entries may be null.</summary>
    public TSession?[] Snapshot(out int used)
    {
        var slots = Volatile.Read(ref _slots);
        used = Math.Min(Volatile.Read(ref _used), slots.Length);
        return slots;
    }

    /// <summary>Where a session that disconnected is marked: it can never join again.</summary>
    private const int Gone = -2;

    /// <summary>Adds <paramref name="session"/>; false if it is already a member or has disconnected.</summary>
    public bool Add(TSession session)
    {
        lock (_lock)
        {
            if (session.RegistrySlot != -1)
                return false;
            int slot;
            if (_freeCount > 0)
            {
                slot = _free[--_freeCount];
            }
            else
            {
                if (_used == _slots.Length)
                {
                    var grown = new TSession?[_slots.Length * 2];
                    Array.Copy(_slots, grown, _used);
                    Volatile.Write(ref _slots, grown);
                }

                slot = _used;
                Volatile.Write(ref _used, _used + 1);
            }

            session.RegistrySlot = slot;
            Volatile.Write(ref _slots[slot], session);
            return true;
        }
    }

    /// <summary>
    /// Removes <paramref name="session"/>; <paramref name="forever"/> (it disconnected) also keeps it
    /// from joining again. Returns whether it was a member.
    /// </summary>
    public bool Remove(TSession session, bool forever)
    {
        lock (_lock)
        {
            var slot = session.RegistrySlot;
            if (forever)
                session.RegistrySlot = Gone;
            if (slot < 0 || !ReferenceEquals(_slots[slot], session))
                return false;
            Volatile.Write(ref _slots[slot], null);
            if (!forever)
                session.RegistrySlot = -1;
            if (_freeCount == _free.Length)
                Array.Resize(ref _free, _free.Length * 2);
            _free[_freeCount++] = slot;
            return true;
        }
    }
}
