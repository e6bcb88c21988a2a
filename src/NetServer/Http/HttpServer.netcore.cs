namespace NetServer;

public partial class HttpServer
{
    /// <summary>A server on the Unix domain socket <paramref name="endpoint"/> (HTTP over a socket file; a stale socket file is removed when it starts, as UdsServer does).</summary>
    public HttpServer(UnixDomainSocketEndPoint endpoint)
        : base(endpoint)
    {
    }
}
