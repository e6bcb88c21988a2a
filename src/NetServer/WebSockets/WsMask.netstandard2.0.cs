using System.Security.Cryptography;

namespace NetServer.WebSockets;

// netstandard2.0: no static Fill; each thread keeps a generator instance of its own.
internal static partial class WsMask
{
    [ThreadStatic]
    private static RandomNumberGenerator? t_random;

    private static void FillRandom(byte[] buffer) => (t_random ??= RandomNumberGenerator.Create()).GetBytes(buffer);
}
