using System.Security.Cryptography;

namespace NetServer.SecureUdp;

/// <summary>AES-256-GCM through the platform's <see cref="AesGcm"/>.</summary>
internal sealed class AesGcmAead(AesGcm aes) : Aead
{
    public override void Seal(ReadOnlySpan<byte> nonce, ReadOnlySpan<byte> plaintext, Span<byte> ciphertext, Span<byte> tag, ReadOnlySpan<byte> associatedData) =>
        aes.Encrypt(nonce, plaintext, ciphertext, tag, associatedData);

    public override bool TryOpen(ReadOnlySpan<byte> nonce, ReadOnlySpan<byte> ciphertext, ReadOnlySpan<byte> tag, Span<byte> plaintext, ReadOnlySpan<byte> associatedData)
    {
        try
        {
            aes.Decrypt(nonce, ciphertext, tag, plaintext, associatedData);
            return true;
        }
        catch (CryptographicException)
        {
            // The platform reports a bad tag only by throwing (AuthenticationTagMismatchException);
            // it never leaves Open. Only a datagram with a live index, epoch and fresh counter gets here.
            return false;
        }
    }

    public override void Dispose() => aes.Dispose();
}
