using System.Buffers.Binary;
using System.Security.Cryptography;

namespace NetServer.WebSockets;

// netstandard2.0: RandomNumberGenerator only fills arrays, so each thread keeps a generator and a
// small array of random bytes, refilled when used up: no allocation per key.
internal static partial class WsMask
{
    private const int KeyBufferSize = 256;

    [ThreadStatic]
    private static RandomNumberGenerator? t_random;

    [ThreadStatic]
    private static byte[]? t_keys;

    [ThreadStatic]
    private static int t_keysUsed;

    /// <summary>
    /// A new mask key from a cryptographic source, one per frame: RFC 6455 10.3 asks that the
    /// peer's application cannot predict it. Allocates nothing once the thread's buffer exists.
    /// </summary>
    public static uint NewKey()
    {
        var keys = t_keys;
        var used = t_keysUsed;
        if (keys is null || used > keys.Length - sizeof(uint))
        {
            keys = t_keys ??= new byte[KeyBufferSize];
            (t_random ??= RandomNumberGenerator.Create()).GetBytes(keys);
            used = 0;
        }

        t_keysUsed = used + sizeof(uint);
        return BinaryPrimitives.ReadUInt32LittleEndian(keys.AsSpan(used));
    }
}
