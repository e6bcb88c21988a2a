using System.Collections.Generic;
using System.Collections.ObjectModel;
using System.Net.Security;

namespace NetServer;

public partial class SslContext
{
    // AEAD only: CBC suites (LUCKY13 and its kin), RSA key exchange (no forward secrecy) and
    // anything older stay off. TLS 1.3 has only AEAD suites; of those, CCM_8 is left out (its 8-byte
    // tag is marked not recommended in IANA's registry, and OpenSSL does not enable it either).
    private static readonly ReadOnlyCollection<TlsCipherSuite> s_aeadCipherSuites = Array.AsReadOnly(new[]
    {
        TlsCipherSuite.TLS_AES_128_GCM_SHA256,
        TlsCipherSuite.TLS_AES_256_GCM_SHA384,
        TlsCipherSuite.TLS_CHACHA20_POLY1305_SHA256,
        TlsCipherSuite.TLS_AES_128_CCM_SHA256,
        TlsCipherSuite.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
        TlsCipherSuite.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
        TlsCipherSuite.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
        TlsCipherSuite.TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
        TlsCipherSuite.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
        TlsCipherSuite.TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
    });

    private static readonly CipherSuitesPolicy? s_aeadPolicy = CreateAeadPolicy();

    /// <summary>
    /// The cipher suites NetServer allows when <see cref="CipherSuitesPolicy"/> is null: AEAD suites
    /// only. For TLS 1.3 its AES-GCM, ChaCha20-Poly1305 and AES-128-CCM suites; for TLS 1.2 AES-GCM
    /// and ChaCha20-Poly1305 with ECDHE key exchange (forward secrecy), for ECDSA and RSA
    /// certificates. Start from this list to widen the choice.
    /// </summary>
    public static IReadOnlyList<TlsCipherSuite> DefaultCipherSuites => s_aeadCipherSuites;

    /// <summary>
    /// The cipher suites a handshake may agree on, on both sides (net10.0 build). Null (the default)
    /// means <see cref="DefaultCipherSuites"/>, AEAD suites only, whatever the system's own policy
    /// would also offer (OpenSSL's default list still has CBC suites for TLS 1.2). Set a policy to
    /// widen or narrow the list, for instance <c>new CipherSuitesPolicy([.. SslContext.DefaultCipherSuites,
    /// TlsCipherSuite.TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256])</c> for an old peer; set
    /// <see cref="UseSystemCipherSuites"/> to leave the choice to the system.
    /// </summary>
    /// <remarks>
    /// A policy is applied on Linux and macOS. Windows (SChannel) and Android let no application
    /// choose: there <see cref="CipherSuitesPolicy"/>'s constructor throws
    /// <see cref="PlatformNotSupportedException"/>, NetServer applies no default, and the system's
    /// own configuration decides (on Windows, the cipher suite order of its TLS settings).
    /// </remarks>
    public CipherSuitesPolicy? CipherSuitesPolicy { get; set; }

    /// <summary>
    /// Leave the cipher suites to the system, as a bare <see cref="SslStream"/> does (on Linux,
    /// OpenSSL's configuration, with its CBC suites for TLS 1.2), instead of
    /// <see cref="DefaultCipherSuites"/>. Only consulted while <see cref="CipherSuitesPolicy"/> is null.
    /// </summary>
    public bool UseSystemCipherSuites { get; set; }

    /// <summary>What a handshake is given: the application's policy, ours, or none (the system's choice).</summary>
    internal CipherSuitesPolicy? EffectiveCipherSuitesPolicy => CipherSuitesPolicy ?? (UseSystemCipherSuites ? null : s_aeadPolicy);

    partial void ApplyCipherSuites(SslServerAuthenticationOptions options) => options.CipherSuitesPolicy = EffectiveCipherSuitesPolicy;

    partial void ApplyCipherSuites(SslClientAuthenticationOptions options) => options.CipherSuitesPolicy = EffectiveCipherSuitesPolicy;

    /// <summary>The AEAD policy, or null where the platform lets no application choose its suites.</summary>
    private static CipherSuitesPolicy? CreateAeadPolicy()
    {
        if (OperatingSystem.IsWindows() || OperatingSystem.IsAndroid())
            return null;
        try
        {
            return new CipherSuitesPolicy(s_aeadCipherSuites);
        }
        catch (PlatformNotSupportedException)
        {
            // Another platform whose TLS has no per-application suite list: the system decides there.
            return null;
        }
    }
}
