using System.Security.Cryptography;

namespace NetServer.WebSockets;

// net10.0 and netstandard2.1: the system's cryptographic generator through its static span overload.
internal static partial class WsMask
{
    private static void FillRandom(byte[] buffer) => RandomNumberGenerator.Fill(buffer);
}
