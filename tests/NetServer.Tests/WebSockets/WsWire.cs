using System;
using System.Buffers.Binary;
using System.Security.Cryptography;
using System.Text;

namespace NetServer.Tests.WebSockets;

/// <summary>A frame as a raw test peer read it off the wire (RFC 6455 5.2), payload unmasked.</summary>
internal sealed record WsWireFrame(bool Fin, int Rsv, int Opcode, bool Masked, uint MaskKey, byte[] Payload)
{
    /// <summary>The status of a close frame, or -1 when it carries none.</summary>
    public int CloseCode => Payload.Length >= 2 ? BinaryPrimitives.ReadUInt16BigEndian(Payload) : -1;

    /// <summary>The reason of a close frame (strict UTF-8: throws when the peer sent invalid bytes).</summary>
    public string CloseReason => Payload.Length > 2 ? WsWire.StrictUtf8.GetString(Payload, 2, Payload.Length - 2) : string.Empty;

    public override string ToString() =>
        $"frame fin={Fin} rsv={Rsv} opcode={Opcode} masked={Masked} length={Payload.Length}" + (Opcode == WsWire.Close ? $" code={CloseCode}" : string.Empty);
}

/// <summary>
/// Frames written by hand, independently of the library's codec: any FIN, RSV bits, opcode, mask,
/// announced length and length form, so a test can send exactly the bytes a broken (or a careful)
/// peer would.
/// </summary>
internal static class WsWire
{
    public const int Continuation = 0;
    public const int Text = 1;
    public const int Binary = 2;
    public const int Close = 8;
    public const int Ping = 9;
    public const int Pong = 10;

    /// <summary>The RFC 6455 1.3 sample key and its accept value.</summary>
    public const string SampleKey = "dGhlIHNhbXBsZSBub25jZQ==";
    public const string SampleAccept = "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=";

    public static readonly UTF8Encoding StrictUtf8 = new(encoderShouldEmitUTF8Identifier: false, throwOnInvalidBytes: true);

    /// <summary>
    /// A frame: <paramref name="rsv"/> is the three RSV bits as 0-7 (RSV1 = 4); masked with a fresh
    /// random key unless <paramref name="mask"/> is false; <paramref name="announced"/> overrides the
    /// length in the header (the payload given is still what follows it); <paramref name="lengthForm"/>
    /// forces the 16-bit (2) or 64-bit (8) length form instead of the shortest.
    /// </summary>
    public static byte[] Frame(int opcode, ReadOnlySpan<byte> payload, bool fin = true, int rsv = 0, bool mask = true, long? announced = null, int lengthForm = 0)
    {
        var length = announced ?? payload.Length;
        var form = lengthForm != 0 ? lengthForm : length < 126 ? 0 : length <= ushort.MaxValue ? 2 : 8;
        var headerLength = 2 + form + (mask ? 4 : 0);
        var frame = new byte[headerLength + payload.Length];
        frame[0] = (byte)((fin ? 0x80 : 0) | (rsv << 4) | opcode);
        var maskBit = mask ? 0x80 : 0;
        switch (form)
        {
            case 0:
                frame[1] = (byte)(maskBit | (int)length);
                break;
            case 2:
                frame[1] = (byte)(maskBit | 126);
                BinaryPrimitives.WriteUInt16BigEndian(frame.AsSpan(2), (ushort)length);
                break;
            default:
                frame[1] = (byte)(maskBit | 127);
                BinaryPrimitives.WriteUInt64BigEndian(frame.AsSpan(2), (ulong)length);
                break;
        }

        var body = frame.AsSpan(headerLength);
        payload.CopyTo(body);
        if (mask)
        {
            var key = frame.AsSpan(2 + form, 4);
            RandomNumberGenerator.Fill(key);
            for (var i = 0; i < body.Length; i++)
                body[i] ^= key[i & 3];
        }

        return frame;
    }

    public static byte[] TextFrame(string text, bool fin = true) => Frame(Text, Encoding.UTF8.GetBytes(text), fin);

    public static byte[] BinaryFrame(byte[] payload, bool fin = true) => Frame(Binary, payload, fin);

    public static byte[] CloseFrame(int code, string reason = "") => Frame(Close, ClosePayload(code, Encoding.UTF8.GetBytes(reason)));

    public static byte[] ClosePayload(int code, byte[] reason)
    {
        var payload = new byte[2 + reason.Length];
        BinaryPrimitives.WriteUInt16BigEndian(payload, (ushort)code);
        reason.CopyTo(payload, 2);
        return payload;
    }

    public static byte[] Concat(params byte[][] parts)
    {
        var length = 0;
        foreach (var part in parts)
            length += part.Length;
        var all = new byte[length];
        var at = 0;
        foreach (var part in parts)
        {
            part.CopyTo(all, at);
            at += part.Length;
        }

        return all;
    }

    /// <summary>Bytes from hex ("cebae1" or "-" for none).</summary>
    public static byte[] Hex(string hex) => hex == "-" ? [] : Convert.FromHexString(hex);

    /// <summary>Deterministic test bytes: every value 0-255 (binary) or printable ASCII (text).</summary>
    public static byte[] Payload(int length, bool text, int seed = 1)
    {
        var payload = new byte[length];
        if (text)
        {
            for (var i = 0; i < length; i++)
                payload[i] = (byte)(' ' + ((i * 7 + seed) % 95));
        }
        else
        {
            new Random(seed).NextBytes(payload);
        }

        return payload;
    }

    /// <summary>The Sec-WebSocket-Accept value for a key, computed here (RFC 6455 4.2.2), not by the library.</summary>
    public static string Accept(string key)
    {
#pragma warning disable CA5350 // SHA-1 is what RFC 6455 prescribes for the accept value
        return Convert.ToBase64String(SHA1.HashData(Encoding.ASCII.GetBytes(key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11")));
#pragma warning restore CA5350
    }

    /// <summary>Tries to read one frame at the start of <paramref name="data"/>; null when more bytes are needed.</summary>
    public static WsWireFrame? TryParse(ReadOnlySpan<byte> data, out int consumed)
    {
        consumed = 0;
        if (data.Length < 2)
            return null;
        var masked = (data[1] & 0x80) != 0;
        var shortLength = data[1] & 0x7F;
        var form = shortLength < 126 ? 0 : shortLength == 126 ? 2 : 8;
        var headerLength = 2 + form + (masked ? 4 : 0);
        if (data.Length < headerLength)
            return null;
        var length = form switch
        {
            0 => shortLength,
            2 => BinaryPrimitives.ReadUInt16BigEndian(data.Slice(2)),
            _ => checked((long)BinaryPrimitives.ReadUInt64BigEndian(data.Slice(2))),
        };
        if (length > int.MaxValue)
            throw new InvalidOperationException($"A frame announces {length} bytes.");
        if (data.Length < headerLength + length)
            return null;
        var key = masked ? data.Slice(2 + form, 4).ToArray() : [0, 0, 0, 0];
        var payload = data.Slice(headerLength, (int)length).ToArray();
        if (masked)
        {
            for (var i = 0; i < payload.Length; i++)
                payload[i] ^= key[i & 3];
        }

        consumed = headerLength + (int)length;
        return new WsWireFrame(
            Fin: (data[0] & 0x80) != 0,
            Rsv: (data[0] >> 4) & 7,
            Opcode: data[0] & 0x0F,
            Masked: masked,
            MaskKey: BinaryPrimitives.ReadUInt32LittleEndian(key),
            Payload: payload);
    }
}
