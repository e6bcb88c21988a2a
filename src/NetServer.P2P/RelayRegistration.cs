using System.Net;
using System.Security.Cryptography.X509Certificates;

namespace NetServer.P2P;

/// <summary>A connection asking to register, as <see cref="RelayServer.OnRegistering"/> sees it (to admit or refuse it).</summary>
public sealed class RelayRegistration
{
    internal RelayRegistration(string name, EndPoint? remoteEndPoint, X509Certificate? clientCertificate)
    {
        Name = name;
        RemoteEndPoint = remoteEndPoint;
        ClientCertificate = clientCertificate;
    }

    /// <summary>The name the peer asks to be known by (checked already: valid text within the length limit; it may be empty).</summary>
    public string Name { get; }

    /// <summary>Where the connection comes from (an IPv4 peer of a dual-stack relay as its IPv4 endpoint, not ::ffff:a.b.c.d).</summary>
    public EndPoint? RemoteEndPoint { get; }

    /// <summary>The certificate the client presented in the TLS handshake (null unless the server's <see cref="SslContext"/> asks for one).</summary>
    public X509Certificate? ClientCertificate { get; }
}
