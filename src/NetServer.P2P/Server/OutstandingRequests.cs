using System.Collections.Generic;

namespace NetServer.P2P.Server;

/// <summary>
/// The requests one peer has in flight to other peers through the relay, by correlation id: a
/// reply passes only from the peer that was asked, so no other peer can answer (or spoil) a
/// request it was not sent. Bounded: a slot is freed by the reply, or reused once its target left
/// or it is older than the request lifetime.
/// </summary>
/// <remarks>Written by the requester's receive hook (a request) and the target's (its reply): under a lock, on the request path only.</remarks>
internal sealed class OutstandingRequests(int capacity, long lifetimeMilliseconds)
{
    private readonly object _lock = new();
    private readonly Dictionary<ulong, Entry> _entries = [];

    public int Count
    {
        get
        {
            lock (_lock)
                return _entries.Count;
        }
    }

    /// <summary>Records request <paramref name="id"/> to <paramref name="target"/>; false when the table is full of live requests.</summary>
    public bool TryAdd(ulong id, IRequestTarget target, long now)
    {
        lock (_lock)
        {
            if (_entries.Count >= capacity && !_entries.ContainsKey(id))
            {
                Purge(now);
                if (_entries.Count >= capacity)
                    return false;
            }

            _entries[id] = new Entry(target, now);
            return true;
        }
    }

    /// <summary>Forgets request <paramref name="id"/> (its forwarding failed).</summary>
    public void Remove(ulong id)
    {
        lock (_lock)
            _entries.Remove(id);
    }

    /// <summary>True (and forgotten) when request <paramref name="id"/> was sent to <paramref name="responder"/>: its reply may pass.</summary>
    public bool TryComplete(ulong id, IRequestTarget responder)
    {
        lock (_lock)
        {
            if (!_entries.TryGetValue(id, out var entry) || !ReferenceEquals(entry.Target, responder))
                return false;
            _entries.Remove(id);
            return true;
        }
    }

    private void Purge(long now)
    {
        List<ulong>? stale = null;
        foreach (var pair in _entries)
        {
            if (pair.Value.Target.HasLeft || (lifetimeMilliseconds >= 0 && now - pair.Value.Started >= lifetimeMilliseconds))
                (stale ??= []).Add(pair.Key);
        }

        if (stale is null)
            return;
        foreach (var id in stale)
            _entries.Remove(id);
    }

    private readonly struct Entry(IRequestTarget target, long started)
    {
        public IRequestTarget Target { get; } = target;

        public long Started { get; } = started;
    }
}
