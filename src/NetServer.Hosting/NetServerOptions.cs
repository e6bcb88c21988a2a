using System;
using System.Collections.Generic;
using System.Net;
using System.Net.Sockets;
using System.Security.Cryptography.X509Certificates;

namespace NetServer.Hosting;

/// <summary>
/// Where and how one hosted server listens, bound from the configuration section
/// <c>NetServer:{name}</c> (see docs/hosting.md for the keys). Validated when the host starts.
/// </summary>
public sealed class NetServerOptions
{
    /// <summary>The address to bind (default <c>127.0.0.1</c>); ignored when <see cref="UnixPath"/> is set.</summary>
    public string Address { get; set; } = "127.0.0.1";

    /// <summary>The TCP port (0 picks a free one; read the bound one from the server's <c>Endpoint</c>).</summary>
    public int Port { get; set; }

    /// <summary>A Unix domain socket path; when set, the server listens there instead of on <see cref="Address"/>:<see cref="Port"/>.</summary>
    public string? UnixPath { get; set; }

    /// <summary>A PKCS#12 (.pfx) certificate file for TLS servers; null for plain servers.</summary>
    public string? CertificatePath { get; set; }

    /// <summary>The password of <see cref="CertificatePath"/>.</summary>
    public string? CertificatePassword { get; set; }

    /// <summary>Most sessions at once (0: no limit); applied to the server's <c>OptionMaxSessions</c>.</summary>
    public int MaxSessions { get; set; }

    /// <summary>The accept queue length; applied to the server's <c>OptionAcceptorBacklog</c> when above 0.</summary>
    public int AcceptorBacklog { get; set; }

    /// <summary>
    /// Whether connections start with a PROXY protocol header (applied to the server's
    /// <c>OptionProxyProtocol</c> when not <see cref="ProxyProtocolMode.Off"/>; stream and message
    /// servers only). See docs/proxy-protocol.md.
    /// </summary>
    public ProxyProtocolMode ProxyProtocol { get; set; }

    /// <summary>The proxies whose headers are believed (addresses, CIDR networks), added to the server's <c>OptionProxyTrustedNetworks</c>.</summary>
    public IList<string> ProxyTrustedNetworks { get; } = new List<string>();

    /// <summary>How long a PROXY header may take; applied to the server's <c>OptionProxyHeaderTimeout</c> when set.</summary>
    public TimeSpan? ProxyHeaderTimeout { get; set; }

    /// <summary>Whether any PROXY protocol key is set.</summary>
    internal bool HasProxySettings => ProxyProtocol != ProxyProtocolMode.Off || ProxyTrustedNetworks.Count != 0 || ProxyHeaderTimeout is not null;

    /// <summary>The endpoint to bind: a <see cref="UnixDomainSocketEndPoint"/> or an <see cref="IPEndPoint"/>.</summary>
    /// <returns>A new endpoint from <see cref="UnixPath"/>, or from <see cref="Address"/> and <see cref="Port"/>.</returns>
    public EndPoint CreateEndPoint() =>
        UnixPath is { Length: > 0 } path ? new UnixDomainSocketEndPoint(path) : new IPEndPoint(IPAddress.Parse(Address), Port);

    /// <summary>The IP endpoint to bind; throws when <see cref="UnixPath"/> is set.</summary>
    /// <returns>A new endpoint from <see cref="Address"/> and <see cref="Port"/>.</returns>
    public IPEndPoint CreateIPEndPoint() => CreateEndPoint() as IPEndPoint ?? throw new InvalidOperationException("This server is configured with a UnixPath, not an IP endpoint.");

    /// <summary>Loads <see cref="CertificatePath"/> into a server <see cref="SslContext"/>.</summary>
    /// <returns>The context for an <c>SslServer</c>, <c>HttpsServer</c> or <c>WssServer</c>.</returns>
    public SslContext CreateSslContext()
    {
        if (CertificatePath is not { Length: > 0 } path)
            throw new InvalidOperationException("This server has no CertificatePath configured.");
        var certificate = X509CertificateLoader.LoadPkcs12FromFile(path, CertificatePassword);
        return new SslContext(System.Security.Authentication.SslProtocols.None, certificate);
    }
}
