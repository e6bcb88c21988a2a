using System.Collections.Generic;
using System.Net.Security;
using System.Security.Authentication;
using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;

namespace NetServer;

/// <summary>
/// TLS settings shared by an <see cref="SslServer"/> and its sessions, or by <see cref="SslClient"/>s:
/// protocols, certificates (one, or one per host name for SNI), how the peer's certificate is
/// validated, client-certificate mode, ALPN protocols, cipher suites (net10.0 build) and the handshake timeout.
/// </summary>
/// <remarks>
/// <para>Secure by default: TLS 1.2 and 1.3 only, AEAD cipher suites only (net10.0 build on Linux
/// and macOS, see <c>CipherSuitesPolicy</c>), and a peer certificate must chain to a trusted
/// root (the system's, or one of <see cref="TrustedCertificateAuthorities"/>, through the
/// intermediates the peer sends), be within its validity period, be meant for its use (server or
/// client authentication) and, on a client, match the host name (<see cref="SslClient.TargetHost"/>).
/// Accepting any certificate takes an explicit <see cref="DangerousAcceptAnyCertificate"/> or a
/// <see cref="CertificateValidationCallback"/> of your own, which then decides alone. Accepting any
/// certificate never waives a client certificate that <see cref="SslClientCertificateMode.Required"/>
/// asks for.</para>
/// <para>Change a context before the servers and clients that use it start; a handshake reads it
/// while it runs.</para>
/// </remarks>
public partial class SslContext
{
    /// <summary>What <see cref="SslProtocols.None"/> stands for: TLS 1.2 and 1.3 (0x3000; netstandard2.1 has no name for it), whatever the system would also allow.</summary>
    private const SslProtocols DefaultProtocols = SslProtocols.Tls12 | (SslProtocols)0x3000;

    private static readonly Oid s_serverAuthentication = new("1.3.6.1.5.5.7.3.1");
    private static readonly Oid s_clientAuthentication = new("1.3.6.1.5.5.7.3.2");

    private readonly Dictionary<string, X509Certificate> _hostCertificates = new(StringComparer.OrdinalIgnoreCase);
    private TimeSpan _handshakeTimeout = TimeSpan.FromSeconds(10);
    private RemoteCertificateValidationCallback? _validateServer;
    private RemoteCertificateValidationCallback? _validateClient;
    private ServerCertificateSelectionCallback? _selectCertificate;

    /// <summary>A context for TLS 1.2 and 1.3 with no certificate (a client that presents none).</summary>
    public SslContext()
        : this(SslProtocols.None)
    {
    }

    /// <summary>A context with the given protocols (<see cref="SslProtocols.None"/>: TLS 1.2 and 1.3).</summary>
    public SslContext(SslProtocols protocols) => Protocols = protocols;

    /// <summary>A context whose peer certificates are validated by <paramref name="certificateValidationCallback"/> alone.</summary>
    public SslContext(SslProtocols protocols, RemoteCertificateValidationCallback certificateValidationCallback)
        : this(protocols) => CertificateValidationCallback = certificateValidationCallback;

    /// <summary>A context with a certificate (a server's, or a client's for mutual authentication).</summary>
    public SslContext(SslProtocols protocols, X509Certificate certificate)
        : this(protocols) => Certificate = certificate;

    /// <summary>A context with a certificate and a validation callback of your own.</summary>
    public SslContext(SslProtocols protocols, X509Certificate certificate, RemoteCertificateValidationCallback certificateValidationCallback)
        : this(protocols, certificate) => CertificateValidationCallback = certificateValidationCallback;

    /// <summary>A context with certificates (a client picks among them; a server presents the first with a private key, see <see cref="Certificates"/>).</summary>
    public SslContext(SslProtocols protocols, X509Certificate2Collection certificates)
        : this(protocols) => Certificates = certificates;

    /// <summary>A context with certificates and a validation callback of your own.</summary>
    public SslContext(SslProtocols protocols, X509Certificate2Collection certificates, RemoteCertificateValidationCallback certificateValidationCallback)
        : this(protocols, certificates) => CertificateValidationCallback = certificateValidationCallback;

    /// <summary>
    /// Allowed protocols. <see cref="SslProtocols.None"/> (the default, and what this property keeps
    /// saying) means TLS 1.2 and 1.3: those two are asked of the system, so an older version stays off
    /// even where the system's own policy would allow it. Name versions here only to narrow that.
    /// </summary>
    public SslProtocols Protocols { get; set; }

    /// <summary>The certificate this side presents: a server's default certificate, or a client's certificate.</summary>
    public X509Certificate? Certificate { get; set; }

    /// <summary>
    /// Certificates this side may present. A client offers them. A server presents
    /// <see cref="Certificate"/>, or else the first of these with a private key; on the net10.0
    /// build the others are its chain: the intermediates among them that lead from the presented
    /// certificate (also one from <see cref="AddServerCertificate"/>) towards its root are sent
    /// with it. The netstandard2.1 build sends the certificate with only what the system finds in
    /// its own certificate stores.
    /// </summary>
    public X509Certificate2Collection? Certificates { get; set; }

    /// <summary>
    /// Decides alone whether a peer certificate is accepted (instead of the default validation).
    /// Use it for pinning or custom policies; returning true for everything accepts any certificate.
    /// On a server that asks for client certificates it is also asked when a client sent none
    /// (certificate null, <see cref="SslPolicyErrors.RemoteCertificateNotAvailable"/>), and decides
    /// that too, whatever <see cref="ClientCertificateMode"/> says.
    /// </summary>
    public RemoteCertificateValidationCallback? CertificateValidationCallback { get; set; }

    /// <summary>Whether a server requires a client certificate (<see cref="ClientCertificateMode"/> <see cref="SslClientCertificateMode.Required"/>).</summary>
    public bool ClientCertificateRequired
    {
        get => ClientCertificateMode == SslClientCertificateMode.Required;
        set => ClientCertificateMode = value ? SslClientCertificateMode.Required : SslClientCertificateMode.None;
    }

    /// <summary>Whether a server asks clients for a certificate, and whether it insists (default: it does not ask).</summary>
    public SslClientCertificateMode ClientCertificateMode { get; set; }

    /// <summary>
    /// Roots trusted besides the system's: a peer certificate that chains to one of these is
    /// accepted (if it is valid in every other way). Put your private or test CA here rather than
    /// accepting any certificate.
    /// </summary>
    public X509Certificate2Collection TrustedCertificateAuthorities { get; } = new();

    /// <summary>
    /// Accept any peer certificate: untrusted, expired, for another host. This turns off the
    /// protection TLS gives against an attacker in the middle; use it only for throwaway tests.
    /// It accepts any certificate, not its absence: a server whose <see cref="ClientCertificateMode"/>
    /// is <see cref="SslClientCertificateMode.Required"/> still refuses a client that sends none.
    /// </summary>
    public bool DangerousAcceptAnyCertificate { get; set; }

    /// <summary>Check certificate revocation (online) during validation (default false).</summary>
    public bool CheckCertificateRevocation { get; set; }

    /// <summary>How long a handshake may take before the connection is closed (default 10 s; <see cref="Timeout.InfiniteTimeSpan"/> = no limit).</summary>
    public TimeSpan HandshakeTimeout
    {
        get => _handshakeTimeout;
        set
        {
            if (value <= TimeSpan.Zero && value != Timeout.InfiniteTimeSpan)
                ThrowHelper.ThrowArgumentOutOfRange(nameof(HandshakeTimeout), "The timeout must be positive or infinite.");
            _handshakeTimeout = value;
        }
    }

    /// <summary>ALPN protocols in order of preference (a server picks the first the client also offers); empty = no ALPN.</summary>
    public IList<SslApplicationProtocol> ApplicationProtocols { get; } = new List<SslApplicationProtocol>();

    /// <summary>
    /// A server's certificate chosen by the host name the client asked for (SNI), consulted before
    /// the host map (<see cref="AddServerCertificate"/>) and <see cref="Certificate"/>. Return null to fall back to those.
    /// </summary>
    public ServerCertificateSelectionCallback? ServerCertificateSelectionCallback { get; set; }

    /// <summary>
    /// Serves <paramref name="certificate"/> to clients that ask for <paramref name="hostName"/>
    /// (SNI). A name like <c>*.example.com</c> covers one label below example.com. Clients that send
    /// no name, or a name not in the map, get <see cref="Certificate"/>.
    /// </summary>
    public void AddServerCertificate(string hostName, X509Certificate certificate)
    {
        if (string.IsNullOrEmpty(hostName))
            ThrowHelper.ThrowArgumentNull(nameof(hostName));
        if (certificate is null)
            ThrowHelper.ThrowArgumentNull(nameof(certificate));
        lock (_hostCertificates)
        {
            _hostCertificates[hostName] = certificate;
            ForgetCertificateContexts();
        }
    }

    /// <summary>Drops the net10.0 build's certificate contexts, whose certificates may be gone (the caller holds the host map's lock).</summary>
    partial void ForgetCertificateContexts();

    /// <summary>Whether a server has a certificate to present (its own, a host map or a selection callback).</summary>
    internal bool HasServerCertificate
    {
        get
        {
            lock (_hostCertificates)
                return Certificate is not null || Certificates is { Count: > 0 } || _hostCertificates.Count > 0 || ServerCertificateSelectionCallback is not null;
        }
    }

    /// <summary>The protocols a handshake allows: <see cref="Protocols"/>, or TLS 1.2 and 1.3 for <see cref="SslProtocols.None"/>.</summary>
    internal SslProtocols EnabledProtocols => Protocols == SslProtocols.None ? DefaultProtocols : Protocols;

    /// <summary>Runs a server's handshake on <paramref name="stream"/> with these settings.</summary>
    internal Task AuthenticateAsServerAsync(SslStream stream, CancellationToken cancellationToken)
    {
        Task? authentication = null;
        AuthenticateAsServerWithChain(stream, cancellationToken, ref authentication);
        return authentication ?? stream.AuthenticateAsServerAsync(CreateServerOptions(), cancellationToken);
    }

    /// <summary>
    /// The net10.0 build's server handshake, which sends the certificate's intermediates from
    /// <see cref="Certificates"/> (SslContext.net.cs). netstandard2.1 has no
    /// SslStreamCertificateContext: there the certificate goes out with what the system's
    /// certificate stores add to it.
    /// </summary>
    partial void AuthenticateAsServerWithChain(SslStream stream, CancellationToken cancellationToken, ref Task? authentication);

    internal SslServerAuthenticationOptions CreateServerOptions()
    {
        var options = CreateServerOptionsWithoutCertificate();
        if (IsSingleCertificate(out var single))
            options.ServerCertificate = single;
        else
            options.ServerCertificateSelectionCallback = _selectCertificate ??= SelectServerCertificate;
        return options;
    }

    /// <summary>Everything of a server's options but the certificate.</summary>
    private SslServerAuthenticationOptions CreateServerOptionsWithoutCertificate()
    {
        var options = new SslServerAuthenticationOptions
        {
            EnabledSslProtocols = EnabledProtocols,
            ClientCertificateRequired = ClientCertificateMode != SslClientCertificateMode.None,
            CertificateRevocationCheckMode = CheckCertificateRevocation ? X509RevocationMode.Online : X509RevocationMode.NoCheck,
            RemoteCertificateValidationCallback = _validateClient ??= (sender, certificate, chain, errors) => Validate(sender, certificate, chain, errors, remoteIsServer: false),
        };

        if (ApplicationProtocols.Count > 0)
            options.ApplicationProtocols = new List<SslApplicationProtocol>(ApplicationProtocols);
        ApplyCipherSuites(options);
        return options;
    }

    /// <summary>
    /// The net10.0 build's cipher suites (SslContext.CipherSuites.net.cs: AEAD only unless told
    /// otherwise). netstandard2.1 has no CipherSuitesPolicy: there the system's defaults apply.
    /// </summary>
    partial void ApplyCipherSuites(SslServerAuthenticationOptions options);

    /// <inheritdoc cref="ApplyCipherSuites(SslServerAuthenticationOptions)"/>
    partial void ApplyCipherSuites(SslClientAuthenticationOptions options);

    internal SslClientAuthenticationOptions CreateClientOptions(string targetHost)
    {
        var options = new SslClientAuthenticationOptions
        {
            TargetHost = targetHost,
            EnabledSslProtocols = EnabledProtocols,
            CertificateRevocationCheckMode = CheckCertificateRevocation ? X509RevocationMode.Online : X509RevocationMode.NoCheck,
            RemoteCertificateValidationCallback = _validateServer ??= (sender, certificate, chain, errors) => Validate(sender, certificate, chain, errors, remoteIsServer: true),
        };

        if (Certificates is { Count: > 0 })
            options.ClientCertificates = Certificates;
        else if (Certificate is not null)
            options.ClientCertificates = new X509CertificateCollection { Certificate };
        AttachClientChain(options);
        if (ApplicationProtocols.Count > 0)
            options.ApplicationProtocols = new List<SslApplicationProtocol>(ApplicationProtocols);
        ApplyCipherSuites(options);
        return options;
    }

    /// <summary>A client that has one certificate of its own plus others (its chain) sends them along (net10.0).</summary>
    partial void AttachClientChain(SslClientAuthenticationOptions options);

    /// <summary>A server's certificate for clients not given another: <see cref="Certificate"/>, or the first of <see cref="Certificates"/> with a private key (else the first).</summary>
    private X509Certificate? DefaultServerCertificate
    {
        get
        {
            if (Certificate is not null)
                return Certificate;
            if (Certificates is not { Count: > 0 } certificates)
                return null;
            foreach (var certificate in certificates)
            {
                if (certificate.HasPrivateKey)
                    return certificate;
            }

            return certificates[0]; // the handshake reports the missing key
        }
    }

    /// <summary>One certificate for every client (no SNI choice): handed to the handshake directly.</summary>
    private bool IsSingleCertificate(out X509Certificate? certificate)
    {
        certificate = DefaultServerCertificate;
        lock (_hostCertificates)
            return certificate is not null && _hostCertificates.Count == 0 && ServerCertificateSelectionCallback is null;
    }

    private X509Certificate SelectServerCertificate(object sender, string? hostName)
    {
        if (ServerCertificateSelectionCallback?.Invoke(sender, hostName) is { } chosen)
            return chosen;
        if (!string.IsNullOrEmpty(hostName))
        {
            lock (_hostCertificates)
            {
                if (_hostCertificates.TryGetValue(hostName!, out var exact))
                    return exact;
                var dot = hostName!.IndexOf('.');
#pragma warning disable CA1845 // netstandard2.1 has no span overload of string.Concat; this runs once per handshake.
                if (dot > 0 && _hostCertificates.TryGetValue("*" + hostName.Substring(dot), out var wildcard))
                    return wildcard;
#pragma warning restore CA1845
            }
        }

        return DefaultServerCertificate
            ?? throw new AuthenticationException($"No server certificate for host name '{hostName}': set SslContext.Certificate or add one for this name.");
    }

    /// <summary>The default validation (see the class remarks), unless a callback of the user's decides.</summary>
    private bool Validate(object sender, X509Certificate? certificate, X509Chain? chain, SslPolicyErrors errors, bool remoteIsServer)
    {
        if (CertificateValidationCallback is { } callback)
            return callback(sender, certificate, chain, errors);

        // Before the Dangerous flag: accepting any certificate is not accepting none.
        if (certificate is null)
            return !remoteIsServer && ClientCertificateMode != SslClientCertificateMode.Required; // an optional client certificate may be missing
        if (DangerousAcceptAnyCertificate)
            return true;
        if ((errors & SslPolicyErrors.RemoteCertificateNameMismatch) != 0)
            return false;
        if ((errors & SslPolicyErrors.RemoteCertificateChainErrors) == 0)
            return true;
        return ChainsToTrustedAuthority(certificate, chain, remoteIsServer);
    }

    /// <summary>
    /// Builds the peer's chain again with <see cref="TrustedCertificateAuthorities"/> as extra
    /// roots and the intermediates the peer sent (which the handshake's <paramref name="peerChain"/>
    /// holds); true if it ends in one of those roots and has no other fault.
    /// </summary>
    private bool ChainsToTrustedAuthority(X509Certificate certificate, X509Chain? peerChain, bool remoteIsServer)
    {
        if (TrustedCertificateAuthorities.Count == 0)
            return false;
        using var chain = new X509Chain();
        chain.ChainPolicy.RevocationMode = CheckCertificateRevocation ? X509RevocationMode.Online : X509RevocationMode.NoCheck;
        chain.ChainPolicy.VerificationFlags = X509VerificationFlags.AllowUnknownCertificateAuthority;
        chain.ChainPolicy.ExtraStore.AddRange(TrustedCertificateAuthorities);
        if (peerChain is not null)
        {
            // What the peer sent is in the ExtraStore of the handshake's chain; what that chain
            // could build of it, in its elements. Both belong to the handshake, which disposes them.
            chain.ChainPolicy.ExtraStore.AddRange(peerChain.ChainPolicy.ExtraStore);
            foreach (var element in peerChain.ChainElements)
                chain.ChainPolicy.ExtraStore.Add(element.Certificate);
        }

        chain.ChainPolicy.ApplicationPolicy.Add(remoteIsServer ? s_serverAuthentication : s_clientAuthentication);
        var leaf = certificate as X509Certificate2 ?? new X509Certificate2(certificate);
        try
        {
            chain.Build(leaf);
            foreach (var status in chain.ChainStatus)
            {
                if (status.Status is not (X509ChainStatusFlags.NoError or X509ChainStatusFlags.UntrustedRoot))
                    return false;
            }

            var root = chain.ChainElements[chain.ChainElements.Count - 1].Certificate;
            foreach (var trusted in TrustedCertificateAuthorities)
            {
                if (trusted.RawData.AsSpan().SequenceEqual(root.RawData))
                    return true;
            }

            return false;
        }
        finally
        {
            // The chain's elements are its own copies, except where a platform hands back the
            // instance it was given: those belong to the caller, the handshake or the trusted set.
            foreach (var element in chain.ChainElements)
            {
                if (!ReferenceEquals(element.Certificate, leaf) && !IsInstanceOf(element.Certificate, chain.ChainPolicy.ExtraStore))
                    element.Certificate.Dispose();
            }

            if (!ReferenceEquals(leaf, certificate))
                leaf.Dispose();
        }
    }

    private static bool IsInstanceOf(X509Certificate2 certificate, X509Certificate2Collection collection)
    {
        foreach (var member in collection)
        {
            if (ReferenceEquals(member, certificate))
                return true;
        }

        return false;
    }
}
