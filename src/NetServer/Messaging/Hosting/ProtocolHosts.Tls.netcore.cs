using System.Collections.Generic;

namespace NetServer.Messaging;

internal static partial class ProtocolHosts
{
    /// <summary>A TLS server on <paramref name="endpoint"/> (an IP or DNS endpoint).</summary>
    public static IProtocolHost CreateServer(SslContext context, EndPoint endpoint, IProtocolHostOwner owner) => endpoint switch
    {
        IPEndPoint ip => new SslHost(context, ip, owner),
        DnsEndPoint dns => new SslHost(context, dns, owner),
        _ => throw Unsupported(endpoint),
    };

    /// <summary>A TLS client for <paramref name="endpoint"/> (its owner attaches the protocol once it holds the client).</summary>
    public static StreamClient CreateClient(SslContext context, EndPoint endpoint) => endpoint switch
    {
        IPEndPoint ip => new SslClient(context, ip),
        DnsEndPoint dns => new SslClient(context, dns),
        _ => throw Unsupported(endpoint),
    };

    private sealed class SslHost : SslServer, IProtocolHost
    {
        private readonly IProtocolHostOwner _owner;

        public SslHost(SslContext context, IPEndPoint endpoint, IProtocolHostOwner owner)
            : base(context, endpoint) => _owner = owner;

        public SslHost(SslContext context, DnsEndPoint endpoint, IProtocolHostOwner owner)
            : base(context, endpoint) => _owner = owner;

        public IEnumerable<StreamSession> All => Sessions.Values;

        public StreamSession? Find(Guid id) => FindSession(id);

        protected override SslSession CreateSession() => new(this) { Protocol = _owner.CreateProtocol() };

        protected override void OnStarted() => _owner.HostStarted();

        protected override void OnStopped() => _owner.HostStopped();

        protected override void OnError(SocketError error) => _owner.HostError(error);
    }
}
