using System;
using System.Linq;
using System.Net;
using System.Text;
using Xunit;

namespace NetServer.Tests.Proxy;

/// <summary>The PROXY protocol v1/v2 header parser on its own: valid headers, every prefix, and malformed ones.</summary>
public sealed class ProxyHeaderTests
{
    private static readonly byte[] s_signature =
        { 0x0D, 0x0A, 0x0D, 0x0A, 0x00, 0x0D, 0x0A, 0x51, 0x55, 0x49, 0x54, 0x0A };

    [Fact]
    public void V1Tcp4WithPayloadAfterHeader()
    {
        byte[] data = Ascii("PROXY TCP4 192.168.0.1 10.0.0.2 56324 443\r\nGET / HTTP/1.1\r\n");
        ProxyParseStatus status = ProxyHeader.Parse(data, out int consumed, out ProxyInfo? info, out string? reason);
        Assert.Equal(ProxyParseStatus.Done, status);
        Assert.Null(reason);
        Assert.Equal("PROXY TCP4 192.168.0.1 10.0.0.2 56324 443\r\n".Length, consumed);
        Assert.Equal(1, info!.Version);
        Assert.False(info.IsLocal);
        Assert.Equal(new IPEndPoint(IPAddress.Parse("192.168.0.1"), 56324), info.Source);
        Assert.Equal(new IPEndPoint(IPAddress.Parse("10.0.0.2"), 443), info.Destination);
        Assert.Equal("GET", Encoding.ASCII.GetString(data, consumed, 3));
    }

    [Fact]
    public void V1Tcp6()
    {
        byte[] data = Ascii("PROXY TCP6 2001:db8::1 ::1 65535 0\r\n");
        Assert.Equal(ProxyParseStatus.Done, ProxyHeader.Parse(data, out int consumed, out ProxyInfo? info, out _));
        Assert.Equal(data.Length, consumed);
        Assert.Equal(new IPEndPoint(IPAddress.Parse("2001:db8::1"), 65535), info!.Source);
        Assert.Equal(new IPEndPoint(IPAddress.IPv6Loopback, 0), info.Destination);
    }

    [Fact]
    public void V1Tcp6WithIPv4MappedAddressesGivesTheIPv4Client()
    {
        byte[] data = Ascii("PROXY TCP6 ::ffff:192.0.2.9 ::ffff:10.0.0.1 4000 443\r\n");
        Assert.Equal(ProxyParseStatus.Done, ProxyHeader.Parse(data, out _, out ProxyInfo? info, out _));
        Assert.Equal(new IPEndPoint(IPAddress.Parse("192.0.2.9"), 4000), info!.Source);
        Assert.Equal(System.Net.Sockets.AddressFamily.InterNetwork, info.Source!.AddressFamily);
        Assert.Equal(new IPEndPoint(IPAddress.Parse("10.0.0.1"), 443), info.Destination);
    }

    [Fact]
    public void V1UnknownIsLocalAndIgnoresTheRestOfTheLine()
    {
        byte[] data = Ascii("PROXY UNKNOWN ffff::1 whatever\r\nX");
        Assert.Equal(ProxyParseStatus.Done, ProxyHeader.Parse(data, out int consumed, out ProxyInfo? info, out _));
        Assert.Equal(data.Length - 1, consumed);
        Assert.True(info!.IsLocal);
        Assert.Null(info.Source);
    }

    [Fact]
    public void V1EveryPrefixNeedsMoreData()
    {
        byte[] data = Ascii("PROXY TCP4 1.2.3.4 5.6.7.8 1 2\r\n");
        for (int i = 0; i < data.Length; i++)
        {
            Assert.Equal(ProxyParseStatus.NeedMoreData, ProxyHeader.Parse(data.AsSpan(0, i), out _, out _, out _));
        }

        Assert.Equal(ProxyParseStatus.Done, ProxyHeader.Parse(data, out int consumed, out _, out _));
        Assert.Equal(data.Length, consumed);
    }

    [Theory]
    [InlineData("PROXY TCP4 1.2.3.4 5.6.7.8 1 2\n", "LF without CR")]
    [InlineData("PROXY TCP4 1.2.3.4 5.6.7.8 1\r\n", "fields")]
    [InlineData("PROXY TCP4  1.2.3.4 5.6.7.8 1 2\r\n", "fields")]
    [InlineData("PROXY UDP4 1.2.3.4 5.6.7.8 1 2\r\n", "unknown protocol")]
    [InlineData("PROXY TCP4 1.2.3 5.6.7.8 1 2\r\n", "address")]
    [InlineData("PROXY TCP4 1.2.3.256 5.6.7.8 1 2\r\n", "address")]
    [InlineData("PROXY TCP4 01.2.3.4 5.6.7.8 1 2\r\n", "address")]
    [InlineData("PROXY TCP4 ::1 5.6.7.8 1 2\r\n", "address")]
    [InlineData("PROXY TCP6 1.2.3.4 ::1 1 2\r\n", "address")]
    [InlineData("PROXY TCP6 fe80::1%eth0 ::1 1 2\r\n", "address")]
    [InlineData("PROXY TCP4 1.2.3.4 5.6.7.8 65536 2\r\n", "port")]
    [InlineData("PROXY TCP4 1.2.3.4 5.6.7.8 080 2\r\n", "port")]
    [InlineData("PROXY TCP4 1.2.3.4 5.6.7.8 -1 2\r\n", "port")]
    [InlineData("PROXY TCP4 1.2.3.4 5.6.7.8 1 2\rX", "CR not followed by LF")]
    [InlineData("PROXX TCP4", "signature")]
    [InlineData("GET / HTTP/1.1\r\n", "signature")]
    public void V1Malformed(string text, string expected)
    {
        ProxyParseStatus status = ProxyHeader.Parse(Ascii(text), out _, out ProxyInfo? info, out string? reason);
        Assert.Equal(ProxyParseStatus.Invalid, status);
        Assert.Null(info);
        Assert.Contains(expected, reason, StringComparison.OrdinalIgnoreCase);
    }

    [Fact]
    public void V1OversizeWithoutCrlfIsInvalid()
    {
        byte[] data = Ascii("PROXY UNKNOWN " + new string('a', 200));
        Assert.Equal(ProxyParseStatus.NeedMoreData, ProxyHeader.Parse(data.AsSpan(0, 106), out _, out _, out _));
        Assert.Equal(ProxyParseStatus.Invalid, ProxyHeader.Parse(data.AsSpan(0, 107), out _, out _, out string? reason));
        Assert.Contains("107", reason, StringComparison.Ordinal);
    }

    [Fact]
    public void V2Inet4WithTlvsByteByByte()
    {
        byte[] tlvs = Tlv(0x01, Ascii("h2"))
            .Concat(Tlv(0x04, new byte[3]))
            .Concat(Tlv(0x02, Ascii("example.com")))
            .Concat(Tlv(0x05, new byte[] { 9, 8, 7 }))
            .Concat(Tlv(0x20, new byte[] { 1, 0, 0, 0, 0 }))
            .Concat(Tlv(0xE0, new byte[] { 42 }))
            .ToArray();
        byte[] address = { 127, 0, 0, 1, 10, 0, 0, 2, 0xC3, 0x50, 0x01, 0xBB };
        byte[] data = V2(0x21, 0x11, address.Concat(tlvs).ToArray()).Concat(Ascii("hello")).ToArray();
        int headerLength = data.Length - 5;

        for (int i = 0; i < headerLength; i++)
        {
            Assert.Equal(ProxyParseStatus.NeedMoreData, ProxyHeader.Parse(data.AsSpan(0, i), out _, out _, out string? r));
            Assert.Null(r);
        }

        Assert.Equal(ProxyParseStatus.Done, ProxyHeader.Parse(data, out int consumed, out ProxyInfo? info, out _));
        Assert.Equal(headerLength, consumed);
        Assert.Equal(2, info!.Version);
        Assert.False(info.IsLocal);
        Assert.Equal(new IPEndPoint(IPAddress.Loopback, 50000), info.Source);
        Assert.Equal(new IPEndPoint(IPAddress.Parse("10.0.0.2"), 443), info.Destination);
        Assert.Equal("h2", info.Alpn);
        Assert.Equal("example.com", info.Authority);
        Assert.Equal(new byte[] { 9, 8, 7 }, info.UniqueId);
        Assert.Equal(new byte[] { 1, 0, 0, 0, 0 }, info.Find(ProxyInfo.TlvSsl)!.Value.Value.ToArray());
        Assert.Equal(new byte[] { 42 }, info.Find(0xE0)!.Value.Value.ToArray());
        Assert.Null(info.Find(0x04));
        Assert.Equal(5, info.Tlvs.Count);
    }

    [Fact]
    public void V2Inet6()
    {
        byte[] address = new byte[36];
        IPAddress.Parse("2001:db8::7").GetAddressBytes().CopyTo(address, 0);
        IPAddress.IPv6Loopback.GetAddressBytes().CopyTo(address, 16);
        address[32] = 0x12;
        address[33] = 0x34;
        address[35] = 80;
        Assert.Equal(ProxyParseStatus.Done, ProxyHeader.Parse(V2(0x21, 0x21, address), out _, out ProxyInfo? info, out _));
        Assert.Equal(new IPEndPoint(IPAddress.Parse("2001:db8::7"), 0x1234), info!.Source);
        Assert.Equal(new IPEndPoint(IPAddress.IPv6Loopback, 80), info.Destination);
    }

    [Fact]
    public void V2Inet6WithIPv4MappedAddressesGivesTheIPv4Client()
    {
        byte[] address = new byte[36];
        IPAddress.Parse("::ffff:198.51.100.4").GetAddressBytes().CopyTo(address, 0);
        IPAddress.Parse("2001:db8::1").GetAddressBytes().CopyTo(address, 16);
        address[33] = 7;
        address[35] = 80;
        Assert.Equal(ProxyParseStatus.Done, ProxyHeader.Parse(V2(0x21, 0x21, address), out _, out ProxyInfo? info, out _));
        Assert.Equal(new IPEndPoint(IPAddress.Parse("198.51.100.4"), 7), info!.Source);
        Assert.Equal(System.Net.Sockets.AddressFamily.InterNetwork, info.Source!.AddressFamily);
        Assert.Equal(new IPEndPoint(IPAddress.Parse("2001:db8::1"), 80), info.Destination);
    }

    [Fact]
    public void V2Unix()
    {
        byte[] address = new byte[216];
        Ascii("/run/client.sock").CopyTo(address, 0);
        Ascii("/run/server.sock").CopyTo(address, 108);
        Assert.Equal(ProxyParseStatus.Done, ProxyHeader.Parse(V2(0x21, 0x31, address), out _, out ProxyInfo? info, out _));
        Assert.Equal("/run/client.sock", info!.SourcePath);
        Assert.Equal("/run/server.sock", info.DestinationPath);
        Assert.Null(info.Source);
    }

    [Fact]
    public void V2LocalKeepsConnectionAddressesAndSkipsItsBody()
    {
        Assert.Equal(ProxyParseStatus.Done, ProxyHeader.Parse(V2(0x20, 0x00, Array.Empty<byte>()), out int consumed, out ProxyInfo? info, out _));
        Assert.Equal(16, consumed);
        Assert.True(info!.IsLocal);
        Assert.Null(info.Source);

        // The spec: for LOCAL the receiver ignores the family and skips the whole block, whatever it holds.
        foreach (byte family in new byte[] { 0x00, 0x11, 0x41, 0x12 })
        {
            byte[] data = V2(0x20, family, new byte[] { 1, 2, 3 });
            Assert.Equal(ProxyParseStatus.Done, ProxyHeader.Parse(data, out consumed, out info, out _));
            Assert.Equal(19, consumed);
            Assert.True(info!.IsLocal);
        }

        // TLVs of a LOCAL header that parse are kept (HAProxy's health checks may carry some).
        Assert.Equal(ProxyParseStatus.Done, ProxyHeader.Parse(V2(0x20, 0x00, Tlv(0x01, Ascii("h2"))), out _, out info, out _));
        Assert.Equal("h2", info!.Alpn);
    }

    [Fact]
    public void V2Crc32CIsVerified()
    {
        Assert.Equal(0xE3069283u, ProxyCrc32C.Compute(Ascii("123456789")));

        byte[] address = { 127, 0, 0, 1, 127, 0, 0, 1, 0x30, 0x39, 0x00, 0x50 };
        byte[] body = address.Concat(Tlv(0x03, new byte[4])).Concat(Tlv(0x01, Ascii("http/1.1"))).ToArray();
        byte[] data = V2(0x21, 0x11, body);
        uint crc = ProxyCrc32C.Compute(data);
        int at = 16 + 12 + 3;
        data[at] = (byte)(crc >> 24);
        data[at + 1] = (byte)(crc >> 16);
        data[at + 2] = (byte)(crc >> 8);
        data[at + 3] = (byte)crc;
        Assert.Equal(ProxyParseStatus.Done, ProxyHeader.Parse(data, out _, out ProxyInfo? info, out string? reason));
        Assert.Null(reason);
        Assert.Equal(12345, info!.Source!.Port);

        data[data.Length - 1] ^= 1; // one bit of the ALPN value flipped
        Assert.Equal(ProxyParseStatus.Invalid, ProxyHeader.Parse(data, out _, out _, out reason));
        Assert.Contains("CRC32C mismatch", reason, StringComparison.Ordinal);
    }

    [Fact]
    public void V2ProxyWithUnspecIsLocal()
    {
        Assert.Equal(ProxyParseStatus.Done, ProxyHeader.Parse(V2(0x21, 0x00, Array.Empty<byte>()), out _, out ProxyInfo? info, out _));
        Assert.True(info!.IsLocal);
    }

    [Theory]
    [InlineData(0x11, 0x11, 12, "version")]
    [InlineData(0x22, 0x11, 12, "command")]
    [InlineData(0x21, 0x12, 12, "DGRAM")]
    [InlineData(0x21, 0x13, 12, "transport")]
    [InlineData(0x21, 0x41, 12, "family")]
    [InlineData(0x21, 0x01, 0, "transport")]
    [InlineData(0x21, 0x10, 12, "transport")]
    [InlineData(0x21, 0x32, 216, "DGRAM")]
    [InlineData(0x21, 0x11, 11, "too short")]
    [InlineData(0x21, 0x21, 12, "too short")]
    [InlineData(0x21, 0x11, 14, "truncated TLV")]
    public void V2Malformed(byte versionCommand, byte family, int bodyLength, string expected)
    {
        ProxyParseStatus status = ProxyHeader.Parse(V2(versionCommand, family, new byte[bodyLength]), out _, out _, out string? reason);
        Assert.Equal(ProxyParseStatus.Invalid, status);
        Assert.Contains(expected, reason, StringComparison.OrdinalIgnoreCase);
    }

    [Fact]
    public void V2TlvPastTheEndIsInvalid()
    {
        byte[] body = new byte[12].Concat(new byte[] { 0x01, 0x00, 0x09, (byte)'h' }).ToArray();
        Assert.Equal(ProxyParseStatus.Invalid, ProxyHeader.Parse(V2(0x21, 0x11, body), out _, out _, out string? reason));
        Assert.Contains("runs past", reason, StringComparison.Ordinal);
    }

    [Fact]
    public void V2BadSignatureAndBadVersionAreSeenEarly()
    {
        byte[] bad = (byte[])s_signature.Clone();
        bad[7] = (byte)'X';
        Assert.Equal(ProxyParseStatus.Invalid, ProxyHeader.Parse(bad.AsSpan(0, 8), out _, out _, out string? reason));
        Assert.Contains("signature", reason, StringComparison.Ordinal);

        // The version byte is checked as soon as it arrives, before the length.
        byte[] v1 = s_signature.Concat(new byte[] { 0x11 }).ToArray();
        Assert.Equal(ProxyParseStatus.Invalid, ProxyHeader.Parse(v1, out _, out _, out _));
    }

    [Fact]
    public void V2OversizeLengthIsRejectedBeforeTheBodyArrives()
    {
        byte[] head = s_signature.Concat(new byte[] { 0x21, 0x11, 0xFF, 0xFF }).ToArray();
        Assert.Equal(ProxyParseStatus.Invalid, ProxyHeader.Parse(head, out _, out _, out string? reason));
        Assert.Contains("65535", reason, StringComparison.Ordinal);
        Assert.Equal(ProxyParseStatus.NeedMoreData, ProxyHeader.Parse(head, out _, out _, out _, maxV2Length: 65535));
    }

    private static byte[] Ascii(string text) => Encoding.ASCII.GetBytes(text);

    private static byte[] Tlv(byte type, byte[] value) =>
        new[] { type, (byte)(value.Length >> 8), (byte)value.Length }.Concat(value).ToArray();

    private static byte[] V2(byte versionCommand, byte family, byte[] body) =>
        s_signature
            .Concat(new[] { versionCommand, family, (byte)(body.Length >> 8), (byte)body.Length })
            .Concat(body)
            .ToArray();
}
