using System.Collections.Generic;
using System.Runtime.InteropServices;

namespace NetServer.Service;

/// <summary>
/// One loop's epoll instance: the sockets pinned to the loop, registered once, edge-triggered, for
/// reading and writing, plus an eventfd that wakes the loop when work is posted to it. Only the
/// loop's thread polls; registration and removal may come from any thread.
/// </summary>
/// <remarks>
/// Each registration holds a reference on its socket's handle, so the descriptor cannot be closed
/// (and its number reused by another socket) while it is in the epoll set. Events carry a key of
/// slot and generation: an event read for a registration removed meanwhile finds another
/// generation (or none) in its slot and is dropped.
/// </remarks>
internal sealed unsafe class LoopPoller : IDisposable
{
    private const int MaxEvents = 256;
    private const ulong WakeKey = ulong.MaxValue;

    private readonly int _epoll;
    private readonly int _wake;
    private readonly byte* _events;
    private readonly object _sync = new();
    private readonly Stack<int> _free = new();
    private PollRegistration?[] _slots = new PollRegistration?[64];
    private int _used;
    private uint _generation;
    private bool _closed;
    private volatile bool _failForTests; // the next wait fails as a broken epoll descriptor would

    private LoopPoller(int epoll, int wake)
    {
        _epoll = epoll;
        _wake = wake;
        _events = (byte*)NativeMemory.Alloc((nuint)(MaxEvents * Epoll.EventSize));
    }

    /// <summary>A poller, or null (with the reason) where epoll is not available.</summary>
    public static LoopPoller? TryCreate(out string? failure)
    {
        failure = null;
        if (!OperatingSystem.IsLinux())
        {
            failure = "the loops' own socket transport needs Linux (epoll); this service's connections use the default transport";
            return null;
        }

        int epoll, wake;
        try
        {
            epoll = Epoll.Create(Epoll.CloExec);
        }
        catch (Exception e) when (e is DllNotFoundException or EntryPointNotFoundException)
        {
            failure = "epoll is not available (" + e.Message + "); this service's connections use the default transport";
            return null;
        }

        if (epoll < 0)
        {
            failure = $"epoll_create1 failed (errno {Marshal.GetLastPInvokeError()}); this service's connections use the default transport";
            return null;
        }

        wake = Epoll.EventFd(0, Epoll.CloExec | Epoll.NonBlocking);
        var error = wake < 0 ? Marshal.GetLastPInvokeError() : Epoll.Control(epoll, Epoll.CtlAdd, wake, Epoll.In, WakeKey);
        if (error != 0)
        {
            failure = $"{(wake < 0 ? "eventfd" : "epoll_ctl")} failed (errno {error}); this service's connections use the default transport";
            if (wake >= 0)
                Epoll.Close(wake);
            Epoll.Close(epoll);
            return null;
        }

        return new LoopPoller(epoll, wake);
    }

    /// <summary>
    /// Adds the registration's socket; false when the poller is closing or the kernel refused it. A
    /// connection is polled edge-triggered for both directions; a listener (<paramref name="listener"/>)
    /// level-triggered for readability, exclusively: a pending connection wakes one waiting loop, and
    /// stays reported until some loop accepts it.
    /// </summary>
    public bool Add(PollRegistration registration, bool listener = false)
    {
        var added = false;
        registration.Handle.DangerousAddRef(ref added); // throws (socket closed) before anything is taken
        lock (_sync)
        {
            if (_closed)
            {
                registration.Handle.DangerousRelease();
                return false;
            }

            var slot = _free.Count != 0 ? _free.Pop() : _used++;
            if (slot == _slots.Length)
            {
                var grown = new PollRegistration?[_slots.Length * 2];
                Array.Copy(_slots, grown, _slots.Length);
                Volatile.Write(ref _slots, grown);
            }

            var key = ((ulong)++_generation << 32) | (uint)slot;
            registration.Key = key;
            _slots[slot] = registration;
            var events = listener ? Epoll.In | Epoll.Exclusive : Epoll.In | Epoll.Out | Epoll.RdHup | Epoll.EdgeTriggered;
            if (Epoll.Control(_epoll, Epoll.CtlAdd, registration.Fd, events, key) == 0)
                return true;

            _slots[slot] = null;
            _free.Push(slot);
            registration.Handle.DangerousRelease();
            return false;
        }
    }

    /// <summary>Takes the registration's socket out of the epoll set (once) and lets go of its handle.</summary>
    public void Remove(PollRegistration registration)
    {
        lock (_sync)
        {
            var slot = (int)(uint)registration.Key;
            if (slot >= _slots.Length || !ReferenceEquals(_slots[slot], registration))
                return;
            _slots[slot] = null;
            _free.Push(slot);
            if (!_closed)
                Epoll.Control(_epoll, Epoll.CtlDel, registration.Fd, 0, 0);
        }

        registration.Handle.DangerousRelease();
    }

    /// <summary>
    /// On the loop thread: waits up to <paramref name="timeoutMilliseconds"/> (-1: until something
    /// happens) and signals the registrations that became ready. Returns the number of events, or
    /// -1 with <paramref name="failure"/> when epoll itself failed (not expected: EBADF, EINVAL,
    /// ENOMEM); the poller is then of no more use.
    /// </summary>
    public int Poll(int timeoutMilliseconds, IoService service, out string? failure)
    {
        failure = null;
        var count = Epoll.Wait(_failForTests ? -1 : _epoll, _events, MaxEvents, timeoutMilliseconds);
        if (count < 0)
        {
            var errno = Marshal.GetLastPInvokeError();
            if (errno == Epoll.Eintr)
                return 0;
            failure = $"epoll_wait failed (errno {errno}); this loop's connections were ended and its new ones use the default transport";
            return -1;
        }

        if (count == 0)
            return 0;
        var slots = Volatile.Read(ref _slots);
        for (var i = 0; i < count; i++)
        {
            var key = Epoll.DataAt(_events, i);
            if (key == WakeKey)
            {
                ulong value;
                Epoll.Read(_wake, (byte*)&value, sizeof(ulong));
                continue;
            }

            var slot = (int)(uint)key;
            if (slot >= slots.Length || slots[slot] is not { } registration || registration.Key != key)
                continue; // removed meanwhile
            var events = Epoll.EventsAt(_events, i);
            try
            {
                registration.Signal(
                    readable: (events & (Epoll.In | Epoll.RdHup | Epoll.Hup | Epoll.Err)) != 0,
                    writable: (events & (Epoll.Out | Epoll.Hup | Epoll.Err)) != 0,
                    ended: (events & (Epoll.RdHup | Epoll.Hup)) != 0); // an error alone (the error queue) is not an end
            }
            catch (Exception e)
            {
                service.ReportError(e);
            }
        }

        return count;
    }

    /// <summary>Makes the next <see cref="Poll"/> fail as a broken epoll descriptor would (tests of the fallback).</summary>
    internal void FailNextPollForTests()
    {
        _failForTests = true;
        Wake();
    }

    /// <summary>Wakes the loop out of <see cref="Poll"/> (from any thread).</summary>
    public void Wake()
    {
        ulong one = 1;
        Epoll.Write(_wake, (byte*)&one, sizeof(ulong));
    }

    /// <summary>Refuses new registrations and returns the current ones (the loop is stopping).</summary>
    public List<PollRegistration> Close()
    {
        var all = new List<PollRegistration>();
        lock (_sync)
        {
            _closed = true;
            foreach (var registration in _slots)
            {
                if (registration is not null)
                    all.Add(registration);
            }
        }

        return all;
    }

    public void Dispose()
    {
        lock (_sync)
            _closed = true;
        Epoll.Close(_wake);
        Epoll.Close(_epoll);
        NativeMemory.Free(_events);
    }
}
