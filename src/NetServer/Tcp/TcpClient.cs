
namespace NetServer;

/// <summary>
/// A TCP client: connects to a server, sends and receives through the same engine as the server's
/// sessions, and can reconnect. Subclass it and override the <c>On*</c> hooks.
/// </summary>
public class TcpClient : TcpClientBase
{
    /// <summary>A client for <paramref name="address"/>:<paramref name="port"/>.</summary>
    public TcpClient(IPAddress address, int port)
        : this(new IPEndPoint(address, port))
    {
    }

    /// <summary>A client for an IP address or host name (resolved at each connect) given as text.</summary>
    public TcpClient(string address, int port)
        : base(EndPoints.Parse(address, port))
    {
    }

    /// <summary>A client for a host name, resolved at each connect.</summary>
    public TcpClient(DnsEndPoint endpoint)
        : base(endpoint)
    {
    }

    /// <summary>A client for <paramref name="endpoint"/>.</summary>
    public TcpClient(IPEndPoint endpoint)
        : base(endpoint)
    {
    }

    /// <summary>A client for any endpoint the base accepts (the HTTP and WebSocket clients' Unix domain socket constructors).</summary>
    private protected TcpClient(EndPoint endpoint)
        : base(endpoint)
    {
    }
}
