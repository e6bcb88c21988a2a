using System;
using System.Collections.Generic;
using System.IO;
using System.Net;
using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;
using Microsoft.Extensions.Options;

namespace NetServer.Hosting;

/// <summary>Checks a server's options at host start; each failure names the configuration key at fault.</summary>
internal sealed class NetServerOptionsValidator : IValidateOptions<NetServerOptions>
{
    public ValidateOptionsResult Validate(string? name, NetServerOptions options)
    {
        var section = NetServerHostingExtensions.SectionOf(name ?? Options.DefaultName);
        var failures = new List<string>();
        if (options.UnixPath is not { Length: > 0 })
        {
            if (!IPAddress.TryParse(options.Address, out _))
                failures.Add($"{section}:Address: '{options.Address}' is not an IP address.");
            if (options.Port is < 0 or > IPEndPoint.MaxPort)
                failures.Add($"{section}:Port: {options.Port} is not a port (0 to {IPEndPoint.MaxPort}).");
        }

        if (options.MaxSessions < 0)
            failures.Add($"{section}:MaxSessions: {options.MaxSessions} is negative (0 means no limit).");
        if (options.AcceptorBacklog < 0)
            failures.Add($"{section}:AcceptorBacklog: {options.AcceptorBacklog} is negative (0 keeps the default).");
        if (options.ProxyHeaderTimeout is { } proxyTimeout && (proxyTimeout <= TimeSpan.Zero || proxyTimeout.TotalMilliseconds > int.MaxValue))
            failures.Add($"{section}:ProxyHeaderTimeout: {proxyTimeout} is not a positive time span.");
        if (options.ProxyProtocol is < ProxyProtocolMode.Off or > ProxyProtocolMode.Optional)
            failures.Add($"{section}:ProxyProtocol: {options.ProxyProtocol} is not Off, Required or Optional.");
        if (options.CertificatePath is { Length: > 0 } path)
        {
            if (!File.Exists(path))
                failures.Add($"{section}:CertificatePath: file '{path}' does not exist.");
            else
            {
                try
                {
                    using var certificate = X509CertificateLoader.LoadPkcs12FromFile(path, options.CertificatePassword);
                }
                catch (CryptographicException e)
                {
                    failures.Add($"{section}:CertificatePassword: cannot open '{path}': {e.Message}");
                }
            }
        }

        return failures.Count == 0 ? ValidateOptionsResult.Success : ValidateOptionsResult.Fail(failures);
    }
}
