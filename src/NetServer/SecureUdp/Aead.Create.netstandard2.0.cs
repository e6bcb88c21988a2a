namespace NetServer.SecureUdp;

internal abstract partial class Aead
{
    /// <summary>The one message netstandard2.0 gives for every secure UDP entry point.</summary>
    public const string NotSupportedMessage =
        "Secure UDP needs AES-GCM (System.Security.Cryptography.AesGcm), which netstandard2.0 does not have: use the net10.0 or netstandard2.1 build of NetServer (.NET Core 3.0 or later).";

    public static partial void EnsureAvailable() => throw new PlatformNotSupportedException(NotSupportedMessage);

    public static partial Aead Create(SecureUdpAlgorithm algorithm, ReadOnlySpan<byte> key) => throw new PlatformNotSupportedException(NotSupportedMessage);

    public static partial bool IsSupported(SecureUdpAlgorithm algorithm) => false;
}
