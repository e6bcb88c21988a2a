using System.Runtime.InteropServices;

namespace NetServer.WebSockets;

// netstandard: no vectorized UTF-8 or ASCII helpers; ASCII is skipped 8 bytes at a time.
internal partial struct WsUtf8Validator
{
    private const ulong HighBits = 0x8080808080808080;

    /// <summary>True when <paramref name="data"/> is a whole valid UTF-8 text.</summary>
    public static bool IsValid(ReadOnlySpan<byte> data)
    {
        var validator = default(WsUtf8Validator);
        return validator.Append(data) && validator.IsComplete;
    }

    private static int IndexOfNonAscii(ReadOnlySpan<byte> data)
    {
        var i = 0;
        for (; i <= data.Length - sizeof(ulong); i += sizeof(ulong))
        {
            if ((MemoryMarshal.Read<ulong>(data.Slice(i)) & HighBits) != 0)
                break;
        }

        for (; i < data.Length; i++)
        {
            if (data[i] >= 0x80)
                return i;
        }

        return -1;
    }

    // The leading ASCII run; the state machine takes it from there.
    private static int ValidPrefixLength(ReadOnlySpan<byte> data)
    {
        var ascii = IndexOfNonAscii(data);
        return ascii < 0 ? data.Length : ascii;
    }
}
