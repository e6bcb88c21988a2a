namespace NetServer;

/// <summary>
/// The PP2_TYPE_CRC32C check of a PROXY v2 header (HAProxy's <c>proxy-v2-options crc32c</c>): the
/// spec says a receiver must verify it when present. CRC-32C (Castagnoli) over the whole header
/// with the checksum's own four bytes taken as zero.
/// </summary>
internal static class ProxyCrc32C
{
    private const byte TlvCrc32C = 0x03;

    private static readonly uint[] s_table = BuildTable();

    /// <summary>
    /// True when <paramref name="header"/> (a whole v2 header whose TLVs, from
    /// <paramref name="tlvStart"/>, are well formed) has no CRC32C TLV or a correct one.
    /// </summary>
    public static bool Verify(ReadOnlySpan<byte> header, int tlvStart, out string? reason)
    {
        reason = null;
        var offset = tlvStart;
        while (offset + 3 <= header.Length)
        {
            var length = (header[offset + 1] << 8) | header[offset + 2];
            if (header[offset] == TlvCrc32C)
            {
                if (length != 4)
                {
                    reason = $"PROXY v2: CRC32C TLV of {length} bytes (4 expected)";
                    return false;
                }

                var value = offset + 3;
                var expected = ((uint)header[value] << 24) | ((uint)header[value + 1] << 16) | ((uint)header[value + 2] << 8) | header[value + 3];
                var crc = Update(0xFFFFFFFFu, header.Slice(0, value));
                crc = Update(crc, stackalloc byte[4]);
                crc = Update(crc, header.Slice(value + 4)) ^ 0xFFFFFFFFu;
                if (crc != expected)
                {
                    reason = $"PROXY v2: CRC32C mismatch (header says 0x{expected:X8}, bytes give 0x{crc:X8})";
                    return false;
                }

                return true;
            }

            offset += 3 + length;
        }

        return true;
    }

    /// <summary>The CRC-32C of <paramref name="data"/> (for tests: "123456789" gives 0xE3069283).</summary>
    public static uint Compute(ReadOnlySpan<byte> data) => Update(0xFFFFFFFFu, data) ^ 0xFFFFFFFFu;

    private static uint Update(uint crc, ReadOnlySpan<byte> data)
    {
        foreach (var b in data)
            crc = s_table[(crc ^ b) & 0xFF] ^ (crc >> 8);
        return crc;
    }

    private static uint[] BuildTable()
    {
        var table = new uint[256];
        for (uint i = 0; i < 256; i++)
        {
            var c = i;
            for (var k = 0; k < 8; k++)
                c = (c & 1) != 0 ? 0x82F63B78u ^ (c >> 1) : c >> 1;
            table[i] = c;
        }

        return table;
    }
}
