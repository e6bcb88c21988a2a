using System.Buffers;

namespace NetServer;

/// <summary>
/// A message taken from a <see cref="MessageClient"/>'s receive queue: its bytes live in pooled
/// memory until <see cref="Dispose"/> (a <c>using</c>), which gives them back; reading it after
/// that throws. Dispose is idempotent.
/// </summary>
public sealed class ReceivedMessage : IDisposable
{
    private byte[]? _array;

    internal ReceivedMessage(ReadOnlySpan<byte> message)
    {
        Length = message.Length;
        _array = ArrayPool<byte>.Shared.Rent(Math.Max(message.Length, 1));
        message.CopyTo(_array);
    }

    /// <summary>The message's length in bytes.</summary>
    public int Length { get; }

    /// <summary>The message's bytes (valid until <see cref="Dispose"/>).</summary>
    public ReadOnlySpan<byte> Span => new(Array, 0, Length);

    /// <summary>The message's bytes (valid until <see cref="Dispose"/>).</summary>
    public ReadOnlyMemory<byte> Memory => new(Array, 0, Length);

    private byte[] Array => Volatile.Read(ref _array) ?? throw new ObjectDisposedException(nameof(ReceivedMessage));

    /// <summary>A copy of the bytes that outlives the message.</summary>
    public byte[] ToArray() => Span.ToArray();

    /// <summary>Gives the pooled bytes back.</summary>
    public void Dispose()
    {
        var array = Interlocked.Exchange(ref _array, null);
        if (array is not null)
            ArrayPool<byte>.Shared.Return(array);
    }
}
