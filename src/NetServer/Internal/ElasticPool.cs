
namespace NetServer.Internal;

/// <summary>
/// A pool that keeps as many items as were in use at once lately, up to a bound, and lets go of
/// them slowly when they are not needed: after a peak of N items in use, N are kept, so traffic
/// at that level rents and returns without creating any; every trim interval, half of the items
/// that stayed free through the whole interval are discarded, down to none.
/// </summary>
/// <remarks>
/// Bounded: at most <c>maxKept</c> free items are kept (a return past it discards the item), and
/// the trim timer runs only while the pool holds items. The lock is held for a few instructions,
/// never around a call into an item.
/// </remarks>
internal sealed class ElasticPool<T>
    where T : class
{
    private const int FirstSize = 16;

    private static readonly TimerCallback s_trim = static state => ((ElasticPool<T>)state!).Trim();

    private readonly object _lock = new();
    private readonly Func<T> _create;
    private readonly Action<T> _discard;
    private readonly int _maxKept;
    private readonly TimeSpan _trimInterval;
    private T?[] _items = Array.Empty<T?>();
    private int _count;
    private int _idleLow; // fewest free items since the last trim: that many were not needed in between
    private long _created;
    private Timer? _timer;
    private bool _timerArmed;

    /// <param name="create">Makes a new item when none is free.</param>
    /// <param name="discard">Frees an item the pool lets go of.</param>
    /// <param name="maxKept">The most free items kept.</param>
    /// <param name="trimInterval">How often idle items are let go of; <see cref="Timeout.InfiniteTimeSpan"/> for only when <see cref="Trim"/> is called.</param>
    public ElasticPool(Func<T> create, Action<T> discard, int maxKept, TimeSpan trimInterval)
    {
        _create = create;
        _discard = discard;
        _maxKept = maxKept;
        _trimInterval = trimInterval;
    }

    /// <summary>Free items kept now.</summary>
    public int Count
    {
        get
        {
            lock (_lock)
                return _count;
        }
    }

    /// <summary>Items created so far.</summary>
    public long Created => Interlocked.Read(ref _created);

    public T Rent()
    {
        lock (_lock)
        {
            if (_count > 0)
            {
                var item = _items[--_count]!;
                _items[_count] = null;
                if (_count < _idleLow)
                    _idleLow = _count;
                return item;
            }
        }

        Interlocked.Increment(ref _created);
        return _create();
    }

    public void Return(T item)
    {
        lock (_lock)
        {
            if (_count < _maxKept)
            {
                if (_count == _items.Length)
                    Array.Resize(ref _items, Math.Min(_maxKept, Math.Max(FirstSize, _items.Length * 2)));
                _items[_count++] = item;
                if (!_timerArmed)
                    ArmTimer();
                return;
            }
        }

        _discard(item);
    }

    /// <summary>Lets go of half (rounded up) of the items that stayed free since the last trim.</summary>
    public void Trim()
    {
        T?[] doomed;
        lock (_lock)
        {
            var surplus = (_idleLow + 1) / 2;
            doomed = surplus == 0 ? Array.Empty<T?>() : new T?[surplus];
            for (var i = 0; i < surplus; i++)
            {
                doomed[i] = _items[--_count];
                _items[_count] = null;
            }

            _idleLow = _count;
            if (_count == 0)
            {
                _items = Array.Empty<T?>();
                DisarmTimer();
            }
            else if (_items.Length > FirstSize && _count <= _items.Length / 4)
            {
                Array.Resize(ref _items, _items.Length / 2);
            }
        }

        foreach (var item in doomed)
            _discard(item!);
    }

    private void ArmTimer()
    {
        if (_trimInterval == Timeout.InfiniteTimeSpan)
            return;
        _timer ??= CreateTimer();

        _timer.Change(_trimInterval, _trimInterval);
        _timerArmed = true;
    }

    private Timer CreateTimer()
    {
        // No caller's context rides on the pool's timer (SuppressFlow throws if it is already suppressed).
        if (ExecutionContext.IsFlowSuppressed())
            return new Timer(s_trim, this, Timeout.Infinite, Timeout.Infinite);
        using (ExecutionContext.SuppressFlow())
            return new Timer(s_trim, this, Timeout.Infinite, Timeout.Infinite);
    }

    private void DisarmTimer()
    {
        if (!_timerArmed)
            return;
        _timer!.Change(Timeout.Infinite, Timeout.Infinite);
        _timerArmed = false;
    }
}
