
namespace NetServer.Streams;

/// <summary>
/// Bytes waiting in a send queue. A segment owns what it points into: either a pooled chunk
/// (<see cref="Shared"/> is null, the chunk goes back to the pool when sent) or one reference to a
/// <see cref="SharedBuffer"/> (released when sent).
/// </summary>
internal struct SendSegment
{
    public byte[] Array;
    public int Offset;
    public int Count;
    public SharedBuffer? Shared;

    public readonly ArraySegment<byte> AsArraySegment() => new(Array, Offset, Count);

    /// <summary>Gives back what the segment owns.</summary>
    public readonly void Release(BufferPool pool)
    {
        if (Shared is not null)
            Shared.Release();
        else
            pool.Return(Array);
    }
}
