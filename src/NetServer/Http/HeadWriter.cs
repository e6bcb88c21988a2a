using System.Buffers.Text;

namespace NetServer.Http;

/// <summary>
/// Writes the ASCII of a response head into a caller's span. Running out of room does not throw:
/// <see cref="Overflowed"/> says so and the caller picks another answer.
/// </summary>
internal ref struct HeadWriter
{
    private readonly Span<byte> _buffer;

    public HeadWriter(Span<byte> buffer)
    {
        _buffer = buffer;
        Length = 0;
        Overflowed = false;
    }

    public int Length { get; private set; }

    public bool Overflowed { get; private set; }

    public readonly ReadOnlySpan<byte> Written => _buffer.Slice(0, Length);

    public void Write(ReadOnlySpan<byte> bytes)
    {
        if (!bytes.TryCopyTo(_buffer.Slice(Length)))
        {
            Overflowed = true;
            return;
        }

        Length += bytes.Length;
    }

    /// <summary>Writes text known to be ASCII (status phrases, media types, header names).</summary>
    public void Write(string ascii)
    {
        if (Length + ascii.Length > _buffer.Length)
        {
            Overflowed = true;
            return;
        }

        foreach (var c in ascii)
            _buffer[Length++] = (byte)c;
    }

    public void Write(long number)
    {
        if (!Utf8Formatter.TryFormat(number, _buffer.Slice(Length), out var written))
        {
            Overflowed = true;
            return;
        }

        Length += written;
    }

    public void WriteDate(long unixSeconds)
    {
        if (!HttpDate.TryFormat(unixSeconds, _buffer.Slice(Length), out var written))
        {
            Overflowed = true;
            return;
        }

        Length += written;
    }
}
