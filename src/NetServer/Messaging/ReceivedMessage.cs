using System.Buffers;

namespace NetServer;

/// <summary>
/// A message taken from a receive queue (<see cref="MessageClient"/>, <see cref="WsClient"/>, ...): its bytes live in pooled
/// memory until <see cref="Dispose"/> (a <c>using</c>), which gives them back; reading it after
/// that throws. Dispose is idempotent.
/// </summary>
public sealed class ReceivedMessage : IDisposable
{
    private byte[]? _array;

    internal ReceivedMessage(ReadOnlySpan<byte> message, bool isText = false)
    {
        Length = message.Length;
        IsText = isText;
        _array = ArrayPool<byte>.Shared.Rent(Math.Max(message.Length, 1));
        message.CopyTo(_array);
    }

    /// <summary>True for a WebSocket text message (valid UTF-8: <see cref="Text"/> reads it); false for a binary one and for byte messages.</summary>
    public bool IsText { get; }

    /// <summary>The bytes decoded as UTF-8 (valid until <see cref="Dispose"/>).</summary>
    public string Text => TextEncoding.Decode(Span);

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
