using System.Buffers;
using System.Buffers.Binary;

namespace NetServer.Messaging;

/// <summary>What <see cref="MessageReader.Read"/> found.</summary>
internal enum MessageReadStatus
{
    /// <summary>A whole message: it is in the <c>message</c> out parameter.</summary>
    Message,

    /// <summary>No whole message yet: keep the unconsumed bytes and call again with more.</summary>
    NeedMoreData,

    /// <summary>The length prefix is negative or over the maximum: <see cref="MessageReader.Error"/> says which.</summary>
    InvalidLength,
}

/// <summary>
/// The length-prefixed framing, pure: bytes in, messages and bytes consumed out (no socket, no
/// clock). A frame is a 4-byte little-endian signed length, then that many payload bytes.
/// </summary>
/// <remarks>
/// A frame that fits within the retention limit (what the connection keeps for the protocol) is
/// left in the caller's buffer until it is whole and handed out from there: no copy. A longer one
/// is consumed as it arrives into pooled memory that grows with the bytes received (so a length
/// prefix alone never reserves the whole announced size), and handed out from there once whole.
/// The reader holds that memory until <see cref="ReleaseMessage"/> or <see cref="Reset"/>.
/// </remarks>
internal struct MessageReader
{
    /// <summary>Bytes of the length prefix.</summary>
    public const int HeaderSize = 4;

    /// <summary>The first pooled block of a reassembled message (it doubles as bytes arrive).</summary>
    internal const int FirstAssemblyBlock = 64 * 1024;

    private byte[]? _assembly; // a message longer than the retention limit, being reassembled
    private int _assemblyLength;
    private int _assemblyFilled;
    private bool _assembled;    // the message handed out lives in _assembly (released by ReleaseMessage)

    /// <summary>Why the last <see cref="MessageReadStatus.InvalidLength"/> was returned.</summary>
    public string? Error { get; private set; }

    /// <summary>True while a long message is being reassembled in pooled memory.</summary>
    public readonly bool IsAssembling => _assembly is not null && !_assembled;

    /// <summary>Pooled bytes held for reassembly (0 when none).</summary>
    public readonly int AssemblyCapacity => _assembly?.Length ?? 0;

    /// <summary>
    /// Reads the next message from <paramref name="data"/> (the bytes not consumed before, then any
    /// new ones). <paramref name="consumed"/> bytes of it are used up whatever the status.
    /// </summary>
    /// <param name="data">Unconsumed input.</param>
    /// <param name="maxMessageSize">The largest payload accepted.</param>
    /// <param name="retentionLimit">How many unconsumed bytes the caller can keep; a longer frame is reassembled.</param>
    /// <param name="message">The payload, when the status is <see cref="MessageReadStatus.Message"/>: valid until the next call, <see cref="ReleaseMessage"/> or <see cref="Reset"/>.</param>
    /// <param name="consumed">Bytes of <paramref name="data"/> used up.</param>
    public MessageReadStatus Read(ReadOnlySpan<byte> data, int maxMessageSize, int retentionLimit, out ReadOnlySpan<byte> message, out int consumed)
    {
        message = default;
        ReleaseMessage();
        if (_assembly is not null)
            return Continue(data, out message, out consumed);

        consumed = 0;
        if (data.Length < HeaderSize)
            return MessageReadStatus.NeedMoreData;
        var length = BinaryPrimitives.ReadInt32LittleEndian(data);
        if (length < 0 || length > maxMessageSize)
        {
            Error = length < 0
                ? $"The message length prefix is negative ({length}): not a length-prefixed message stream."
                : $"The message length {length} is over the maximum message size ({maxMessageSize} bytes).";
            return MessageReadStatus.InvalidLength;
        }

        if (data.Length - HeaderSize >= length)
        {
            message = data.Slice(HeaderSize, length);
            consumed = HeaderSize + length;
            return MessageReadStatus.Message;
        }

        if ((long)HeaderSize + length <= retentionLimit)
            return MessageReadStatus.NeedMoreData; // wait for the rest in the caller's buffer

        // Too long to keep unconsumed: reassemble in pooled memory, sized by what has arrived.
        _assemblyLength = length;
        _assemblyFilled = 0;
        _assembly = ArrayPool<byte>.Shared.Rent(Math.Min(length, Math.Max(FirstAssemblyBlock, data.Length - HeaderSize)));
        consumed = HeaderSize;
        var status = Continue(data.Slice(HeaderSize), out message, out var more);
        consumed += more;
        return status;
    }

    /// <summary>Gives back the pooled memory of a reassembled message once the caller is done with it.</summary>
    public void ReleaseMessage()
    {
        if (!_assembled)
            return;
        _assembled = false;
        var assembly = _assembly!;
        _assembly = null;
        ArrayPool<byte>.Shared.Return(assembly);
    }

    /// <summary>
    /// Drops a message being reassembled and gives back its memory (the connection ended, or the
    /// protocol was replaced). A whole message still handed out keeps its memory until
    /// <see cref="ReleaseMessage"/>: its handler may still be reading it.
    /// </summary>
    public void Reset()
    {
        if (_assembled)
            return;
        var assembly = _assembly;
        _assembly = null;
        _assemblyFilled = 0;
        _assemblyLength = 0;
        if (assembly is not null)
            ArrayPool<byte>.Shared.Return(assembly);
    }

    private MessageReadStatus Continue(ReadOnlySpan<byte> data, out ReadOnlySpan<byte> message, out int consumed)
    {
        message = default;
        var take = Math.Min(data.Length, _assemblyLength - _assemblyFilled);
        var needed = _assemblyFilled + take;
        if (needed > _assembly!.Length)
            Grow(needed);
        data.Slice(0, take).CopyTo(_assembly.AsSpan(_assemblyFilled));
        _assemblyFilled = needed;
        consumed = take;
        if (_assemblyFilled < _assemblyLength)
            return MessageReadStatus.NeedMoreData;
        message = new ReadOnlySpan<byte>(_assembly, 0, _assemblyLength);
        _assembled = true;
        return MessageReadStatus.Message;
    }

    private void Grow(int needed)
    {
        var size = (int)Math.Min(_assemblyLength, Math.Max(needed, (long)_assembly!.Length * 2));
        var larger = ArrayPool<byte>.Shared.Rent(size);
        _assembly.AsSpan(0, _assemblyFilled).CopyTo(larger);
        ArrayPool<byte>.Shared.Return(_assembly);
        _assembly = larger;
    }
}
