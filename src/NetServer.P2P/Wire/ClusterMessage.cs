using System;
using System.Buffers.Binary;
using System.Collections.Generic;
using System.Text;

namespace NetServer.P2P.Wire;

/// <summary>What a message between relay nodes is.</summary>
internal enum ClusterKind : byte
{
    /// <summary>To all: the sender is alive, at registry change <c>seq</c>.</summary>
    Heartbeat = 1,

    /// <summary>To all: a peer registered on the sender (change <c>seq</c>).</summary>
    Joined = 2,

    /// <summary>To all: a peer of the sender left (change <c>seq</c>).</summary>
    Left = 3,

    /// <summary>To one node: send me your peers (you are ahead of what I know, or I saw a gap).</summary>
    SyncRequest = 4,

    /// <summary>To one node: all my peers, at change <c>seq</c>.</summary>
    State = 5,

    /// <summary>To all: the sender stops; its peers leave.</summary>
    Bye = 6,

    /// <summary>To the addressee's node (or all, for everyone): an envelope a peer of the sender routed.</summary>
    Envelope = 7,

    /// <summary>To the sender's node: a routed envelope was refused on the addressee's node.</summary>
    Status = 8,

    /// <summary>To all: an envelope a member of a room sent to it (the room's id is the same on every node); each node gives it to its own members.</summary>
    RoomEnvelope = 9,

    /// <summary>To the responder's node: a pair key the requester's node made for a peer of each node (the responder's view to deliver).</summary>
    UdpPair = 10,

    /// <summary>To the destination's node: a relayed datagram (sealed end to end with the pair key) a peer of the sender sent through its UDP port.</summary>
    UdpDatagram = 11,
}

/// <summary>
/// The messages relay nodes exchange over an <see cref="IRelayBackplane"/>, version 1, binary:
/// <c>[version][kind]</c> then, by kind, <c>seq</c> (8, big-endian), peer ids (16, RFC 9562 order as
/// <see cref="GuidBytes"/>), names (2-byte length + UTF-8), an envelope as the sender's node stamped
/// it, or a sealed datagram (to the end). Readers refuse an unknown version or kind and anything short or left over.
/// </summary>
internal static class ClusterMessage
{
    public const byte Version = 1;
    public const int EnvelopeHeaderSize = 2 + 2 * GuidBytes.Size;
    private const int UdpPairSize = 2 + (3 * GuidBytes.Size) + 8 + SecureUdpSession.SecretLength;

    public static byte[] Heartbeat(long seq) => Sequenced(ClusterKind.Heartbeat, seq, 0);

    public static byte[] Joined(long seq, RelayPeer peer)
    {
        var name = Encoding.UTF8.GetBytes(peer.Name);
        var message = Sequenced(ClusterKind.Joined, seq, GuidBytes.Size + 2 + name.Length);
        var at = 10;
        WritePeer(message, ref at, peer.Id, name);
        return message;
    }

    public static byte[] Left(long seq, Guid peer)
    {
        var message = Sequenced(ClusterKind.Left, seq, GuidBytes.Size);
        GuidBytes.Write(message.AsSpan(10), peer);
        return message;
    }

    public static byte[] Simple(ClusterKind kind) => [Version, (byte)kind];

    public static byte[] State(long seq, IReadOnlyList<RelayPeer> peers)
    {
        var names = new byte[peers.Count][];
        var size = 4;
        for (var i = 0; i < names.Length; i++)
        {
            names[i] = Encoding.UTF8.GetBytes(peers[i].Name);
            size += GuidBytes.Size + 2 + names[i].Length;
        }

        var message = Sequenced(ClusterKind.State, seq, size);
        BinaryPrimitives.WriteInt32BigEndian(message.AsSpan(10), peers.Count);
        var at = 14;
        for (var i = 0; i < names.Length; i++)
            WritePeer(message, ref at, peers[i].Id, names[i]);
        return message;
    }

    /// <summary>Writes the head of an envelope message into <paramref name="destination"/>; the stamped envelope follows it.</summary>
    public static void WriteEnvelopeHeader(Span<byte> destination, Guid from, Guid to, ClusterKind kind = ClusterKind.Envelope)
    {
        destination[0] = Version;
        destination[1] = (byte)kind;
        GuidBytes.Write(destination.Slice(2), from);
        GuidBytes.Write(destination.Slice(2 + GuidBytes.Size), to);
    }

    public static byte[] Status(Guid peer, RelayStatus status, ulong requestId, Guid messageId, Guid to, string detail)
    {
        var text = Encoding.UTF8.GetBytes(detail);
        var message = new byte[2 + GuidBytes.Size + 1 + 8 + 2 * GuidBytes.Size + text.Length];
        message[0] = Version;
        message[1] = (byte)ClusterKind.Status;
        var at = 2;
        GuidBytes.Write(message.AsSpan(at), peer);
        at += GuidBytes.Size;
        message[at++] = (byte)status;
        BinaryPrimitives.WriteUInt64BigEndian(message.AsSpan(at), requestId);
        at += 8;
        GuidBytes.Write(message.AsSpan(at), messageId);
        at += GuidBytes.Size;
        GuidBytes.Write(message.AsSpan(at), to);
        at += GuidBytes.Size;
        text.CopyTo(message.AsSpan(at));
        return message;
    }

    /// <summary>
    /// A pair key for <paramref name="responder"/> (a peer of the addressed node) and
    /// <paramref name="initiator"/> (of the sender): [initiator | responder | pair id | initiator's
    /// index (4) | responder's index (4) | secret (32)].
    /// </summary>
    public static byte[] UdpPair(Guid initiator, Guid responder, Guid pairId, uint initiatorIndex, uint responderIndex, ReadOnlySpan<byte> secret)
    {
        var message = new byte[UdpPairSize];
        message[0] = Version;
        message[1] = (byte)ClusterKind.UdpPair;
        GuidBytes.Write(message.AsSpan(2), initiator);
        GuidBytes.Write(message.AsSpan(2 + GuidBytes.Size), responder);
        GuidBytes.Write(message.AsSpan(2 + (2 * GuidBytes.Size)), pairId);
        var at = 2 + (3 * GuidBytes.Size);
        BinaryPrimitives.WriteUInt32BigEndian(message.AsSpan(at), initiatorIndex);
        BinaryPrimitives.WriteUInt32BigEndian(message.AsSpan(at + 4), responderIndex);
        secret.CopyTo(message.AsSpan(at + 8));
        return message;
    }

    public static bool TryReadUdpPair(ReadOnlySpan<byte> message, out Guid initiator, out Guid responder, out Guid pairId, out uint initiatorIndex, out uint responderIndex, out ReadOnlySpan<byte> secret)
    {
        initiator = responder = pairId = Guid.Empty;
        initiatorIndex = responderIndex = 0;
        secret = default;
        if (message.Length != UdpPairSize)
            return false;
        GuidBytes.TryRead(message.Slice(2, GuidBytes.Size), out initiator);
        GuidBytes.TryRead(message.Slice(2 + GuidBytes.Size, GuidBytes.Size), out responder);
        GuidBytes.TryRead(message.Slice(2 + (2 * GuidBytes.Size), GuidBytes.Size), out pairId);
        var at = 2 + (3 * GuidBytes.Size);
        initiatorIndex = BinaryPrimitives.ReadUInt32BigEndian(message.Slice(at));
        responderIndex = BinaryPrimitives.ReadUInt32BigEndian(message.Slice(at + 4));
        secret = message.Slice(at + 8);
        return initiatorIndex != 0 && responderIndex != 0;
    }

    /// <summary>The kind of <paramref name="message"/>; false for a short message or an unknown version.</summary>
    public static bool TryReadKind(ReadOnlySpan<byte> message, out ClusterKind kind)
    {
        kind = default;
        if (message.Length < 2 || message[0] != Version)
            return false;
        kind = (ClusterKind)message[1];
        return true;
    }

    /// <summary>The change number of a Heartbeat, Joined, Left or State message.</summary>
    public static bool TryReadSeq(ReadOnlySpan<byte> message, out long seq, out ReadOnlySpan<byte> rest)
    {
        seq = 0;
        rest = default;
        if (message.Length < 10)
            return false;
        seq = BinaryPrimitives.ReadInt64BigEndian(message.Slice(2));
        rest = message.Slice(10);
        return true;
    }

    /// <summary>One peer entry (id, name) at the start of <paramref name="rest"/>, which moves past it.</summary>
    public static bool TryReadPeer(ref ReadOnlySpan<byte> rest, out RelayPeer peer)
    {
        peer = null!;
        if (rest.Length < GuidBytes.Size + 2)
            return false;
        GuidBytes.TryRead(rest.Slice(0, GuidBytes.Size), out var id);
        int length = BinaryPrimitives.ReadUInt16BigEndian(rest.Slice(GuidBytes.Size));
        if (rest.Length < GuidBytes.Size + 2 + length)
            return false;
        peer = new RelayPeer(id, Encoding.UTF8.GetString(rest.Slice(GuidBytes.Size + 2, length)));
        rest = rest.Slice(GuidBytes.Size + 2 + length);
        return true;
    }

    public static bool TryReadId(ReadOnlySpan<byte> rest, out Guid id) => GuidBytes.TryRead(rest, out id);

    public static bool TryReadStateCount(ref ReadOnlySpan<byte> rest, out int count)
    {
        count = 0;
        if (rest.Length < 4)
            return false;
        count = BinaryPrimitives.ReadInt32BigEndian(rest);
        rest = rest.Slice(4);
        return count >= 0;
    }

    public static bool TryReadEnvelope(ReadOnlySpan<byte> message, out Guid from, out Guid to, out ReadOnlySpan<byte> envelope)
    {
        from = to = Guid.Empty;
        envelope = default;
        if (message.Length < EnvelopeHeaderSize)
            return false;
        GuidBytes.TryRead(message.Slice(2, GuidBytes.Size), out from);
        GuidBytes.TryRead(message.Slice(2 + GuidBytes.Size, GuidBytes.Size), out to);
        envelope = message.Slice(EnvelopeHeaderSize);
        return true;
    }

    public static bool TryReadStatus(ReadOnlySpan<byte> message, out Guid peer, out RelayStatus status, out ulong requestId, out Guid messageId, out Guid to, out string detail)
    {
        peer = messageId = to = Guid.Empty;
        status = default;
        requestId = 0;
        detail = string.Empty;
        const int Fixed = 2 + GuidBytes.Size + 1 + 8 + 2 * GuidBytes.Size;
        if (message.Length < Fixed)
            return false;
        var at = 2;
        GuidBytes.TryRead(message.Slice(at, GuidBytes.Size), out peer);
        at += GuidBytes.Size;
        status = (RelayStatus)message[at++];
        requestId = BinaryPrimitives.ReadUInt64BigEndian(message.Slice(at));
        at += 8;
        GuidBytes.TryRead(message.Slice(at, GuidBytes.Size), out messageId);
        at += GuidBytes.Size;
        GuidBytes.TryRead(message.Slice(at, GuidBytes.Size), out to);
        detail = Encoding.UTF8.GetString(message.Slice(Fixed));
        return true;
    }

    private static byte[] Sequenced(ClusterKind kind, long seq, int body)
    {
        var message = new byte[10 + body];
        message[0] = Version;
        message[1] = (byte)kind;
        BinaryPrimitives.WriteInt64BigEndian(message.AsSpan(2), seq);
        return message;
    }

    private static void WritePeer(byte[] message, ref int at, Guid id, byte[] name)
    {
        GuidBytes.Write(message.AsSpan(at), id);
        at += GuidBytes.Size;
        BinaryPrimitives.WriteUInt16BigEndian(message.AsSpan(at), (ushort)name.Length);
        at += 2;
        name.CopyTo(message.AsSpan(at));
        at += name.Length;
    }
}
