
namespace NetServer;

/// <summary>
/// A Unix domain socket client: the same engine as <see cref="TcpClient"/> on a socket file.
/// </summary>
public partial class UdsClient : StreamClient
{
    /// <summary>A client for the socket file <paramref name="path"/>.</summary>
    public UdsClient(string path)
        : base(UnixEndPoints.Create(path))
    {
    }
}
