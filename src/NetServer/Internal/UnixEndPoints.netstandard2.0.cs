using System.Text;

namespace NetServer.Internal;

internal static class UnixEndPoints
{
    public static EndPoint Create(string path)
    {
        if (path is null)
            ThrowHelper.ThrowArgumentNull(nameof(path));
        return new UnixEndPoint(path);
    }
}

/// <summary>
/// netstandard2.0 has no UnixDomainSocketEndPoint; this is the same sockaddr_un encoding
/// (family, then the UTF-8 path and a terminating zero) for runtimes that support AF_UNIX.
/// </summary>
internal sealed class UnixEndPoint : EndPoint
{
    private const int PathOffset = 2;
    private const int MaxPathBytes = 108;

    public UnixEndPoint(string path)
    {
        var length = Encoding.UTF8.GetByteCount(path);
        if (path.Length == 0 || length >= MaxPathBytes)
            throw new ArgumentOutOfRangeException(nameof(path), "A Unix socket path must be 1 to 107 bytes of UTF-8.");
        Path = path;
    }

    public string Path { get; }

    public override AddressFamily AddressFamily => AddressFamily.Unix;

    public override SocketAddress Serialize()
    {
        var bytes = Encoding.UTF8.GetBytes(Path);
        var address = new SocketAddress(AddressFamily.Unix, PathOffset + bytes.Length + 1);
        for (var i = 0; i < bytes.Length; i++)
            address[PathOffset + i] = bytes[i];
        return address;
    }

    public override EndPoint Create(SocketAddress socketAddress)
    {
        var length = socketAddress.Size - PathOffset;
        var bytes = new byte[Math.Max(length, 0)];
        var used = 0;
        for (; used < length; used++)
        {
            bytes[used] = socketAddress[PathOffset + used];
            if (bytes[used] == 0)
                break;
        }

        return used == 0 ? new UnixEndPoint("\0") : new UnixEndPoint(Encoding.UTF8.GetString(bytes, 0, used));
    }

    public override string ToString() => Path;
}
