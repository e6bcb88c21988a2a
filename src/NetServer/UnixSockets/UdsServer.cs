
namespace NetServer;

/// <summary>
/// A Unix domain socket server: the same engine as <see cref="TcpServer"/> on a socket file.
/// A socket file left behind by a process that died is removed when the server starts (a live
/// listener or a file that is not a socket is left alone and the start fails).
/// </summary>
public partial class UdsServer : StreamServer<UdsSession>
{
    /// <summary>A server on the socket file <paramref name="path"/>.</summary>
    public UdsServer(string path)
        : base(UnixEndPoints.Create(path))
    {
    }

    private protected override void BeforeBind(EndPoint endpoint) => UnixSocketFile.RemoveIfStale(endpoint);

    private protected override void AfterListenerClosed(EndPoint endpoint) => UnixSocketFile.Remove(endpoint);

    /// <summary>Creates a <see cref="UdsSession"/>; override to return your own session type.</summary>
    protected override UdsSession CreateSession() => new(this);
}
