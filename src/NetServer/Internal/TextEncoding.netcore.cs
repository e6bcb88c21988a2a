
namespace NetServer.Internal;

internal static partial class TextEncoding
{
    public static int Encode(ReadOnlySpan<char> text, Span<byte> destination) => Utf8.GetBytes(text, destination);

    public static string Decode(ReadOnlySpan<byte> bytes) => Utf8.GetString(bytes);
}
