using System;
using System.Buffers.Binary;
using System.Text;

namespace NetServer.Redis;

/// <summary>What a backplane frame is addressed to.</summary>
internal enum FrameKind : byte
{
    All = 1,
    Group = 2,
    Session = 3,

    /// <summary>To one node (target: its node id) or every node (target empty): the relay nodes' messages (RedisRelayBackplane) that peers cause.</summary>
    Node = 4,

    /// <summary>As <see cref="Node"/>, for the relay cluster's upkeep (heartbeats, registry, goodbye): bounded apart, so that peer traffic cannot crowd it out.</summary>
    NodeControl = 5,
}

/// <summary>
/// The wire format on Redis, version 1: [version:1][kind:1][node id:16][target:16 session or node id, or 2-byte length + UTF-8 group][payload].
/// The kind is the second byte, so the receiving side can tell control frames apart before parsing anything else.
/// The node id lets a node skip its own publish (it delivered locally already).
/// </summary>
internal static class BackplaneFrame
{
    public const byte Version = 1;
    private const int HeaderSize = 2 + 16;

    private static readonly UTF8Encoding s_strictUtf8 = new(encoderShouldEmitUTF8Identifier: false, throwOnInvalidBytes: true);

    /// <summary>
    /// Refuses a group name a frame cannot carry as it is: over 65,535 UTF-8 bytes, or not valid
    /// UTF-16 (a lone surrogate would travel as U+FFFD and reach another group on other nodes).
    /// </summary>
    public static void ValidateGroup(string group)
    {
        int bytes;
        try
        {
            bytes = s_strictUtf8.GetByteCount(group);
        }
        catch (EncoderFallbackException e)
        {
            throw new ArgumentException("A group name must be valid UTF-16 (it holds a lone surrogate).", nameof(group), e);
        }

        if (bytes > ushort.MaxValue)
            throw new ArgumentException("A group name is at most 65,535 UTF-8 bytes.", nameof(group));
    }

    public static byte[] Write(FrameKind kind, Guid node, Guid session, string? group, ReadOnlySpan<byte> payload)
    {
        var groupBytes = group is null ? 0 : Encoding.UTF8.GetByteCount(group);
        if (groupBytes > ushort.MaxValue)
            throw new ArgumentException("A group name is at most 65,535 UTF-8 bytes.", nameof(group));
        var target = kind switch { FrameKind.Session or FrameKind.Node or FrameKind.NodeControl => 16, FrameKind.Group => 2 + groupBytes, _ => 0 };
        var frame = new byte[HeaderSize + target + payload.Length];
        frame[0] = Version;
        frame[1] = (byte)kind;
        node.TryWriteBytes(frame.AsSpan(2, 16));
        var at = HeaderSize;
        if (kind is FrameKind.Session or FrameKind.Node or FrameKind.NodeControl)
        {
            session.TryWriteBytes(frame.AsSpan(at, 16));
            at += 16;
        }
        else if (kind == FrameKind.Group)
        {
            BinaryPrimitives.WriteUInt16BigEndian(frame.AsSpan(at), (ushort)groupBytes);
            at += 2 + Encoding.UTF8.GetBytes(group, frame.AsSpan(at + 2));
        }
        payload.CopyTo(frame.AsSpan(at));
        return frame;
    }

    /// <summary>Parses a frame; false for an unknown version or kind, or a short frame (it is then ignored).</summary>
    public static bool TryRead(ReadOnlySpan<byte> frame, out FrameKind kind, out Guid node, out Guid session, out string? group, out ReadOnlySpan<byte> payload)
    {
        kind = default; node = default; session = default; group = null; payload = default;
        if (frame.Length < HeaderSize || frame[0] != Version)
            return false;
        kind = (FrameKind)frame[1];
        node = new Guid(frame.Slice(2, 16));
        var rest = frame.Slice(HeaderSize);
        switch (kind)
        {
            case FrameKind.All:
                break;
            case FrameKind.Session:
            case FrameKind.Node:
            case FrameKind.NodeControl:
                if (rest.Length < 16) return false;
                session = new Guid(rest.Slice(0, 16));
                rest = rest.Slice(16);
                break;
            case FrameKind.Group:
                if (rest.Length < 2) return false;
                int length = BinaryPrimitives.ReadUInt16BigEndian(rest);
                if (rest.Length < 2 + length) return false;
                group = Encoding.UTF8.GetString(rest.Slice(2, length));
                rest = rest.Slice(2 + length);
                break;
            default:
                return false;
        }
        payload = rest;
        return true;
    }
}
