using System;
using System.Globalization;
using System.Net;
using System.Net.Sockets;
using System.Threading.Tasks;

namespace NetServer.Examples.Http;

/// <summary>One connection: every request that is not a static file goes to the cache.</summary>
internal sealed class CacheSession(CacheServer server, CacheApi cache) : HttpSession(server)
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

/// <summary>The cache on a TCP port, with the API page (www/api) as static content.</summary>
internal sealed class CacheServer(IPAddress address, int port) : HttpServer(address, port)
{
    private readonly CacheApi _cache = new();

    protected override TcpSession CreateSession() => new CacheSession(this, _cache);

    protected override void OnError(SocketError error) => Console.WriteLine($"The server caught a socket error: {error}");
}

internal static class Program
{
    private const int DefaultPort = 8080;
    private const string Usage = "Usage: HttpServer [port] [address] [--www DIR]";

    /// <summary>
    /// Usage: HttpServer [port] [address] [--www DIR]. Defaults: port 8080 (0 lets the system pick
    /// a free one), address 127.0.0.1. The API page comes from the repository's www/api folder
    /// unless --www names another.
    /// </summary>
    private static async Task<int> Main(string[] args)
    {
        if (CommandLine.Parse(args, Usage, switches: [], options: [PageFolder.Option]) is not { } line)
            return 2;
        var port = line.Positional(0) is { } portText ? int.Parse(portText, CultureInfo.InvariantCulture) : DefaultPort;
        var address = line.Positional(1) is { } addressText ? IPAddress.Parse(addressText) : IPAddress.Loopback;
        if (PageFolder.Find(line.ValueOf(PageFolder.Option), CacheServerConsole.PageFolderName) is not { } page)
            return 1;

        using var server = new CacheServer(address, port) { OptionNoDelay = true, OptionReuseAddress = true };
        server.AddStaticContent(page, CacheServerConsole.PagePrefix);
        return await CacheServerConsole.RunAsync(server, "HTTP cache server", "http");
    }
}
