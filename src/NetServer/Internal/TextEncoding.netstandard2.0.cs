
namespace NetServer.Internal;

// netstandard2.0's Encoding has no span overloads; the pointer overloads do the same without a copy.
internal static partial class TextEncoding
{
    public static unsafe int Encode(ReadOnlySpan<char> text, Span<byte> destination)
    {
        if (text.IsEmpty)
            return 0;
        fixed (char* chars = text)
        fixed (byte* bytes = destination)
            return Utf8.GetBytes(chars, text.Length, bytes, destination.Length);
    }

    public static unsafe string Decode(ReadOnlySpan<byte> bytes)
    {
        if (bytes.IsEmpty)
            return string.Empty;
        fixed (byte* p = bytes)
            return Utf8.GetString(p, bytes.Length);
    }

    public static unsafe int ByteCount(ReadOnlySpan<char> text)
    {
        if (text.IsEmpty)
            return 0;
        fixed (char* chars = text)
            return Utf8.GetByteCount(chars, text.Length);
    }
}
