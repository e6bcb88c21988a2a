
namespace NetServer;

/// <summary>
/// A TCP server: accepts connections, keeps a <see cref="TcpSession"/> per connection, multicasts.
/// Subclass it, override <see cref="CreateSession"/> to return your session type, and call <c>Start()</c>.
/// </summary>
public class TcpServer : TcpServerBase<TcpSession>
{
    /// <summary>A server on <paramref name="address"/>:<paramref name="port"/> (port 0 picks a free port).</summary>
    public TcpServer(IPAddress address, int port)
        : this(new IPEndPoint(address, port))
    {
    }

    /// <summary>A server on an IP address or host name given as text.</summary>
    public TcpServer(string address, int port)
        : this(EndPoints.Parse(address, port))
    {
    }

    /// <summary>A server on a host name, resolved when it starts.</summary>
    public TcpServer(DnsEndPoint endpoint)
        : base(endpoint)
    {
    }

    /// <summary>A server on <paramref name="endpoint"/>.</summary>
    public TcpServer(IPEndPoint endpoint)
        : base(endpoint)
    {
    }

    /// <summary>A server on any endpoint the base accepts (the HTTP and WebSocket servers' Unix domain socket constructors).</summary>
    private protected TcpServer(EndPoint endpoint)
        : base(endpoint)
    {
    }

    /// <summary>Creates a <see cref="TcpSession"/>; override to return your own session type.</summary>
    protected override TcpSession CreateSession() => new(this);
}
