using System;
using System.Collections.Generic;
using System.IO;
using System.Net;
using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;

namespace NetServer.Tests.Infrastructure;

/// <summary>
/// Certificates made in-process for the TLS tests (ECDSA P-256, quick to make): a test CA, a
/// server certificate for localhost/127.0.0.1/::1 and a client certificate issued by it, the same
/// two issued one level down by an intermediate CA (a chain root, intermediate, leaf), and the bad
/// ones the failure tests need (another CA, expired, another host name).
/// </summary>
public static class TestCertificates
{
    private static readonly Lazy<X509Certificate2> s_authority = new(() => CreateAuthority("NetServer Tests CA"));
    private static readonly Lazy<X509Certificate2> s_otherAuthority = new(() => CreateAuthority("Unknown Tests CA"));
    private static readonly Lazy<X509Certificate2> s_server = new(() => Issue(Authority, "localhost", server: true));
    private static readonly Lazy<X509Certificate2> s_client = new(() => Issue(Authority, "NetServer Tests Client", server: false));
    private static readonly Lazy<X509Certificate2> s_intermediate = new(() => CreateAuthority("NetServer Tests Intermediate CA", Authority));
    private static readonly Lazy<X509Certificate2> s_chainedServer = new(() => Issue(Intermediate, "localhost", server: true));
    private static readonly Lazy<X509Certificate2> s_chainedClient = new(() => Issue(Intermediate, "NetServer Tests Chained Client", server: false));
    private static readonly Lazy<X509Certificate2> s_untrustedServer = new(() => Issue(OtherAuthority, "localhost", server: true));
    private static readonly Lazy<X509Certificate2> s_untrustedClient = new(() => Issue(OtherAuthority, "Unknown Tests Client", server: false));

    // Within the CA's validity (it starts a day back), but over an hour ago.
    private static readonly Lazy<X509Certificate2> s_expiredServer = new(() =>
        Issue(Authority, "localhost", server: true, notBefore: DateTimeOffset.UtcNow.AddHours(-12), notAfter: DateTimeOffset.UtcNow.AddHours(-1)));

    private static readonly Lazy<X509Certificate2> s_otherHostServer = new(() => Issue(Authority, "other.example", server: true, hostNames: ["other.example"]));

    /// <summary>The CA both sides trust.</summary>
    public static X509Certificate2 Authority => s_authority.Value;

    /// <summary>A CA nobody trusts.</summary>
    public static X509Certificate2 OtherAuthority => s_otherAuthority.Value;

    /// <summary>Server certificate (localhost, 127.0.0.1, ::1) issued by <see cref="Authority"/>.</summary>
    public static X509Certificate2 Server => s_server.Value;

    /// <summary>Client certificate issued by <see cref="Authority"/>.</summary>
    public static X509Certificate2 Client => s_client.Value;

    /// <summary>A CA issued by <see cref="Authority"/>, trusted by nobody on its own: a peer must send it along.</summary>
    public static X509Certificate2 Intermediate => s_intermediate.Value;

    /// <summary>Server certificate (localhost, 127.0.0.1, ::1) issued by <see cref="Intermediate"/>.</summary>
    public static X509Certificate2 ChainedServer => s_chainedServer.Value;

    /// <summary>Client certificate issued by <see cref="Intermediate"/>.</summary>
    public static X509Certificate2 ChainedClient => s_chainedClient.Value;

    /// <summary>Server certificate (localhost, 127.0.0.1, ::1) issued by <see cref="OtherAuthority"/>.</summary>
    public static X509Certificate2 UntrustedServer => s_untrustedServer.Value;

    /// <summary>Client certificate issued by <see cref="OtherAuthority"/>.</summary>
    public static X509Certificate2 UntrustedClient => s_untrustedClient.Value;

    /// <summary>Server certificate (localhost, 127.0.0.1, ::1) issued by <see cref="Authority"/> whose validity ended an hour ago.</summary>
    public static X509Certificate2 ExpiredServer => s_expiredServer.Value;

    /// <summary>Server certificate issued by <see cref="Authority"/> for "other.example" only.</summary>
    public static X509Certificate2 OtherHostServer => s_otherHostServer.Value;

    /// <summary>A context for a server presenting <see cref="Server"/> and trusting <see cref="Authority"/> for client certificates.</summary>
    public static SslContext ServerContext(SslClientCertificateMode mode = SslClientCertificateMode.None)
    {
        var context = new SslContext(default(System.Security.Authentication.SslProtocols), Server) { ClientCertificateMode = mode };
        context.TrustedCertificateAuthorities.Add(Authority);
        return context;
    }

    /// <summary>A context for a client trusting <see cref="Authority"/>, optionally presenting a certificate.</summary>
    public static SslContext ClientContext(X509Certificate2? certificate = null)
    {
        var context = new SslContext { Certificate = certificate };
        context.TrustedCertificateAuthorities.Add(Authority);
        return context;
    }

    /// <summary>A root CA (self-signed, 5 years), or an intermediate CA issued by <paramref name="issuer"/> (4 years, within its issuer's validity).</summary>
    public static X509Certificate2 CreateAuthority(string name, X509Certificate2? issuer = null)
    {
        using var key = ECDsa.Create(ECCurve.NamedCurves.nistP256);
        var request = new CertificateRequest("CN=" + name, key, HashAlgorithmName.SHA256);
        request.CertificateExtensions.Add(new X509BasicConstraintsExtension(true, false, 0, true));
        request.CertificateExtensions.Add(new X509KeyUsageExtension(X509KeyUsageFlags.KeyCertSign | X509KeyUsageFlags.CrlSign, true));
        request.CertificateExtensions.Add(new X509SubjectKeyIdentifierExtension(request.PublicKey, false));
        if (issuer is null)
        {
            using var root = request.CreateSelfSigned(DateTimeOffset.UtcNow.AddDays(-1), DateTimeOffset.UtcNow.AddYears(5));
            return Reload(root);
        }

        using var signed = request.Create(issuer, DateTimeOffset.UtcNow.AddDays(-1), DateTimeOffset.UtcNow.AddYears(4), NewSerial());
        using var withKey = signed.CopyWithPrivateKey(key);
        return Reload(withKey);
    }

    /// <summary>Issues a leaf certificate; <paramref name="hostNames"/> default to localhost and the loopback addresses.</summary>
    public static X509Certificate2 Issue(
        X509Certificate2 issuer,
        string name,
        bool server,
        DateTimeOffset? notBefore = null,
        DateTimeOffset? notAfter = null,
        IEnumerable<string>? hostNames = null)
    {
        using var key = ECDsa.Create(ECCurve.NamedCurves.nistP256);
        var request = new CertificateRequest("CN=" + name, key, HashAlgorithmName.SHA256);
        request.CertificateExtensions.Add(new X509BasicConstraintsExtension(false, false, 0, false));
        request.CertificateExtensions.Add(new X509KeyUsageExtension(X509KeyUsageFlags.DigitalSignature, true));
        request.CertificateExtensions.Add(new X509EnhancedKeyUsageExtension(
            new OidCollection { new Oid(server ? "1.3.6.1.5.5.7.3.1" : "1.3.6.1.5.5.7.3.2") }, false));
        if (server)
        {
            var names = new SubjectAlternativeNameBuilder();
            foreach (var host in hostNames ?? ["localhost", "127.0.0.1", "::1"])
            {
                if (IPAddress.TryParse(host, out var address))
                    names.AddIpAddress(address);
                else
                    names.AddDnsName(host);
            }

            request.CertificateExtensions.Add(names.Build());
        }

        var from = notBefore ?? DateTimeOffset.UtcNow.AddDays(-1);
        var to = notAfter ?? DateTimeOffset.UtcNow.AddYears(2);
        using var signed = request.Create(issuer, from, to, NewSerial());
        using var withKey = signed.CopyWithPrivateKey(key);
        return Reload(withKey);
    }

    /// <summary>Writes <paramref name="certificate"/> as PEM, and its private key (if <paramref name="keyPath"/> is given) as unencrypted PKCS#8 PEM, for tools such as <c>openssl</c>.</summary>
    public static void ExportPem(X509Certificate2 certificate, string certificatePath, string? keyPath = null)
    {
        File.WriteAllText(certificatePath, certificate.ExportCertificatePem());
        if (keyPath is null)
            return;
        using var key = certificate.GetECDsaPrivateKey() ?? throw new InvalidOperationException($"{certificate.Subject} has no ECDSA private key.");
        File.WriteAllText(keyPath, key.ExportPkcs8PrivateKeyPem());
    }

    /// <summary>A random positive 96-bit serial number.</summary>
    private static byte[] NewSerial()
    {
        var serial = new byte[12];
        RandomNumberGenerator.Fill(serial);
        serial[0] &= 0x7F;
        return serial;
    }

    /// <summary>A PKCS#12 round trip, so the private key is a persisted one SslStream can use on every platform.</summary>
    private static X509Certificate2 Reload(X509Certificate2 certificate) =>
        X509CertificateLoader.LoadPkcs12(certificate.Export(X509ContentType.Pfx), null);
}
