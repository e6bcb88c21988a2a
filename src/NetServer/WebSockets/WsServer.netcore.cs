namespace NetServer;

public partial class WsServer
{
    /// <summary>A WebSocket server on the Unix domain socket <paramref name="endpoint"/>.</summary>
    public WsServer(UnixDomainSocketEndPoint endpoint)
        : base(endpoint)
    {
    }
}
