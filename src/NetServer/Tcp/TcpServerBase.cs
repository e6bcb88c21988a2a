
namespace NetServer;

/// <summary>
/// A stream server on a TCP endpoint: the address, port and TCP socket options shared by the
/// TCP server and (layered over the same engine) the TLS server. The HTTP and WebSocket servers,
/// which derive from the TCP server as in NetCoreServer, may also listen on a Unix domain socket
/// endpoint: then the TCP options do not apply and the socket file is handled as
/// <see cref="UdsServer"/> handles it.
/// </summary>
/// <typeparam name="TSession">The session type this server creates.</typeparam>
public abstract class TcpServerBase<TSession> : StreamServer<TSession>
    where TSession : StreamSession
{
    private int _keepAliveTime = -1;
    private int _keepAliveInterval = -1;
    private int _keepAliveRetryCount = -1;

    private protected TcpServerBase(EndPoint endpoint)
        : base(endpoint)
    {
        if (endpoint is not (IPEndPoint or DnsEndPoint) && endpoint.AddressFamily != AddressFamily.Unix)
            throw new ArgumentException("A TCP server listens on an IP or DNS endpoint (an HTTP or WebSocket server also on a Unix domain socket endpoint).", nameof(endpoint));
    }

    /// <summary>The IP address (or host name) the server listens on.</summary>
    public string Address => EndPoints.AddressOf(Endpoint);

    /// <summary>The port the server listens on (after <c>Start</c>, the real port when 0 was asked for).</summary>
    public int Port => EndPoints.PortOf(Endpoint);

    /// <summary>Accept IPv4 connections on an IPv6 listener (only for an IPv6 address).</summary>
    public bool OptionDualMode { get; set; }

    /// <summary>Enable TCP keep-alive (SO_KEEPALIVE) on accepted connections.</summary>
    public bool OptionKeepAlive { get; set; }

    /// <summary>Seconds of idleness before keep-alive probes start (-1 = OS default).</summary>
    public int OptionTcpKeepAliveTime
    {
        get => _keepAliveTime;
        set => _keepAliveTime = ValidateKeepAlive(value, nameof(OptionTcpKeepAliveTime));
    }

    /// <summary>Seconds between keep-alive probes (-1 = OS default).</summary>
    public int OptionTcpKeepAliveInterval
    {
        get => _keepAliveInterval;
        set => _keepAliveInterval = ValidateKeepAlive(value, nameof(OptionTcpKeepAliveInterval));
    }

    /// <summary>Unanswered probes before the connection is dropped (-1 = OS default).</summary>
    public int OptionTcpKeepAliveRetryCount
    {
        get => _keepAliveRetryCount;
        set => _keepAliveRetryCount = ValidateKeepAlive(value, nameof(OptionTcpKeepAliveRetryCount));
    }

    /// <summary>Disable Nagle's algorithm on accepted connections (TCP_NODELAY).</summary>
    public bool OptionNoDelay { get; set; }

    /// <summary>Allow binding an address still in TIME_WAIT (SO_REUSEADDR).</summary>
    public bool OptionReuseAddress { get; set; }

    /// <summary>Forbid other sockets from binding the same address (Windows' SO_EXCLUSIVEADDRUSE).</summary>
    public bool OptionExclusiveAddressUse { get; set; }

    internal static int ValidateKeepAlive(int value, string name)
    {
        // The system refuses 0 for every keep-alive timing and count.
        if (value is < -1 or 0)
            ThrowHelper.ThrowArgumentOutOfRange(name, "Use -1 for the OS default or a value of 1 or more.");
        return value;
    }

    private protected override EndPoint ResolveEndpoint(EndPoint endpoint) => EndPoints.Resolve(endpoint);

    private protected override void BeforeBind(EndPoint endpoint)
    {
        if (endpoint.AddressFamily == AddressFamily.Unix)
            UnixSocketFile.RemoveIfStale(endpoint);
    }

    private protected override void AfterListenerClosed(EndPoint endpoint)
    {
        if (endpoint.AddressFamily == AddressFamily.Unix)
            UnixSocketFile.Remove(endpoint);
    }

    private protected override void ConfigureListener(Socket listener)
    {
        if (listener.AddressFamily == AddressFamily.Unix)
            return; // the TCP options mean nothing on a socket file
        if (listener.AddressFamily == AddressFamily.InterNetworkV6)
            listener.DualMode = OptionDualMode;
        if (OptionReuseAddress)
            listener.SetSocketOption(SocketOptionLevel.Socket, SocketOptionName.ReuseAddress, true);
        if (OptionExclusiveAddressUse)
            listener.ExclusiveAddressUse = true;
    }

    private protected override void ConfigureAcceptedSocket(Socket socket)
    {
        if (socket.AddressFamily == AddressFamily.Unix)
            return;
        SocketOptions.ApplyKeepAlive(socket, OptionKeepAlive, _keepAliveTime, _keepAliveInterval, _keepAliveRetryCount);
        if (OptionNoDelay)
            socket.NoDelay = true;
    }
}
