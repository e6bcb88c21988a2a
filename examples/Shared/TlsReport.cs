using System;
using System.Security.Authentication;

namespace NetServer.Examples;

/// <summary>How the TLS chat examples describe a handshake's outcome, on either side.</summary>
internal static class TlsReport
{
    /// <summary>For example "Tls13, TLS_AES_256_GCM_SHA384, server certificate CN=localhost".</summary>
    public static string Describe(TlsInfo tls, string peer)
    {
        var certificate = tls.RemoteCertificate is { } remote ? remote.Subject : "none";
        return $"{tls.Protocol}, {tls.CipherSuite}, {peer} certificate {certificate}";
    }

    /// <summary>
    /// The failure's message, and for a refused certificate (an <see cref="AuthenticationException"/>,
    /// whose message names only the validation callback) what the certificate should have been.
    /// </summary>
    public static string DescribeFailure(Exception exception, string? expectedCertificate) =>
        exception is AuthenticationException && expectedCertificate is not null
            ? $"{exception.Message} Expected: {expectedCertificate}."
            : exception.Message;
}
