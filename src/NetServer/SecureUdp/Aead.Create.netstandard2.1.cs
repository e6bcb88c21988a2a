using System.Security.Cryptography;

namespace NetServer.SecureUdp;

internal abstract partial class Aead
{
    public static partial void EnsureAvailable()
    {
    }

    public static partial Aead Create(SecureUdpAlgorithm algorithm, ReadOnlySpan<byte> key) => algorithm switch
    {
        // netstandard2.1's AesGcm always uses a 16-byte tag on encryption and accepts only 16 here (TagLength).
        SecureUdpAlgorithm.AesGcm => new AesGcmAead(new AesGcm(key)),
        SecureUdpAlgorithm.ChaCha20Poly1305 => throw new PlatformNotSupportedException(
            "Secure UDP: SecureUdpAlgorithm.ChaCha20Poly1305 needs the net10.0 build of NetServer (netstandard2.1 has no ChaCha20-Poly1305). Use SecureUdpAlgorithm.AesGcm."),
        _ => throw new ArgumentOutOfRangeException(nameof(algorithm), algorithm, "Not a SecureUdpAlgorithm."),
    };

    public static partial bool IsSupported(SecureUdpAlgorithm algorithm) => algorithm == SecureUdpAlgorithm.AesGcm;
}
