using System;

namespace NetServer.P2P.Wire;

/// <summary>
/// GUIDs as 16 bytes in RFC 9562 order (the order their text reads), as the envelope carries its
/// own ids (docs/protobuf.md), so the ids inside control payloads read the same in any language.
/// </summary>
internal static class GuidBytes
{
    public const int Size = 16;

    public static void Write(Span<byte> destination, Guid value)
    {
        value.TryWriteBytes(destination);
        destination.Slice(0, 4).Reverse();
        destination.Slice(4, 2).Reverse();
        destination.Slice(6, 2).Reverse();
    }

    public static byte[] ToArray(Guid value)
    {
        var bytes = new byte[Size];
        Write(bytes, value);
        return bytes;
    }

    /// <summary>The GUID in <paramref name="source"/>; false unless it holds exactly 16 bytes.</summary>
    public static bool TryRead(ReadOnlySpan<byte> source, out Guid value)
    {
        value = Guid.Empty;
        if (source.Length != Size)
            return false;
        Span<byte> bytes = stackalloc byte[Size];
        source.CopyTo(bytes);
        bytes.Slice(0, 4).Reverse();
        bytes.Slice(4, 2).Reverse();
        bytes.Slice(6, 2).Reverse();
        value = new Guid(bytes);
        return true;
    }

    /// <summary>The GUID in <paramref name="source"/>, or <see cref="Guid.Empty"/> when it is not 16 bytes.</summary>
    public static Guid Read(byte[]? source) => TryRead(source, out var value) ? value : Guid.Empty;
}
