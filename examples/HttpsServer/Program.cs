using System;
using System.Globalization;
using System.Net;
using System.Net.Sockets;
using System.Security.Authentication;
using System.Threading.Tasks;

namespace NetServer.Examples.Https;

/// <summary>One connection over TLS: the same cache as the HTTP example, on an HttpsSession.</summary>
internal sealed class CacheSession(CacheServer server, CacheApi cache) : HttpsSession(server)
{
    protected override void OnReceivedRequest(HttpRequest request) => SendResponseAsync(cache.Answer(request, Response));

    protected override void OnReceivedCachedRequest(HttpRequest request, byte[] content)
    {
        base.OnReceivedCachedRequest(request, content);
        PageFolder.LogStatic(request);
    }

    protected override void OnReceivedRequestError(HttpRequest request, string error) => Console.WriteLine($"Session {Id}: refused a request: {error}");

    protected override void OnError(SocketError error) => Console.WriteLine($"Session {Id} caught a socket error: {error}");
}

/// <summary>The cache on a TCP port behind TLS, with the API page (www/api) as static content.</summary>
internal sealed class CacheServer(SslContext context, IPAddress address, int port) : HttpsServer(context, address, port)
{
    private readonly CacheApi _cache = new();

    protected override SslSession CreateSession() => new CacheSession(this, _cache);

    protected override void OnHandshakeFailed(SslSession session, Exception exception) =>
        Console.WriteLine($"Handshake failed for session {session.Id}: {exception.Message}");

    protected override void OnError(SocketError error) => Console.WriteLine($"The server caught a socket error: {error}");
}

internal static class Program
{
    private const int DefaultPort = 8443;
    private const string Usage = "Usage: HttpsServer [port] [address] [--www DIR] [--certs DIR]";

    /// <summary>
    /// Usage: HttpsServer [port] [address] [--www DIR] [--certs DIR]. Defaults: port 8443 (0 lets
    /// the system pick a free one), address 127.0.0.1. The page comes from www/api and the
    /// certificate (server.pfx, issued by the test CA) from certs/, both found above the program.
    /// </summary>
    private static async Task<int> Main(string[] args)
    {
        if (CommandLine.Parse(args, Usage, switches: [], options: [PageFolder.Option, CertificateFolder.Option]) is not { } line)
            return 2;
        var port = line.Positional(0) is { } portText ? int.Parse(portText, CultureInfo.InvariantCulture) : DefaultPort;
        var address = line.Positional(1) is { } addressText ? IPAddress.Parse(addressText) : IPAddress.Loopback;
        if (PageFolder.Find(line.ValueOf(PageFolder.Option), CacheServerConsole.PageFolderName) is not { } page)
            return 1;
        using var certificates = CertificateFolder.Open(line.ValueOf(CertificateFolder.Option));
        if (certificates?.Load(CertificateFolder.ServerFile) is not { } certificate)
            return 1;
        Console.WriteLine($"Certificate {certificate.Subject} from {certificates.Location}");

        using var server = new CacheServer(new SslContext(SslProtocols.None, certificate), address, port)
        {
            OptionNoDelay = true,
            OptionReuseAddress = true,
        };
        server.AddStaticContent(page, CacheServerConsole.PagePrefix);
        return await CacheServerConsole.RunAsync(server, "HTTPS cache server", "https");
    }
}
