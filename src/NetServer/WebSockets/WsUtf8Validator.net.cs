using System.Text.Unicode;

namespace NetServer.WebSockets;

// net10.0: the runtime's vectorized validators, ASCII and multi-byte alike.
internal partial struct WsUtf8Validator
{
    /// <summary>True when <paramref name="data"/> is a whole valid UTF-8 text.</summary>
    public static bool IsValid(ReadOnlySpan<byte> data) => Utf8.IsValid(data);

    private static int IndexOfNonAscii(ReadOnlySpan<byte> data) => data.IndexOfAnyExceptInRange((byte)0, (byte)0x7F);

    // Everything but a trailing partial code point, when the runtime's validator accepts it; else
    // nothing, and the state machine finds the bad byte (one pass more, only on input that fails).
    private static int ValidPrefixLength(ReadOnlySpan<byte> data)
    {
        var whole = data.Length - TrailingPartialLength(data);
        return Utf8.IsValid(data.Slice(0, whole)) ? whole : 0;
    }
}
