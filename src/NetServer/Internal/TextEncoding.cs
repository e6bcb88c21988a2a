using System.Text;

namespace NetServer.Internal;

/// <summary>UTF-8 conversions for the compatible text overloads (strings go on the wire as UTF-8).</summary>
internal static partial class TextEncoding
{
    public static readonly UTF8Encoding Utf8 = new(encoderShouldEmitUTF8Identifier: false);

    /// <summary>Upper bound of the encoded size; exact sizes cost a second pass over the text.</summary>
    public static int MaxByteCount(int chars) => Utf8.GetMaxByteCount(chars);
}
