
namespace NetServer.Internal;

internal static partial class TextEncoding
{
    public static int Encode(ReadOnlySpan<char> text, Span<byte> destination) => Utf8.GetBytes(text, destination);

    public static string Decode(ReadOnlySpan<byte> bytes) => Utf8.GetString(bytes);

    public static int ByteCount(ReadOnlySpan<char> text) => Utf8.GetByteCount(text);
}
