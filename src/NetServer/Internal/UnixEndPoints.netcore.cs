
namespace NetServer.Internal;

internal static class UnixEndPoints
{
    public static EndPoint Create(string path)
    {
        if (path is null)
            ThrowHelper.ThrowArgumentNull(nameof(path));
        return new UnixDomainSocketEndPoint(path);
    }
}
