namespace NetServer;

/// <summary>Whether a TLS server asks its clients for a certificate.</summary>
public enum SslClientCertificateMode
{
    /// <summary>Clients are not asked for a certificate.</summary>
    None = 0,

    /// <summary>Clients are asked; one that presents none is accepted, one that presents an invalid one is refused.</summary>
    Optional,

    /// <summary>Clients must present a valid certificate (mutual authentication).</summary>
    Required,
}
