using System.Net;

namespace NetServer.Benchmark;

/// <summary>
/// Makes the run's server and clients for its protocol: the one place that knows that tcp and ssl
/// use an IP endpoint, uds a socket path, and ssl the TLS contexts from the test certificates.
/// </summary>
internal sealed class PeerFactory
{
    private readonly Options _options;
    private readonly SslContext? _serverTls;
    private readonly SslContext? _clientTls;

    private PeerFactory(Options options, string? certificateFolder)
    {
        _options = options;
        CertificateFolder = certificateFolder;
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

    /// <summary>The factory for <paramref name="options"/>; for ssl it loads the certificates, and throws when they cannot be found or read.</summary>
    public static PeerFactory Create(Options options) =>
        new(options, options.Protocol == "ssl" ? TestCertificates.Locate(options.CertificateFolder) : null);

    /// <summary>The server a client role connects to, as given on the command line.</summary>
    public EndPoint Target => _options.Protocol == "uds" ? new UnixEndPointHolder(_options.EffectivePath) : IPEndpoint;

    private IPEndPoint IPEndpoint => new(IPAddress.Parse(_options.Address), _options.EffectivePort);

    public ServerHandle CreateServer()
    {
        var counters = new ServerCounters();
        var echo = _options.Scenario == "echo";
        return _options.Protocol switch
        {
            "tcp" => ServerHandle.Of(new BenchTcpServer(IPEndpoint, echo, counters) { OptionNoDelay = true }, counters),
            "ssl" => ServerHandle.Of(new BenchSslServer(_serverTls!, IPEndpoint, echo, counters) { OptionNoDelay = true }, counters),
            _ => ServerHandle.Of(new BenchUdsServer(_options.EffectivePath, echo, counters), counters),
        };
    }

    public StreamClient CreateClient(EndPoint target, ClientBehavior behavior) => target switch
    {
        IPEndPoint ip when _clientTls is not null => new BenchSslClient(_clientTls, ip, behavior) { OptionNoDelay = true },
        IPEndPoint ip => new BenchTcpClient(ip, behavior) { OptionNoDelay = true },
        _ => new BenchUdsClient(target.ToString()!, behavior),
    };
}

