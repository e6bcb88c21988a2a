using NetServer.Messaging;

namespace NetServer;

public partial class MessageServer
{
    /// <summary>A TLS server on <paramref name="address"/>:<paramref name="port"/> with the certificate and policy of <paramref name="context"/>.</summary>
    public MessageServer(SslContext context, IPAddress address, int port)
        : this(context, new IPEndPoint(address, port))
    {
    }

    /// <summary>A TLS server on <paramref name="endpoint"/> (an IP or DNS endpoint) with the certificate and policy of <paramref name="context"/>.</summary>
    public MessageServer(SslContext context, EndPoint endpoint)
        : this(owner => ProtocolHosts.CreateServer(context ?? throw new ArgumentNullException(nameof(context)), endpoint, owner))
    {
    }
}
