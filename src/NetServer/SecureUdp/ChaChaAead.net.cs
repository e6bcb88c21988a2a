using System.Security.Cryptography;

namespace NetServer.SecureUdp;

/// <summary>ChaCha20-Poly1305 through the platform's <see cref="ChaCha20Poly1305"/> (net10.0 build).</summary>
internal sealed class ChaChaAead(ChaCha20Poly1305 chaCha) : Aead
{
    public override void Seal(ReadOnlySpan<byte> nonce, ReadOnlySpan<byte> plaintext, Span<byte> ciphertext, Span<byte> tag, ReadOnlySpan<byte> associatedData) =>
        chaCha.Encrypt(nonce, plaintext, ciphertext, tag, associatedData);

    public override bool TryOpen(ReadOnlySpan<byte> nonce, ReadOnlySpan<byte> ciphertext, ReadOnlySpan<byte> tag, Span<byte> plaintext, ReadOnlySpan<byte> associatedData)
    {
        try
        {
            chaCha.Decrypt(nonce, ciphertext, tag, plaintext, associatedData);
            return true;
        }
        catch (CryptographicException)
        {
            // As for AES-GCM: a bad tag is reported by throwing, and never leaves Open.
            return false;
        }
    }

    public override void Dispose() => chaCha.Dispose();
}
