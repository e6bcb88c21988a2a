namespace NetServer.SecureUdp;

/// <summary>
/// One AEAD key (AES-256-GCM or ChaCha20-Poly1305 with a 16-byte tag), made once per epoch key and
/// used for every datagram of it: the platform's primitive, nothing of our own. The platform objects
/// are not safe for concurrent use: callers serialize their calls (a lock per send key, the receive lock).
/// </summary>
internal abstract partial class Aead : IDisposable
{
    /// <summary>A key of <paramref name="algorithm"/>; throws <see cref="PlatformNotSupportedException"/> where this build or platform lacks it.</summary>
    public static partial Aead Create(SecureUdpAlgorithm algorithm, ReadOnlySpan<byte> key);

    /// <summary>Throws <see cref="PlatformNotSupportedException"/> with a clear message where this build has no secure UDP at all (netstandard2.0).</summary>
    public static partial void EnsureAvailable();

    /// <summary>Whether this build and platform can make keys of <paramref name="algorithm"/>.</summary>
    public static partial bool IsSupported(SecureUdpAlgorithm algorithm);

    /// <summary>Encrypts <paramref name="plaintext"/> into <paramref name="ciphertext"/> (the same length; the same memory is allowed) and writes the tag.</summary>
    public abstract void Seal(ReadOnlySpan<byte> nonce, ReadOnlySpan<byte> plaintext, Span<byte> ciphertext, Span<byte> tag, ReadOnlySpan<byte> associatedData);

    /// <summary>
    /// Checks the tag and decrypts <paramref name="ciphertext"/> into <paramref name="plaintext"/> (the
    /// same memory is allowed). False when the tag does not verify; <paramref name="plaintext"/> is then cleared.
    /// </summary>
    public abstract bool TryOpen(ReadOnlySpan<byte> nonce, ReadOnlySpan<byte> ciphertext, ReadOnlySpan<byte> tag, Span<byte> plaintext, ReadOnlySpan<byte> associatedData);

    public abstract void Dispose();
}
