using System.Collections.Generic;

namespace NetServer.Messaging;

/// <summary>
/// The transport servers and clients that host a protocol (one small class per transport, no
/// protocol logic): TCP for an IP or DNS endpoint, Unix domain sockets for a Unix endpoint, TLS
/// over TCP when an <c>SslContext</c> is given.
/// </summary>
internal static partial class ProtocolHosts
{
    /// <summary>A plain server on <paramref name="endpoint"/>.</summary>
    public static IProtocolHost CreateServer(EndPoint endpoint, IProtocolHostOwner owner) => endpoint switch
    {
        IPEndPoint ip => new TcpHost(ip, owner),
        DnsEndPoint dns => new TcpHost(dns, owner),
        _ when endpoint.AddressFamily == AddressFamily.Unix => new UdsHost(endpoint.ToString()!, owner),
        _ => throw Unsupported(endpoint),
    };

    /// <summary>A plain client for <paramref name="endpoint"/> (its owner attaches the protocol once it holds the client).</summary>
    public static StreamClient CreateClient(EndPoint endpoint) => endpoint switch
    {
        IPEndPoint ip => new TcpClient(ip),
        DnsEndPoint dns => new TcpClient(dns),
        _ when endpoint.AddressFamily == AddressFamily.Unix => new UdsClient(endpoint.ToString()!),
        _ => throw Unsupported(endpoint),
    };

    private static ArgumentException Unsupported(EndPoint? endpoint) => endpoint is null
        ? new ArgumentNullException(nameof(endpoint))
        : new ArgumentException($"Expected an IP, DNS or Unix domain socket endpoint, not {endpoint.GetType().Name}.", nameof(endpoint));

    private sealed class TcpHost : TcpServer, IProtocolHost
    {
        private readonly IProtocolHostOwner _owner;

        public TcpHost(IPEndPoint endpoint, IProtocolHostOwner owner)
            : base(endpoint) => _owner = owner;

        public TcpHost(DnsEndPoint endpoint, IProtocolHostOwner owner)
            : base(endpoint) => _owner = owner;

        public IEnumerable<StreamSession> All => Sessions.Values;

        public StreamSession? Find(Guid id) => FindSession(id);

        protected override TcpSession CreateSession() => new(this) { Protocol = _owner.CreateProtocol() };

        protected override void OnStarted() => _owner.HostStarted();

        protected override void OnStopped() => _owner.HostStopped();

        protected override void OnError(SocketError error) => _owner.HostError(error);
    }

    private sealed class UdsHost : UdsServer, IProtocolHost
    {
        private readonly IProtocolHostOwner _owner;

        public UdsHost(string path, IProtocolHostOwner owner)
            : base(path) => _owner = owner;

        public bool OptionNoDelay { get; set; } // no Nagle delay on a Unix socket: kept for the facade only

        public bool OptionDualMode { get; set; } // no address family on a Unix socket: kept for the facade only

        public IEnumerable<StreamSession> All => Sessions.Values;

        public StreamSession? Find(Guid id) => FindSession(id);

        protected override UdsSession CreateSession() => new(this) { Protocol = _owner.CreateProtocol() };

        protected override void OnStarted() => _owner.HostStarted();

        protected override void OnStopped() => _owner.HostStopped();

        protected override void OnError(SocketError error) => _owner.HostError(error);
    }
}
