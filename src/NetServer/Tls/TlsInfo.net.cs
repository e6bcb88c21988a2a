using System.Net.Security;

namespace NetServer;

public sealed partial class TlsInfo
{
    /// <summary>The negotiated cipher suite (net10.0 build).</summary>
    public TlsCipherSuite CipherSuite { get; private set; }

    partial void SetNegotiated(SslStream stream)
    {
        CipherSuite = stream.NegotiatedCipherSuite;
        if (HostName is null && stream.IsServer && stream.TargetHostName.Length > 0)
            HostName = stream.TargetHostName;
    }
}
