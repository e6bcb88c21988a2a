using System;
using System.Buffers.Binary;
using System.Net;
using System.Net.Sockets;
using System.Text;
using NetServer.P2P.Internal;

namespace NetServer.P2P.Wire;

/// <summary>
/// What the P2P layer puts inside secure datagrams (docs/p2p.md, "UDP"): the key contexts, the
/// address a BINDACK carries, the sizes. The datagram layout itself is secure UDP's (docs/secure-udp.md).
/// </summary>
internal static class UdpFraming
{
    /// <summary>The payload of a BIND: zeros, as long as the largest BINDACK payload, so the answer is never larger than the request.</summary>
    public const int BindPayloadLength = 32;

    /// <summary>The largest application payload of a datagram: relayed, it carries 16 bytes of peer id and two layers of 30.</summary>
    public const int MaxPayload = 65_507 - GuidBytes.Size - (2 * SecureUdpSession.Overhead);

    /// <summary>The client-relay session's context: a label, the session id and the peer id (fixed lengths).</summary>
    public static byte[] RelayContext(Guid sessionId, Guid peerId)
    {
        var context = new byte[6 + (2 * GuidBytes.Size)];
        Encoding.ASCII.GetBytes("relay1").CopyTo(context, 0);
        GuidBytes.Write(context.AsSpan(6), sessionId);
        GuidBytes.Write(context.AsSpan(6 + GuidBytes.Size), peerId);
        return context;
    }

    /// <summary>A peer pair's context: a label, the pair id, the initiator's id, the responder's id (fixed lengths).</summary>
    public static byte[] PairContext(Guid pairId, Guid initiator, Guid responder)
    {
        var context = new byte[5 + (3 * GuidBytes.Size)];
        Encoding.ASCII.GetBytes("pair1").CopyTo(context, 0);
        GuidBytes.Write(context.AsSpan(5), pairId);
        GuidBytes.Write(context.AsSpan(5 + GuidBytes.Size), initiator);
        GuidBytes.Write(context.AsSpan(5 + (2 * GuidBytes.Size)), responder);
        return context;
    }

    /// <summary>Writes an IP endpoint as family (4 or 6) | port (2, big-endian) | address (4 or 16); the length, or 0 if it does not fit.</summary>
    public static int WriteEndpoint(Span<byte> destination, IPEndPoint endpoint)
    {
        var address = IpAddresses.Unmap(endpoint.Address);
        var length = address.AddressFamily == AddressFamily.InterNetwork ? 4 : 16;
        if (destination.Length < 3 + length)
            return 0;
        destination[0] = (byte)(length == 4 ? 4 : 6);
        BinaryPrimitives.WriteUInt16BigEndian(destination.Slice(1), (ushort)endpoint.Port);
        address.TryWriteBytes(destination.Slice(3), out _);
        return 3 + length;
    }

    /// <summary>Reads what <see cref="WriteEndpoint"/> wrote.</summary>
    public static bool TryReadEndpoint(ReadOnlySpan<byte> source, out IPEndPoint? endpoint)
    {
        endpoint = null;
        if (source.Length < 7 || (source[0] != 4 && source[0] != 6))
            return false;
        var length = source[0] == 4 ? 4 : 16;
        if (source.Length < 3 + length)
            return false;
        endpoint = new IPEndPoint(new IPAddress(source.Slice(3, length).ToArray()), BinaryPrimitives.ReadUInt16BigEndian(source.Slice(1)));
        return true;
    }
}
