namespace NetServer;

public partial class WsClient
{
    /// <summary>A WebSocket client of the Unix domain socket <paramref name="endpoint"/> (the upgrade request says "Host: localhost" unless OnWsConnecting sets one).</summary>
    public WsClient(UnixDomainSocketEndPoint endpoint)
        : base(endpoint) => _upgrade = Attach(out _ws);
}
