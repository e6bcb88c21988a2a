using System;
using System.Linq;
using NetServer.SecureUdp;
using Xunit;

namespace NetServer.Tests.SecureUdp;

/// <summary>
/// HKDF-SHA256 against RFC 5869's test vectors (appendix A, cases 1 to 3). The net10.0 build runs
/// the platform's HKDF; NetServer.Tests.NetStandard21 runs these same tests against the
/// netstandard build's own HMAC-SHA256 implementation.
/// </summary>
public class HkdfTests
{
    public static TheoryData<string, string, string, string, string> Rfc5869 => new()
    {
        // A.1: basic test case.
        {
            "0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b", "000102030405060708090a0b0c", "f0f1f2f3f4f5f6f7f8f9",
            "077709362c2e32df0ddc3f0dc47bba6390b6c73bb50f9c3122ec844ad7c2b3e5",
            "3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865"
        },

        // A.2: longer inputs and outputs (three blocks).
        {
            Range(0x00, 80), Range(0x60, 80), Range(0xb0, 80),
            "06a6b88c5853361a06104c9ceb35b45cef760014904671014a193f40c15fc244",
            "b11e398dc80327a1c8e7f78c596a49344f012eda2d4efad8a050cc4c19afa97c59045a99cac7827271cb41c65e590e09da3275600c2f09b8367793a9aca3db71cc30c58179ec3e87c14c01d5c1f3434f1d87"
        },

        // A.3: zero-length salt and info.
        {
            "0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b", "", "",
            "19ef24a32c717b167f33a91d6f648bdf96596776afdb6377ac434c1c293ccb04",
            "8da4e775a563c18f715f802a063c5a31b8a11f5c5ee1879ec3454e5f3c738d2d9d201395faa4b61a96c8"
        },
    };

    [Theory]
    [MemberData(nameof(Rfc5869))]
    public void Extract_and_expand_give_the_rfc_5869_vectors(string ikm, string salt, string info, string prk, string okm)
    {
        var actualPrk = new byte[Hkdf.HashLength];
        Hkdf.Extract(Convert.FromHexString(salt), Convert.FromHexString(ikm), actualPrk);
        Assert.Equal(prk, Convert.ToHexStringLower(actualPrk));

        var actualOkm = new byte[okm.Length / 2];
        Hkdf.Expand(actualPrk, Convert.FromHexString(info), actualOkm);
        Assert.Equal(okm, Convert.ToHexStringLower(actualOkm));
    }

    [Theory]
    [MemberData(nameof(Rfc5869))]
    public void A_shorter_output_is_a_prefix_of_the_longer_one(string ikm, string salt, string info, string prk, string okm)
    {
        _ = ikm;
        _ = salt;
        foreach (var length in new[] { 1, 31, 32, 33, 64 })
        {
            var output = new byte[length];
            Hkdf.Expand(Convert.FromHexString(prk), Convert.FromHexString(info), output);
            Assert.Equal(okm[..(Math.Min(length, okm.Length / 2) * 2)], Convert.ToHexStringLower(output)[..(Math.Min(length, okm.Length / 2) * 2)]);
        }
    }

    private static string Range(int first, int count) => Convert.ToHexStringLower(Enumerable.Range(first, count).Select(i => (byte)i).ToArray());
}
