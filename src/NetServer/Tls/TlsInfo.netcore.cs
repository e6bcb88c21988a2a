using System.Net.Security;
using System.Security.Authentication;
using System.Security.Cryptography.X509Certificates;

namespace NetServer;

/// <summary>What a TLS handshake negotiated, as seen by one side of the connection.</summary>
public sealed partial class TlsInfo
{
    internal TlsInfo(SslStream stream, string? hostName)
    {
        Protocol = stream.SslProtocol;
        ApplicationProtocol = stream.NegotiatedApplicationProtocol;
        RemoteCertificate = stream.RemoteCertificate;
        HostName = hostName;
        SetNegotiated(stream);
    }

    /// <summary>The protocol version (TLS 1.2 or 1.3).</summary>
    public SslProtocols Protocol { get; }

    /// <summary>The ALPN protocol both sides agreed on (default when none).</summary>
    public SslApplicationProtocol ApplicationProtocol { get; }

    /// <summary>The certificate the peer presented (null when a client presented none).</summary>
    public X509Certificate? RemoteCertificate { get; }

    /// <summary>
    /// On a client, the name it validated the server's certificate against; on a server, the host
    /// name the client asked for (SNI; null if it sent none, and always null on the netstandard2.1 build).
    /// </summary>
    public string? HostName { get; private set; }

    /// <summary>What only newer runtimes tell (net10.0 build).</summary>
    partial void SetNegotiated(SslStream stream);
}
