namespace NetServer.Buffers;

/// <summary>
/// Where every buffer NetServer uses comes from. Each rented array has exactly one owner, and that
/// owner returns it exactly once. The default is <see cref="Shared"/> (over
/// <c>ArrayPool&lt;byte&gt;.Shared</c>); tests swap in a pool that fails when a rent is never returned.
/// </summary>
internal abstract class BufferPool
{
    /// <summary>The process-wide pool over <c>ArrayPool&lt;byte&gt;.Shared</c>.</summary>
    public static BufferPool Shared { get; } = new ArrayBufferPool();

    /// <summary>Rents an array of at least <paramref name="minimumLength"/> bytes.</summary>
    public abstract byte[] Rent(int minimumLength);

    /// <summary>Gives back an array obtained from <see cref="Rent"/>; the caller must not touch it afterwards.</summary>
    public abstract void Return(byte[] array);
}
