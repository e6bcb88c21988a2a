
namespace NetServer;

/// <summary>
/// A stream client on a TCP endpoint: the address, port and TCP socket options shared by the TCP
/// client and (layered over the same engine) the TLS client.
/// </summary>
public abstract class TcpClientBase : StreamClient
{
    private int _keepAliveTime = -1;
    private int _keepAliveInterval = -1;
    private int _keepAliveRetryCount = -1;

    private protected TcpClientBase(EndPoint endpoint)
        : base(endpoint)
    {
        if (endpoint is not (IPEndPoint or DnsEndPoint) && endpoint.AddressFamily != AddressFamily.Unix)
            throw new System.ArgumentException("A TCP client connects to an IP or DNS endpoint (an HTTP or WebSocket client also to a Unix domain socket endpoint).", nameof(endpoint));
    }

    /// <summary>The server's IP address or host name.</summary>
    public string Address => EndPoints.AddressOf(Endpoint);

    /// <summary>The server's port.</summary>
    public int Port => EndPoints.PortOf(Endpoint);

    /// <summary>Use a dual-mode socket (IPv4 and IPv6) when connecting to an IPv6 address.</summary>
    public bool OptionDualMode { get; set; }

    /// <summary>Enable TCP keep-alive (SO_KEEPALIVE).</summary>
    public bool OptionKeepAlive { get; set; }

    /// <summary>Seconds of idleness before keep-alive probes start (-1 = OS default).</summary>
    public int OptionTcpKeepAliveTime
    {
        get => _keepAliveTime;
        set => _keepAliveTime = TcpServerBase<TcpSession>.ValidateKeepAlive(value, nameof(OptionTcpKeepAliveTime));
    }

    /// <summary>Seconds between keep-alive probes (-1 = OS default).</summary>
    public int OptionTcpKeepAliveInterval
    {
        get => _keepAliveInterval;
        set => _keepAliveInterval = TcpServerBase<TcpSession>.ValidateKeepAlive(value, nameof(OptionTcpKeepAliveInterval));
    }

    /// <summary>Unanswered probes before the connection is dropped (-1 = OS default).</summary>
    public int OptionTcpKeepAliveRetryCount
    {
        get => _keepAliveRetryCount;
        set => _keepAliveRetryCount = TcpServerBase<TcpSession>.ValidateKeepAlive(value, nameof(OptionTcpKeepAliveRetryCount));
    }

    /// <summary>Disable Nagle's algorithm (TCP_NODELAY).</summary>
    public bool OptionNoDelay { get; set; }

    private protected override void ConfigureSocket(Socket socket, bool connected)
    {
        base.ConfigureSocket(socket, connected);
        if (socket.AddressFamily == AddressFamily.Unix)
            return; // an HTTP or WebSocket client on a socket file: no TCP options
        if (!connected)
        {
            if (socket.AddressFamily == AddressFamily.InterNetworkV6)
                socket.DualMode = OptionDualMode;
            return;
        }

        SocketOptions.ApplyKeepAlive(socket, OptionKeepAlive, _keepAliveTime, _keepAliveInterval, _keepAliveRetryCount);
        if (OptionNoDelay)
            socket.NoDelay = true;
    }

    private protected override EndPoint ResolveSync(EndPoint endpoint) => EndPoints.Resolve(endpoint);

    private protected override ValueTask<EndPoint> ResolveAsync(EndPoint endpoint) => EndPoints.ResolveAsync(endpoint);
}
