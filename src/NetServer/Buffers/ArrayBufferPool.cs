using System.Buffers;

namespace NetServer.Buffers;

/// <summary>The default <see cref="BufferPool"/>: a thin shim over <see cref="ArrayPool{T}.Shared"/>.</summary>
internal sealed class ArrayBufferPool : BufferPool
{
    public override byte[] Rent(int minimumLength) => ArrayPool<byte>.Shared.Rent(minimumLength);

    public override void Return(byte[] array) => ArrayPool<byte>.Shared.Return(array);
}
