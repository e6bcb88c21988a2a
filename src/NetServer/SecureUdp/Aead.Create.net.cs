using System.Security.Cryptography;

namespace NetServer.SecureUdp;

internal abstract partial class Aead
{
    public static partial void EnsureAvailable()
    {
    }

    public static partial Aead Create(SecureUdpAlgorithm algorithm, ReadOnlySpan<byte> key) => algorithm switch
    {
        SecureUdpAlgorithm.AesGcm when AesGcm.IsSupported => new AesGcmAead(new AesGcm(key, SecureUdpConstants.TagLength)),
        SecureUdpAlgorithm.ChaCha20Poly1305 when ChaCha20Poly1305.IsSupported => new ChaChaAead(new ChaCha20Poly1305(key)),
        SecureUdpAlgorithm.AesGcm or SecureUdpAlgorithm.ChaCha20Poly1305 =>
            throw new PlatformNotSupportedException($"Secure UDP: {algorithm} is not supported on this platform (the operating system's cryptography library lacks it).{(algorithm == SecureUdpAlgorithm.ChaCha20Poly1305 ? " Use SecureUdpAlgorithm.AesGcm." : "")}"),
        _ => throw new ArgumentOutOfRangeException(nameof(algorithm), algorithm, "Not a SecureUdpAlgorithm."),
    };

    public static partial bool IsSupported(SecureUdpAlgorithm algorithm) => algorithm switch
    {
        SecureUdpAlgorithm.AesGcm => AesGcm.IsSupported,
        SecureUdpAlgorithm.ChaCha20Poly1305 => ChaCha20Poly1305.IsSupported,
        _ => false,
    };
}
