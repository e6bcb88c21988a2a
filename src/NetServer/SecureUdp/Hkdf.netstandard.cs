using System.Security.Cryptography;

namespace NetServer.SecureUdp;

/// <summary>
/// HKDF-SHA256 (RFC 5869) on <see cref="HMACSHA256"/>, for the netstandard builds (the
/// <c>HKDF</c> class came with .NET 5). Checked against the RFC's test vectors, as the net10.0
/// build's platform HKDF is (byte-array calls, which netstandard2.0 has too). It runs when a session is set up and at each rekey, never per datagram.
/// </summary>
internal static class Hkdf
{
    /// <summary>The length of a pseudorandom key (SHA-256's output).</summary>
    public const int HashLength = 32;

    /// <summary>HKDF-Extract: <paramref name="prk"/> (32 bytes) = HMAC-SHA256(<paramref name="salt"/>, <paramref name="ikm"/>).</summary>
    public static void Extract(ReadOnlySpan<byte> salt, ReadOnlySpan<byte> ikm, Span<byte> prk)
    {
        // RFC 5869 section 2.2: no salt means HashLen zero bytes.
        using var hmac = new HMACSHA256(salt.IsEmpty ? new byte[HashLength] : salt.ToArray());
        var input = ikm.ToArray();
        var output = hmac.ComputeHash(input);
        output.AsSpan().CopyTo(prk);
        Array.Clear(input, 0, input.Length); // copies of key material do not outlive the call
        Array.Clear(output, 0, output.Length);
    }

    /// <summary>HKDF-Expand: fills <paramref name="output"/> (at most 255 x 32 bytes) from <paramref name="prk"/> and <paramref name="info"/>.</summary>
    public static void Expand(ReadOnlySpan<byte> prk, ReadOnlySpan<byte> info, Span<byte> output)
    {
        if (output.Length > 255 * HashLength)
            throw new ArgumentException("HKDF-Expand makes at most 255 x 32 bytes.", nameof(output));

        // T(i) = HMAC(PRK, T(i-1) | info | i), T(0) empty; the output is T(1) | T(2) | ... cut to length.
        var key = prk.ToArray();
        using var hmac = new HMACSHA256(key);
        Array.Clear(key, 0, key.Length); // the HMAC keeps its own copy, cleared when it is disposed
        var block = new byte[HashLength + info.Length + 1];
        info.CopyTo(block.AsSpan(HashLength));
        byte[]? previous = null;
        for (var i = 1; output.Length > 0; i++)
        {
            var start = previous is null ? HashLength : 0;
            previous?.CopyTo(block, 0);
            block[block.Length - 1] = (byte)i;
            var t = hmac.ComputeHash(block, start, block.Length - start);
            t.AsSpan(0, Math.Min(HashLength, output.Length)).CopyTo(output);
            output = output.Slice(Math.Min(HashLength, output.Length));
            if (previous is not null)
                Array.Clear(previous, 0, previous.Length);
            previous = t;
        }

        if (previous is not null)
            Array.Clear(previous, 0, previous.Length);
        Array.Clear(block, 0, block.Length);
    }
}
