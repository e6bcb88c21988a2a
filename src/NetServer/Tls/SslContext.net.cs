using System.Collections.Generic;
using System.Net.Security;
using System.Security.Cryptography.X509Certificates;

namespace NetServer;

public partial class SslContext
{
    // Built once per certificate (a chain build each), and dropped when Certificate or Certificates
    // change (a renewed certificate between a Stop and a Start) or the host map does. Only our own
    // certificates get one, so the cache is as small as the context.
    private readonly Dictionary<X509Certificate, SslStreamCertificateContext> _certificateContexts = new(ReferenceEqualityComparer.Instance);
    private X509Certificate? _contextsForCertificate;
    private X509Certificate2[] _contextsForCertificates = [];
    private ServerOptionsSelectionCallback? _selectOptions;

    partial void AuthenticateAsServerWithChain(SslStream stream, CancellationToken cancellationToken, ref Task? authentication) =>
        authentication = stream.AuthenticateAsServerAsync(_selectOptions ??= SelectServerOptions, null, cancellationToken);

    /// <summary>The options for one client: its certificate (by SNI) as a context that carries the intermediates from <see cref="Certificates"/>.</summary>
    private ValueTask<SslServerAuthenticationOptions> SelectServerOptions(SslStream stream, SslClientHelloInfo hello, object? state, CancellationToken cancellationToken)
    {
        var options = CreateServerOptionsWithoutCertificate();
        var certificate = SelectServerCertificate(stream, hello.ServerName);
        if (CertificateContextFor(certificate) is { } context)
            options.ServerCertificateContext = context;
        else
            options.ServerCertificate = certificate;
        return new ValueTask<SslServerAuthenticationOptions>(options);
    }

    /// <summary>
    /// A client certificate with its key (<see cref="Certificate"/>, or the only one in
    /// <see cref="Certificates"/> that has one) goes out with the other members of
    /// <see cref="Certificates"/> as its chain, so a server that trusts only the root accepts it.
    /// With several certificates that have keys, the system picks one by the issuers the server
    /// asks for, and no chain is added.
    /// </summary>
    partial void AttachClientChain(SslClientAuthenticationOptions options)
    {
        if (Certificates is not { Count: > 0 } certificates)
            return;
        var leaf = Certificate as X509Certificate2 is { HasPrivateKey: true } own ? own : null;
        if (leaf is null)
        {
            foreach (var member in certificates)
            {
                if (!member.HasPrivateKey)
                    continue;
                if (leaf is not null)
                    return; // several candidates: leave the choice to the system
                leaf = member;
            }
        }

        if (leaf is not null && certificates.Count > (ReferenceEquals(leaf, Certificate) ? 0 : 1) && CertificateContextFor(leaf) is { } context)
        {
            options.ClientCertificates = null;
            options.ClientCertificateContext = context;
        }
    }

    /// <summary>
    /// The context for one of our certificates (<see cref="Certificate"/>, one of <see cref="Certificates"/>
    /// or of the host map) that has its private key; null for any other, such as one a selection
    /// callback made, which then goes out with what the system's stores add to it.
    /// </summary>
    private SslStreamCertificateContext? CertificateContextFor(X509Certificate certificate)
    {
        if (certificate is not X509Certificate2 { HasPrivateKey: true } leaf)
            return null;

        var certificates = Certificates;
        lock (_hostCertificates)
        {
            if (!ReferenceEquals(_contextsForCertificate, Certificate) || !IsSnapshotOf(_contextsForCertificates, certificates))
            {
                _certificateContexts.Clear();
                _contextsForCertificate = Certificate;
                _contextsForCertificates = certificates is null ? [] : [.. certificates];
            }

            if (_certificateContexts.TryGetValue(leaf, out var cached))
                return cached;
            if (!IsOwnCertificate(leaf))
                return null;
        }

        // Outside the lock: a chain build. Two handshakes racing here build the same context twice.
        var additional = new X509Certificate2Collection();
        if (certificates is not null)
        {
            foreach (var member in certificates)
            {
                if (!ReferenceEquals(member, leaf))
                    additional.Add(member);
            }
        }

        // offline: the chain comes from what we were given, never from a download during a handshake.
        var context = SslStreamCertificateContext.Create(leaf, additional, offline: true);
        lock (_hostCertificates)
            _certificateContexts[leaf] = context;
        return context;
    }

    /// <summary>Whether <paramref name="certificate"/> is one the context was given (the caller holds the host map's lock).</summary>
    private bool IsOwnCertificate(X509Certificate certificate)
    {
        if (ReferenceEquals(certificate, Certificate))
            return true;
        if (Certificates is { } certificates)
        {
            foreach (var member in certificates)
            {
                if (ReferenceEquals(member, certificate))
                    return true;
            }
        }

        foreach (var hosted in _hostCertificates.Values)
        {
            if (ReferenceEquals(hosted, certificate))
                return true;
        }

        return false;
    }

    private static bool IsSnapshotOf(X509Certificate2[] snapshot, X509Certificate2Collection? certificates)
    {
        if (snapshot.Length != (certificates?.Count ?? 0))
            return false;
        for (var i = 0; i < snapshot.Length; i++)
        {
            if (!ReferenceEquals(snapshot[i], certificates![i]))
                return false;
        }

        return true;
    }

    partial void ForgetCertificateContexts()
    {
        // The caller holds the host map's lock.
        _certificateContexts.Clear();
    }
}
