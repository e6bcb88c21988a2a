using System.Collections.Generic;
using System.Diagnostics.CodeAnalysis;

namespace NetServer.Internal;

/// <summary>
/// A map that holds at most <see cref="Capacity"/> entries and, once full, forgets one entry per
/// entry added: the first the clock hand finds unused since it last passed (CLOCK, a cheap
/// approximation of least-recently-used). A steady set of keys that fits is never forgotten, so
/// after warm-up lookups and hits allocate nothing; a flood of new keys replaces old ones a
/// few at a time instead of starting over, and memory stays at the bound.
/// </summary>
/// <remarks>
/// Storage grows with use up to the bound (a socket that talks to one peer holds one entry).
/// Not thread-safe: each user has one owner at a time.
/// </remarks>
internal sealed class ClockCache<TKey, TValue>
    where TKey : notnull
{
    private const int FirstSize = 16;

    private readonly Dictionary<TKey, int> _slots;
    private readonly int _capacity;
    private Entry[] _entries = Array.Empty<Entry>();
    private int _count;
    private int _hand;

    public ClockCache(int capacity)
    {
        if (capacity < 1)
            ThrowHelper.ThrowArgumentOutOfRange(nameof(capacity), "A cache holds at least one entry.");
        _capacity = capacity;
        _slots = new Dictionary<TKey, int>();
    }

    /// <summary>The most entries the cache holds.</summary>
    public int Capacity => _capacity;

    /// <summary>The entries it holds now.</summary>
    public int Count => _count;

    /// <summary>Finds <paramref name="key"/> and marks it used, so the next pass of the hand keeps it.</summary>
    public bool TryGetValue(TKey key, [MaybeNullWhen(false)] out TValue value)
    {
        if (_slots.TryGetValue(key, out var slot))
        {
            ref var entry = ref _entries[slot];
            entry.Used = true;
            value = entry.Value;
            return true;
        }

        value = default;
        return false;
    }

    /// <summary>Adds <paramref name="key"/>, which must not be present; when full, forgets one entry first.</summary>
    public void Add(TKey key, TValue value)
    {
        int slot;
        if (_count < _capacity)
        {
            if (_count == _entries.Length)
                Array.Resize(ref _entries, Math.Min(_capacity, Math.Max(FirstSize, _entries.Length * 2)));
            slot = _count++;
        }
        else
        {
            slot = Evict();
        }

        // Not marked used: a key seen once goes before the ones seen again.
        _entries[slot] = new Entry { Key = key, Value = value };
        _slots.Add(key, slot);
    }

    /// <summary>Frees the slot of the first entry unused since the hand last passed it (clearing the marks it passes).</summary>
    private int Evict()
    {
        while (true)
        {
            var slot = _hand;
            _hand = slot + 1 == _capacity ? 0 : slot + 1;
            ref var entry = ref _entries[slot];
            if (entry.Used)
            {
                entry.Used = false;
                continue;
            }

            _slots.Remove(entry.Key);
            return slot;
        }
    }

    private struct Entry
    {
        public TKey Key;
        public TValue Value;
        public bool Used;
    }
}
