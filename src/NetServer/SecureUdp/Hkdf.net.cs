using System.Security.Cryptography;

namespace NetServer.SecureUdp;

/// <summary>HKDF-SHA256 (RFC 5869): the platform's <see cref="HKDF"/>.</summary>
internal static class Hkdf
{
    /// <summary>The length of a pseudorandom key (SHA-256's output).</summary>
    public const int HashLength = 32;

    /// <summary>HKDF-Extract: <paramref name="prk"/> (32 bytes) = HMAC-SHA256(<paramref name="salt"/>, <paramref name="ikm"/>).</summary>
    public static void Extract(ReadOnlySpan<byte> salt, ReadOnlySpan<byte> ikm, Span<byte> prk) =>
        HKDF.Extract(HashAlgorithmName.SHA256, ikm, salt, prk);

    /// <summary>HKDF-Expand: fills <paramref name="output"/> (at most 255 x 32 bytes) from <paramref name="prk"/> and <paramref name="info"/>.</summary>
    public static void Expand(ReadOnlySpan<byte> prk, ReadOnlySpan<byte> info, Span<byte> output) =>
        HKDF.Expand(HashAlgorithmName.SHA256, prk, output, info);
}
