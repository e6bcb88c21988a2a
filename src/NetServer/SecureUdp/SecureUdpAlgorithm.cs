namespace NetServer;

/// <summary>
/// The AEAD of a secure session, fixed when the session is set up (over TLS, or by the
/// application): nothing on the wire names it, and it is bound into the key derivation, so two
/// sides that disagree get nothing but authentication failures.
/// </summary>
public enum SecureUdpAlgorithm
{
    /// <summary>AES-256-GCM with a 16-byte tag (the default; <c>AesGcm</c>).</summary>
    AesGcm,

    /// <summary>ChaCha20-Poly1305 (<c>ChaCha20Poly1305</c>); the net10.0 build only, where <c>ChaCha20Poly1305.IsSupported</c>.</summary>
    ChaCha20Poly1305,
}
