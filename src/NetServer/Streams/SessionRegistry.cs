using System;
using System.Threading;

namespace NetServer.Streams;

/// <summary>
/// The sessions a multicast goes to: an array of slots that readers walk without a lock or an
/// enumerator allocation, while connects and disconnects take and free slots under a lock.
/// A session that connects during a multicast may or may not get that message; one that
/// disconnects during it refuses the send.
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

    public void Add(TSession session)
    {
        lock (_lock)
        {
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
        }
    }

    public void Remove(TSession session)
    {
        lock (_lock)
        {
            var slot = session.RegistrySlot;
            if (slot < 0 || !ReferenceEquals(_slots[slot], session))
                return;
            Volatile.Write(ref _slots[slot], null);
            session.RegistrySlot = -1;
            if (_freeCount == _free.Length)
                Array.Resize(ref _free, _free.Length * 2);
            _free[_freeCount++] = slot;
        }
    }
}
