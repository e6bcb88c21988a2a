using NetServer.Messaging;

namespace NetServer;

public partial class MessageClient
{
    /// <summary>A TLS client for <paramref name="address"/>:<paramref name="port"/>, validating the server with <paramref name="context"/> (on by default).</summary>
    public MessageClient(SslContext context, IPAddress address, int port)
        : this(context, new IPEndPoint(address, port))
    {
    }

    /// <summary>A TLS client for an IP address or host name given as text (the name is also the one the server certificate must match).</summary>
    public MessageClient(SslContext context, string address, int port)
        : this(context, EndPoints.Parse(address, port))
    {
    }

    /// <summary>A TLS client for <paramref name="endpoint"/> (an IP or DNS endpoint).</summary>
    public MessageClient(SslContext context, EndPoint endpoint)
        : this(_ => ProtocolHosts.CreateClient(context ?? throw new ArgumentNullException(nameof(context)), endpoint))
    {
    }
}
