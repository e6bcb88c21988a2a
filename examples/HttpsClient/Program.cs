using System;
using System.Globalization;
using System.Threading.Tasks;

namespace NetServer.Examples.HttpsCacheClient;

internal static class Program
{
    private const int DefaultPort = 8443;
    private const string Usage = "Usage: HttpsClient [address] [port] [--demo] [--certs DIR]";

    /// <summary>
    /// Usage: HttpsClient [address] [port] [--demo] [--certs DIR]. Defaults: 127.0.0.1, 8443 (the
    /// HttpsServer example's). The server's certificate must be issued by the test CA (certs/ca.pem)
    /// for the address given. Reads cache commands from the console, or runs the demo and exits.
    /// </summary>
    private static async Task<int> Main(string[] args)
    {
        if (CommandLine.Parse(args, Usage, switches: [CacheClientConsole.DemoSwitch], options: [CertificateFolder.Option]) is not { } line)
            return 2;
        var address = line.Positional(0) ?? "127.0.0.1";
        var port = line.Positional(1) is { } portText ? int.Parse(portText, CultureInfo.InvariantCulture) : DefaultPort;
        using var certificates = CertificateFolder.Open(line.ValueOf(CertificateFolder.Option));
        if (certificates?.Load(CertificateFolder.AuthorityFile) is not { } authority)
            return 1;

        // Trusting the test CA is all it takes: the server is checked against it and the address.
        var context = new SslContext();
        context.TrustedCertificateAuthorities.Add(authority);
        using var client = new HttpsClientEx(context, address, port);
        var console = new CacheClientConsole(client.Request, request => client.SendRequest(request, TimeSpan.FromSeconds(10)));
        return line.Has(CacheClientConsole.DemoSwitch) ? await console.RunDemoAsync() : await console.RunAsync();
    }
}
