using System.Buffers.Binary;

namespace NetServer.WebSockets;

/// <summary>What <see cref="WsFrameHeader.TryRead"/> found.</summary>
internal enum WsHeaderStatus
{
    /// <summary>A whole header: it is in the <c>header</c> out parameter.</summary>
    Ok,

    /// <summary>Fewer bytes than the header takes: call again with more.</summary>
    NeedMoreData,

    /// <summary>A 64-bit payload length with its most significant bit set (RFC 6455 5.2 forbids it).</summary>
    InvalidLength,
}

/// <summary>
/// A WebSocket frame header (RFC 6455 5.2), read and written pure: bytes in, fields out, no
/// socket and no connection state.
/// </summary>
/// <remarks>
/// Reading checks only what the header's own bytes decide (enough of them, a 64-bit length
/// below 2^63). Whether the RSV bits, the opcode or the mask bit are acceptable depends on the
/// connection (the negotiated extensions, which side it is, a fragmented message in progress):
/// that is the protocol's job. A length written in a longer form than needed is accepted too: the
/// RFC asks senders for the minimal form, and rejecting it buys nothing.
/// </remarks>
internal readonly struct WsFrameHeader
{
    /// <summary>The longest header: 2 bytes, an 8-byte extended length and a 4-byte mask key.</summary>
    public const int MaxHeaderLength = 14;

    /// <summary>The longest payload of a control frame (RFC 6455 5.5).</summary>
    public const int MaxControlPayloadLength = 125;

    private const byte FinBit = 0x80;
    private const byte MaskBit = 0x80;
    private const byte Length16 = 126; // the 7-bit length saying "a 16-bit length follows"
    private const byte Length64 = 127; // the 7-bit length saying "a 64-bit length follows"

    public WsFrameHeader(bool fin, byte rsv, WsOpcode opcode, bool masked, uint maskKey, long payloadLength, int headerLength)
    {
        Fin = fin;
        Rsv = rsv;
        Opcode = opcode;
        Masked = masked;
        MaskKey = maskKey;
        PayloadLength = payloadLength;
        HeaderLength = headerLength;
    }

    /// <summary>True on the last frame of a message.</summary>
    public bool Fin { get; }

    /// <summary>The three RSV bits as 0 to 7: RSV1 is 4, RSV2 is 2, RSV3 is 1.</summary>
    public byte Rsv { get; }

    /// <summary>RSV1: set on the first frame of a compressed message (RFC 7692).</summary>
    public bool Rsv1 => (Rsv & 4) != 0;

    /// <summary>The 4-bit opcode as received, possibly a reserved value (see <see cref="WsOpcodes.IsKnown"/>).</summary>
    public WsOpcode Opcode { get; }

    /// <summary>True when the payload is masked (every frame from a client, none from a server).</summary>
    public bool Masked { get; }

    /// <summary>
    /// The mask key as its 4 bytes appear on the wire, read little-endian: byte <c>i</c> of the key
    /// is <c>(MaskKey &gt;&gt; (8 * i)) &amp; 0xFF</c>. 0 when the frame is not masked.
    /// </summary>
    public uint MaskKey { get; }

    /// <summary>The payload length, 0 to 2^63-1.</summary>
    public long PayloadLength { get; }

    /// <summary>The header's own length, 2 to 14 bytes: the payload starts there.</summary>
    public int HeaderLength { get; }

    /// <summary>
    /// Reads the header at the start of <paramref name="data"/>. The first two bytes say how long
    /// the header is, so <see cref="WsHeaderStatus.NeedMoreData"/> comes back until that many are
    /// there; a 64-bit length with its top bit set is <see cref="WsHeaderStatus.InvalidLength"/> as
    /// soon as its first byte is there.
    /// </summary>
    public static WsHeaderStatus TryRead(ReadOnlySpan<byte> data, out WsFrameHeader header)
    {
        header = default;
        if (data.Length < 2)
            return WsHeaderStatus.NeedMoreData;

        var first = data[0];
        var second = data[1];
        var masked = (second & MaskBit) != 0;
        var shortLength = second & 0x7F;
        var lengthBytes = shortLength < Length16 ? 0 : shortLength == Length16 ? 2 : 8;

        // Fail on the first byte that makes the length invalid rather than wait for the rest of a
        // header that cannot be accepted anyway.
        if (shortLength == Length64 && data.Length > 2 && (data[2] & 0x80) != 0)
            return WsHeaderStatus.InvalidLength;

        var headerLength = 2 + lengthBytes + (masked ? 4 : 0);
        if (data.Length < headerLength)
            return WsHeaderStatus.NeedMoreData;

        long payloadLength = lengthBytes switch
        {
            0 => shortLength,
            2 => BinaryPrimitives.ReadUInt16BigEndian(data.Slice(2)),
            _ => (long)BinaryPrimitives.ReadUInt64BigEndian(data.Slice(2)), // top bit checked above
        };
        var maskKey = masked ? BinaryPrimitives.ReadUInt32LittleEndian(data.Slice(2 + lengthBytes)) : 0u;
        header = new WsFrameHeader(
            fin: (first & FinBit) != 0,
            rsv: (byte)((first >> 4) & 0x7),
            opcode: (WsOpcode)(first & 0x0F),
            masked,
            maskKey,
            payloadLength,
            headerLength);
        return WsHeaderStatus.Ok;
    }

    /// <summary>The length of the header <see cref="Write"/> writes for this payload length.</summary>
    public static int GetHeaderLength(long payloadLength, bool masked)
    {
        if (payloadLength < 0)
            ThrowHelper.ThrowArgumentOutOfRange(nameof(payloadLength), "The payload length is negative.");
        var length = payloadLength < Length16 ? 2 : payloadLength <= ushort.MaxValue ? 4 : 10;
        return masked ? length + 4 : length;
    }

    /// <summary>
    /// Writes a header with the shortest length form that holds <paramref name="payloadLength"/>
    /// (and the key bytes when <paramref name="masked"/>), and returns its length. RSV2 and RSV3 are
    /// always clear: no extension here uses them.
    /// </summary>
    /// <param name="destination">At least <see cref="GetHeaderLength"/> bytes (<see cref="MaxHeaderLength"/> always do).</param>
    /// <param name="opcode">The opcode, 0 to 15.</param>
    /// <param name="fin">True on the last frame of a message.</param>
    /// <param name="rsv1">Sets RSV1 (a compressed message's first frame).</param>
    /// <param name="payloadLength">The payload length, not negative.</param>
    /// <param name="masked">Sets the mask bit and writes the key.</param>
    /// <param name="maskKey">The key as <see cref="MaskKey"/> describes it; ignored when not masked.</param>
    public static int Write(Span<byte> destination, WsOpcode opcode, bool fin, bool rsv1, long payloadLength, bool masked, uint maskKey)
    {
        if ((byte)opcode > 0x0F)
            ThrowHelper.ThrowArgumentOutOfRange(nameof(opcode), "An opcode has 4 bits.");
        var headerLength = GetHeaderLength(payloadLength, masked);
        if (destination.Length < headerLength)
            ThrowHelper.ThrowArgumentOutOfRange(nameof(destination), "The destination is shorter than the header.");

        destination[0] = (byte)((fin ? FinBit : 0) | (rsv1 ? 0x40 : 0) | (byte)opcode);
        var maskBit = masked ? MaskBit : 0;
        int keyAt;
        if (payloadLength < Length16)
        {
            destination[1] = (byte)(maskBit | (int)payloadLength);
            keyAt = 2;
        }
        else if (payloadLength <= ushort.MaxValue)
        {
            destination[1] = (byte)(maskBit | Length16);
            BinaryPrimitives.WriteUInt16BigEndian(destination.Slice(2), (ushort)payloadLength);
            keyAt = 4;
        }
        else
        {
            destination[1] = (byte)(maskBit | Length64);
            BinaryPrimitives.WriteUInt64BigEndian(destination.Slice(2), (ulong)payloadLength);
            keyAt = 10;
        }

        if (masked)
            BinaryPrimitives.WriteUInt32LittleEndian(destination.Slice(keyAt), maskKey);
        return headerLength;
    }
}
