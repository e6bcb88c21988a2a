using System;
using System.Net;
using System.Net.NetworkInformation;
using System.Net.Sockets;

namespace NetServer.Benchmark;

/// <summary>
/// Makes the run's server and clients for its protocol: the one place that knows that tcp, ssl
/// and udp use an IP endpoint, uds a socket path, ssl the TLS contexts from the test
/// certificates, udp multicast a group, msg and proto a message (envelope) server and
/// clients over one of the three stream transports, http and https an HTTP server and
/// load clients over tcp and TLS, and ws and wss a WebSocket server and clients over tcp and TLS.
/// </summary>
internal sealed class PeerFactory
{
    /// <summary>udp server socket buffers (SO_RCVBUF, SO_SNDBUF), as echoref's udpserver asks for, so both servers get the same kernel queues.</summary>
    private const int UdpServerSocketBuffer = 8 << 20;

    private readonly Options _options;
    private readonly SslContext? _serverTls;
    private readonly SslContext? _clientTls;
    private byte[]? _envelope;
    private BenchKeys? _secureKeys;
    private int _nextClient;

    private PeerFactory(Options options, string? certificateFolder)
    {
        _options = options;
        CertificateFolder = certificateFolder;
        if (options.Protocol == "udp" && options.Scenario == "multicast")
        {
            Group = new IPEndPoint(IPAddress.Parse(options.Group), options.EffectivePort == 0 ? FreeUdpPort() : options.EffectivePort);
            MulticastInterface = options.Interface ?? (IPAddress.IsLoopback(IPAddress.Parse(options.Address)) ? LoopbackIndex(Group.AddressFamily) : 0);
        }

        if (certificateFolder is null)
            return;

        // Load only what the role needs: a client-only run needs no server key, and the reverse.
        if (options.Role != Role.Client)
            _serverTls = TestCertificates.ServerContext(certificateFolder);
        if (options.Role != Role.Server)
            _clientTls = TestCertificates.ClientContext(certificateFolder);
    }

    /// <summary>Where the TLS certificates come from (null unless ssl).</summary>
    public string? CertificateFolder { get; }

    /// <summary>udp multicast: the group and port the server sends to and the clients listen on (null otherwise).</summary>
    public IPEndPoint? Group { get; }

    /// <summary>udp multicast: the interface index datagrams go out on and groups are joined on (0: the system's choice).</summary>
    public int MulticastInterface { get; }

    /// <summary>The factory for <paramref name="options"/>; for ssl it loads the certificates, and throws when they cannot be found or read.</summary>
    public static PeerFactory Create(Options options) =>
        new(options, options.Transport == "ssl" ? TestCertificates.Locate(options.CertificateFolder) : null);

    /// <summary>The server a client role connects to (for udp multicast, the group it joins), as given on the command line.</summary>
    public EndPoint Target => _options.Transport == "uds" ? new UnixEndPointHolder(_options.EffectivePath) : Group ?? IPEndpoint;

    private IPEndPoint IPEndpoint => new(IPAddress.Parse(_options.Address), _options.EffectivePort);

    /// <summary>--proxy-trust: the server reads a PROXY header from that proxy before each connection's bytes.</summary>
    private BenchTcpServer BehindProxy(BenchTcpServer server)
    {
        if (_options.ProxyTrust is { } network)
        {
            server.OptionProxyProtocol = ProxyProtocolMode.Required;
            server.OptionProxyTrustedNetworks.Add(network);
        }

        return server;
    }

    public ServerHandle CreateServer()
    {
        var server = CreateServerOfProtocol();
        if (_options.Logging is { } level)
            server.EventListener = BenchLogging.Listener(level);
        return server;
    }

    private ServerHandle CreateServerOfProtocol()
    {
        var counters = new ServerCounters();
        var mode = ServerMode.Of(_options);
        if (_options.Protocol == "msg")
            return ServerHandle.Of(CreateMessageServer(mode.Echoes, counters), counters);
        if (_options.Protocol == "proto")
            return ServerHandle.Of(CreateProtoServer(counters), counters);
        if (_options.Protocol == "ws")
        {
            var ws = new BenchWsServer(IPEndpoint, mode.Echoes, counters) { OptionNoDelay = true };
            return ServerHandle.Of(ws, ws, _options.Text, counters);
        }

        if (_options.Protocol == "wss")
        {
            var wss = new BenchWssServer(_serverTls!, IPEndpoint, mode.Echoes, counters) { OptionNoDelay = true };
            return ServerHandle.Of(wss, wss, _options.Text, counters);
        }

        return _options.Protocol switch
        {
            "tcp" => ServerHandle.Of(BehindProxy(new BenchTcpServer(IPEndpoint, mode, counters) { OptionNoDelay = true }), counters),
            "ssl" => ServerHandle.Of(new BenchSslServer(_serverTls!, IPEndpoint, mode, counters) { OptionNoDelay = true }, counters),
            "udp" => ServerHandle.Of(CreateUdpServer(_options.Scenario == "echo", counters), counters, Group),
            "sudp" => ServerHandle.Of(CreateSecureUdpServer(counters), counters, group: null),
            "http" => ServerHandle.Of(new BenchHttpServer(IPEndpoint, counters) { OptionNoDelay = true }, counters),
            "https" => ServerHandle.Of(new BenchHttpsServer(_serverTls!, IPEndpoint, counters) { OptionNoDelay = true }, counters),
            _ => ServerHandle.Of(new BenchUdsServer(_options.EffectivePath, mode, counters), counters),
        };
    }

    /// <summary>A message server on the run's transport: its sessions send every message back (echo), or only take multicasts.</summary>
    private BenchMessageServer CreateMessageServer(bool echo, ServerCounters counters) => _options.Transport switch
    {
        "ssl" => new BenchMessageServer(_serverTls!, IPEndpoint, echo, counters),
        "uds" => new BenchMessageServer(new UnixDomainSocketEndPoint(_options.EffectivePath), echo, counters),
        _ => new BenchMessageServer(IPEndpoint, echo, counters),
    };

    /// <summary>A message client on the run's transport for <paramref name="target"/> (an IP endpoint, or a Unix socket path).</summary>
    private BenchMessageClient CreateMessageClient(EndPoint target, MessageBehavior behavior) => _options.Transport switch
    {
        "ssl" => new BenchMessageClient(_clientTls!, (IPEndPoint)target, behavior),
        "uds" => new BenchMessageClient(new UnixDomainSocketEndPoint(target.ToString()!), behavior),
        _ => new BenchMessageClient((IPEndPoint)target, behavior),
    };

    /// <summary>An envelope echo server on the run's transport (typed or not, as --typed says).</summary>
    private BenchProtoServer CreateProtoServer(ServerCounters counters) => _options.Transport switch
    {
        "ssl" => new BenchProtoServer(_serverTls!, IPEndpoint, _options.Typed, counters),
        "uds" => new BenchProtoServer(new UnixDomainSocketEndPoint(_options.EffectivePath), _options.Typed, counters),
        _ => new BenchProtoServer(IPEndpoint, _options.Typed, counters),
    };

    /// <summary>An envelope client on the run's transport for <paramref name="target"/>.</summary>
    private BenchProtoClient CreateProtoClient(EndPoint target, MessageBehavior behavior) => _options.Transport switch
    {
        "ssl" => new BenchProtoClient(_clientTls!, (IPEndPoint)target, behavior),
        "uds" => new BenchProtoClient(new UnixDomainSocketEndPoint(target.ToString()!), behavior),
        _ => new BenchProtoClient((IPEndPoint)target, behavior),
    };

    /// <summary>
    /// The echo server receives with OptionAutoReceive (no measurable difference from calling
    /// ReceiveAsync from OnReceived, and simpler). A multicast server binds --address with any
    /// port and sends to the group.
    /// </summary>
    private BenchUdpServer CreateUdpServer(bool echo, ServerCounters counters) =>
        new(Group is null ? IPEndpoint : new IPEndPoint(IPAddress.Parse(_options.Address), 0), echo, counters)
        {
            OptionAutoReceive = echo,
            OptionDedicatedThread = _options.DedicatedThread,
            OptionReceiveBufferSize = UdpServerSocketBuffer,
            OptionSendBufferSize = UdpServerSocketBuffer,
            OptionMulticastInterface = MulticastInterface,
        };

    /// <summary>sudp: the udp echo server, secure, with a session for each of the run's clients (0 to CLIENTS - 1).</summary>
    private BenchSecureUdpServer CreateSecureUdpServer(ServerCounters counters)
    {
        var server = new BenchSecureUdpServer(IPEndpoint, counters)
        {
            OptionAutoReceive = true,
            OptionDedicatedThread = _options.DedicatedThread,
            OptionReceiveBufferSize = UdpServerSocketBuffer,
            OptionSendBufferSize = UdpServerSocketBuffer,
        };
        for (var client = 0; client < _options.Clients; client++)
            server.Sessions.TryAdd(SecureKeys.Server(client));
        return server;
    }

    /// <summary>A stream client with <paramref name="behavior"/> (the handshake and latency scenarios make their own).</summary>
    public StreamClient CreateClient(EndPoint target, ClientBehavior behavior) => target switch
    {
        IPEndPoint ip when _clientTls is not null => new BenchSslClient(_clientTls, ip, behavior) { OptionNoDelay = true },
        IPEndPoint ip => new BenchTcpClient(ip, behavior) { OptionNoDelay = true },
        _ => new BenchUdsClient(target.ToString()!, behavior),
    };

    /// <summary>
    /// A client of the echo, reply or multicast scenario: echo and reply clients keep MESSAGES x
    /// SIZE bytes (udp: MESSAGES datagrams, msg and ws: MESSAGES messages, proto: MESSAGES envelopes,
    /// each with a SIZE-byte payload) in flight.
    /// </summary>
    public ClientHandle CreateTrafficClient(EndPoint target)
    {
        var echo = _options.Scenario == "echo";
        var message = new byte[_options.Size];
        Array.Fill(message, (byte)'x');
        if (_options.Protocol == "msg")
        {
            var messages = new MessageBehavior(echo ? _options.Messages : 0, message);
            return ClientHandle.Of(CreateMessageClient(target, messages), messages);
        }

        if (_options.Protocol == "proto")
        {
            var envelopes = new MessageBehavior(_options.Messages, Envelope);
            return ClientHandle.Of(CreateProtoClient(target, envelopes), envelopes);
        }

        if (_options.IsWebSocket)
        {
            var messages = new WsBehavior(echo ? _options.Messages : 0, message, _options.Text, _options.RequestPath);
            return _clientTls is null
                ? ClientHandle.Of(new BenchWsClient((IPEndPoint)target, messages) { OptionNoDelay = true }, messages)
                : ClientHandle.Of(new BenchWssClient(_clientTls, (IPEndPoint)target, messages) { OptionNoDelay = true }, messages);
        }

        if (_options.IsHttp)
        {
            var requests = new HttpLoadBehavior(HttpLoadBehavior.Request(_options.Scenario, target), _options.Depth);
            return ClientHandle.Of(CreateClient(target, requests), requests);
        }

        if (!_options.IsDatagram)
        {
            ClientBehavior behavior = _options.Scenario switch
            {
                "echo" => new EchoBehavior(Initial()),
                "reply" => new ReplyBehavior(message, _options.Messages),
                _ => new ClientBehavior(),
            };
            return ClientHandle.Of(CreateClient(target, behavior), behavior);
        }

        var datagrams = new DatagramBehavior(echo, _options.Messages, message);
        var ip = (IPEndPoint)target;

        // The receive buffer is the largest datagram expected (SIZE), not 64 KiB per client.
        if (_options.Protocol == "sudp")
        {
            var session = SecureKeys.Client(_nextClient++);
            return ClientHandle.Of(new BenchSecureUdpClient(ip, session, datagrams) { OptionAutoReceive = true, OptionMaxDatagramSize = _options.Size + SecureUdpSession.Overhead }, datagrams, group: null);
        }

        if (Group is null)
            return ClientHandle.Of(new BenchUdpClient(ip, datagrams) { OptionAutoReceive = true, OptionMaxDatagramSize = _options.Size }, datagrams, group: null);

        // A multicast client listens on the group's port on every address and joins the group there.
        var any = ip.AddressFamily == AddressFamily.InterNetworkV6 ? IPAddress.IPv6Any : IPAddress.Any;
        var client = new BenchUdpClient(new IPEndPoint(any, ip.Port), datagrams)
        {
            OptionAutoReceive = true,
            OptionMaxDatagramSize = _options.Size,
            OptionMulticastInterface = MulticastInterface,
        };
        client.SetupMulticast(true);
        return ClientHandle.Of(client, datagrams, ip.Address);
    }

    /// <summary>sudp: the run's keys (--key, or random when server and clients share this process).</summary>
    private BenchKeys SecureKeys => _secureKeys ??= BenchKeys.Create(_options.Key);

    /// <summary>proto: the envelope every client sends, made once (its length is the same in every process).</summary>
    public byte[] Envelope => _envelope ??= ProtoEcho.Envelope(_options.Size);

    /// <summary>The echo client's MESSAGES x SIZE bytes, sent with one send.</summary>
    private byte[] Initial()
    {
        var initial = new byte[_options.InFlight];
        Array.Fill(initial, (byte)'x');
        return initial;
    }

    /// <summary>A UDP port free right now, for the group of a run with server and clients in this process.</summary>
    private static int FreeUdpPort()
    {
        using var probe = new Socket(AddressFamily.InterNetwork, SocketType.Dgram, ProtocolType.Udp);
        probe.Bind(new IPEndPoint(IPAddress.Any, 0));
        return ((IPEndPoint)probe.LocalEndPoint!).Port;
    }

    /// <summary>
    /// The loopback interface's index: multicast between processes of one machine then stays on it
    /// (and works without a multicast route), instead of also going out on the network.
    /// </summary>
    private static int LoopbackIndex(AddressFamily family)
    {
        try
        {
            return family == AddressFamily.InterNetworkV6 ? NetworkInterface.IPv6LoopbackInterfaceIndex : NetworkInterface.LoopbackInterfaceIndex;
        }
        catch (Exception e) when (e is NetworkInformationException or PlatformNotSupportedException)
        {
            return 0;
        }
    }
}
