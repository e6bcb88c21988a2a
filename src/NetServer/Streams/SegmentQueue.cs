using System.Diagnostics;

namespace NetServer.Streams;

/// <summary>A FIFO of <see cref="SendSegment"/> on a ring array that is reused, not reallocated per send.</summary>
internal sealed class SegmentQueue
{
    private SendSegment[] _items = new SendSegment[4];
    private int _head;
    private int _count;

    public int Count => _count;

    public bool IsEmpty => _count == 0;

    /// <summary>The <paramref name="index"/>-th segment from the front.</summary>
    public ref SendSegment this[int index]
    {
        get
        {
            Debug.Assert((uint)index < (uint)_count);
            return ref _items[(_head + index) & (_items.Length - 1)];
        }
    }

    public ref SendSegment First => ref this[0];

    public ref SendSegment Last => ref this[_count - 1];

    public void Add(in SendSegment segment)
    {
        if (_count == _items.Length)
            Grow();
        _items[(_head + _count) & (_items.Length - 1)] = segment;
        _count++;
    }

    public void RemoveFirst()
    {
        Debug.Assert(_count > 0);
        _items[_head] = default;
        _head = (_head + 1) & (_items.Length - 1);
        _count--;
        if (_count == 0)
            _head = 0;
    }

    private void Grow()
    {
        // Capacity stays a power of two so the ring index is a mask.
        var items = new SendSegment[_items.Length * 2];
        for (var i = 0; i < _count; i++)
            items[i] = _items[(_head + i) & (_items.Length - 1)];
        _items = items;
        _head = 0;
    }
}
