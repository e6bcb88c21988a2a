using System.Buffers.Binary;
using System.Security.Cryptography;

namespace NetServer.WebSockets;

// net10.0 and netstandard2.1: the static span overload of the system's cryptographic generator.
internal static partial class WsMask
{
    /// <summary>
    /// A new mask key from a cryptographic source, one per frame: RFC 6455 10.3 asks that the
    /// peer's application cannot predict it. Allocates nothing.
    /// </summary>
    public static uint NewKey()
    {
        Span<byte> key = stackalloc byte[sizeof(uint)];
        RandomNumberGenerator.Fill(key);
        return BinaryPrimitives.ReadUInt32LittleEndian(key);
    }
}
