using System;
using System.Text;
using NetServer.SecureUdp;
using NetServer.Tests.Infrastructure;
using Xunit;

namespace NetServer.Tests.SecureUdp;

/// <summary>
/// The AEADs secure UDP seals with, against published vectors: AES-256-GCM from the GCM
/// specification (McGrew and Viega, test cases 13, 14 and 16) and ChaCha20-Poly1305 from RFC 8439
/// section 2.8.2. Sealed, opened (in place too), and a changed tag refused without an exception.
/// </summary>
public class AeadKnownAnswerTests
{
    public static TheoryData<string, string, string, string, string, string> AesGcm256 => new()
    {
        // Test case 13: zero key, empty plaintext.
        { new string('0', 64), new string('0', 24), "", "", "", "530f8afbc74536b9a963b4f1c4cb738b" },

        // Test case 14: zero key, one zero block.
        { new string('0', 64), new string('0', 24), new string('0', 32), "", "cea7403d4d606b6e074ec5d3baf39d18", "d0d1c8a799996bf0265b98b5d48ab919" },

        // Test case 16: 60-byte plaintext with 20 bytes of associated data.
        {
            "feffe9928665731c6d6a8f9467308308feffe9928665731c6d6a8f9467308308", "cafebabefacedbaddecaf888",
            "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a721c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b39",
            "feedfacedeadbeeffeedfacedeadbeefabaddad2",
            "522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa8cb08e48590dbb3da7b08b1056828838c5f61e6393ba7a0abcc9f662",
            "76fc6ece0f4e1768cddf8853bb2d551b"
        },
    };

    [Theory]
    [MemberData(nameof(AesGcm256))]
    public void Aes_gcm_gives_the_gcm_specification_vectors(string key, string nonce, string plaintext, string aad, string ciphertext, string tag) =>
        AssertVector(SecureUdpAlgorithm.AesGcm, key, nonce, plaintext, aad, ciphertext, tag);

    [Net10Fact("ChaCha20-Poly1305 needs the net10.0 build")]
    public void ChaCha20_Poly1305_gives_the_rfc_8439_vector()
    {
        if (!SecureUdpSession.IsSupported(SecureUdpAlgorithm.ChaCha20Poly1305))
            return; // this platform's OpenSSL lacks it: nothing to check (the session refuses it, see below)
        AssertVector(
            SecureUdpAlgorithm.ChaCha20Poly1305,
            "808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9f",
            "070000004041424344454647",
            Convert.ToHexStringLower(Encoding.ASCII.GetBytes("Ladies and Gentlemen of the class of '99: If I could offer you only one tip for the future, sunscreen would be it.")),
            "50515253c0c1c2c3c4c5c6c7",
            "d31a8d34648e60db7b86afbc53ef7ec2a4aded51296e08fea9e2b5a736ee62d63dbea45e8ca9671282fafb69da92728b1a71de0a9e060b2905d6a5b67ecd3b3692ddbd7f2d778b8c9803aee328091b58fab324e4fad675945585808b4831d7bc3ff4def08e4b7a9de576d26586cec64b6116",
            "1ae10b594f09e26a7e902ecbd0600691");
    }

    [Fact]
    public void An_algorithm_the_build_or_platform_lacks_is_refused_with_platform_not_supported()
    {
        foreach (var algorithm in Enum.GetValues<SecureUdpAlgorithm>())
        {
            if (SecureUdpSession.IsSupported(algorithm))
                continue;
            var e = Assert.Throws<PlatformNotSupportedException>(() => new SecureUdpSession(new byte[32], default, SecureUdpRole.Initiator, 1, 2, algorithm));
            Assert.Contains(algorithm.ToString(), e.Message, StringComparison.Ordinal);
        }

        Assert.True(SecureUdpSession.IsSupported(SecureUdpAlgorithm.AesGcm));
    }

    private static void AssertVector(SecureUdpAlgorithm algorithm, string key, string nonce, string plaintext, string aad, string ciphertext, string tag)
    {
        using var aead = Aead.Create(algorithm, Convert.FromHexString(key));
        var p = Convert.FromHexString(plaintext);
        var a = Convert.FromHexString(aad);
        var n = Convert.FromHexString(nonce);
        var c = new byte[p.Length];
        var t = new byte[16];
        aead.Seal(n, p, c, t, a);
        Assert.Equal(ciphertext, Convert.ToHexStringLower(c));
        Assert.Equal(tag, Convert.ToHexStringLower(t));

        var opened = new byte[c.Length];
        Assert.True(aead.TryOpen(n, c, t, opened, a));
        Assert.Equal(plaintext, Convert.ToHexStringLower(opened));

        // In place, as the secure UDP receive path opens.
        var buffer = (byte[])c.Clone();
        Assert.True(aead.TryOpen(n, buffer, t, buffer, a));
        Assert.Equal(plaintext, Convert.ToHexStringLower(buffer));

        // A changed tag, nonce or associated datum fails and clears the output; no exception leaves.
        t[^1] ^= 1;
        Assert.False(aead.TryOpen(n, c, t, opened, a));
        Assert.All(opened, b => Assert.Equal(0, b));
        t[^1] ^= 1;
        n[0] ^= 0x80;
        Assert.False(aead.TryOpen(n, c, t, opened, a));
        n[0] ^= 0x80;
        Assert.False(aead.TryOpen(n, c, t, opened, [.. a, 0]));
    }
}
